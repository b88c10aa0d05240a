"""The cluster layer: kind profiles and clusters (kind), the egress guard, the API client and manifests (kube), the workload images."""
