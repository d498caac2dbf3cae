"""Harbor (and Terminal-Bench) tasks: the importer of task folders and the check that runs a task's
verifier in its container."""
