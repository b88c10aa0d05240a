"""The report layer: what each test attaches and writes (artifacts: allure steps, files) and the run summary (summary.md, summary.html); the pictures are in e2e/pictures/."""
