"""The base of every expected failure: its message is meant for the user, without a traceback."""


class BenchyardError(Exception):
    """An expected failure (bad input, unknown run, unusable store, ...)."""
