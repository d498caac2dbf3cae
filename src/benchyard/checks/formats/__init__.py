"""Checks that reproduce the official evaluators of published benchmarks (see importers/ and
docs/importers.md); registered with the built-in checks."""

from benchyard.checks.formats import bfcl, gsm8k, harbor, humaneval, ifeval, mbpp, swebench

__all__ = ["bfcl", "gsm8k", "harbor", "humaneval", "ifeval", "mbpp", "swebench"]
