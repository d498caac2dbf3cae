"""Problems found in benchmark files, each pointing at a file, a line and a field."""

from __future__ import annotations

from dataclasses import dataclass

from benchyard.errors import BenchyardError


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


class BenchmarkInvalid(BenchyardError):
    """The benchmark has problems; every one of them is listed, not just the first."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.file, p.line or 0, p.field))
        super().__init__("\n".join(str(problem) for problem in self.problems))


class BenchmarkNotFound(BenchyardError):
    """No benchmark by that name or path."""


def format_field(path: tuple[str | int, ...]) -> str:
    """('checks', 1, 'type') -> 'checks[1].type'."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text
