"""GSM8K: the importer of its problems and the official answer check (the number after `####`)."""
