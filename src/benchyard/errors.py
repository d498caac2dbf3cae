"""The base of every expected failure: its message is meant for the user, without a traceback."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class BenchyardError(Exception):
    """An expected failure (bad input, unknown run, unusable store, ...)."""


def field_problems(error: ValidationError) -> str:
    """A pydantic ValidationError as one line: `field.path: message; ...`."""
    return "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or 'config'}: {item['msg']}"
        for item in error.errors()
    )
