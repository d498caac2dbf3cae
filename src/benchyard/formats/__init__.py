"""Published benchmarks, one folder each (docs/importers.md): its importer (`importer.py`, listed
in importers/registry.py), its official check (`check.py`, listed in checks/registry.py, imported
when a benchmark uses it) and what else it alone needs. What several share: the official
one-program evaluations through code_exec's two processes (`program.py`: HumanEval, MBPP), task
images and one-off task containers (`containers.py`: SWE-bench, Harbor). The package imports none
of them."""
