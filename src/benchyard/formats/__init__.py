"""Checks that reproduce the official evaluators of published benchmarks (see importers/ and
docs/importers.md). Each is a built-in check listed in checks/registry.py with its own module,
imported when a benchmark uses it: the package imports none of them."""
