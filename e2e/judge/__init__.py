"""The judge layer: the registry of documented values (expectations; its content is e2e/documented/) and the judge that compares each measured value with it (measurements, measurements.json)."""
