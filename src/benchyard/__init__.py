"""benchyard: run benchmarks against AI agents and LLM endpoints, and compare the runs."""

__version__ = "0.1.0"
__all__ = ["__version__"]
