"""Loading a benchmark: spec/ reads it and validates its shape, against the check types, the
simulated environments and the published formats registered above it (`loader.py`)."""
