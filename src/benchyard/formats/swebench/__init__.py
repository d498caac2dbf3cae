"""SWE-bench: the importer of its instances, the evaluation of a patch as the harness does it
(`evaluation.py`) and the check that runs it."""
