"""The base layer: leaves every other package may import and that import nothing of e2e/ themselves (standard library only)."""
