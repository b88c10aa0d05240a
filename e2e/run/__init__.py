"""The run layer: what a test works with (scenario), the one polling helper (waiting), live progress of waits (progress) and case-ID selection (selection)."""
