"""HumanEval: the importer of its JSONL problems and the official check, the problem's tests run
against the completion (formats/program.py)."""
