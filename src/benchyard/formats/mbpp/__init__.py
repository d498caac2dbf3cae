"""MBPP: the importer of its problems (sanitized and full) and the official check, the asserts
run against the program (formats/program.py)."""
