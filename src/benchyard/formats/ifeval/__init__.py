"""IFEval: the importer of its prompts and the official check of its 25 instruction types, with
the text tools they use (`text.py`) and Punkt's English model (`punkt_english/`)."""
