module pod-lifecycle-e2e/lifecycle-app

go 1.22
