"""ITBench SRE scenarios: the importer into simulated SRE incidents (graded by `root_cause`,
sre/check.py)."""
