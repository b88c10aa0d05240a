"""The run layer: what a test works with (scenario), live progress of waits (progress) and case-ID selection (selection)."""
