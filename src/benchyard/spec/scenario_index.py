"""A benchmark's scenarios read lazily: the loader validates every scenario once, as it reads the
files, and keeps of each only where it is written (a JSONL line's file and byte offset, a hash of
the line) and the few fields that choose scenarios (id, category, tags, difficulty); a scenario is
read again from its line, and validated again, when it is asked for. So a run's memory does not
grow with its benchmark's scenarios (issue 27). A scenario of a YAML file is held as it was read.

A JSONL line that no longer holds what was read at the start (the file was changed while the
benchmark was in use) raises ScenarioFileChanged rather than grading against another scenario."""

from __future__ import annotations

import hashlib
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, overload

from benchyard.errors import BenchyardError
from benchyard.spec.models import DEFER_TURN_CHECKS, Scenario
from benchyard.spec.source_files import MAX_LINE_BYTES, load_json

CACHED = 64  # scenarios read from their lines kept, most recent first: a run's lanes re-read few
HELD = -1  # the offset of a scenario held as read (a YAML file's)


@dataclass(frozen=True, slots=True)
class Location:
    file: Path
    line: int
    base: Path | None = None  # where fixture sources resolve, when not the file's directory


class ScenarioFileChanged(BenchyardError):
    """A scenario file changed after its benchmark was read."""


class ScenarioFields(NamedTuple):
    """What chooses a scenario (spec/filters.py, spec/profiles.py), without the scenario."""

    id: str
    category: str
    tags: tuple[str, ...]
    difficulty: str


def line_digest(raw: bytes) -> int:
    """A 64-bit hash of a line's bytes: what the line held when its benchmark was read."""
    return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "little")


@dataclass
class _Codes:
    """Distinct values each kept once, a position's value as its code (a category is shared by
    thousands of scenarios)."""

    values: list[object] = field(default_factory=list)
    codes: dict[object, int] = field(default_factory=dict)

    def code(self, value: object) -> int:
        found = self.codes.get(value)
        if found is None:
            found = self.codes[value] = len(self.values)
            self.values.append(value)
        return found


class _Table:
    """Every scenario of a benchmark, in order, as the columns the index reads."""

    def __init__(self) -> None:
        self.files: list[Path] = []
        self.file_codes: dict[Path, int] = {}
        self.file = array("l")
        self.offset = array("q")
        self.line = array("l")
        self.digest = array("Q")
        self.ids: list[str] = []
        self.positions: dict[str, int] = {}  # an id's first position
        self.category, self.difficulty, self.tags = array("l"), array("l"), array("l")
        self.values = _Codes()
        self.held: dict[int, Scenario] = {}
        self.cache: OrderedDict[int, Scenario] = OrderedDict()

    def add(self, scenario: Scenario, file: Path, line: int, at: tuple[int, bytes] | None) -> None:
        """One more scenario, read from `file` at `line`; `at`: its line's offset and bytes in a
        JSONL file, None to hold it as read."""
        position = len(self.ids)
        if file not in self.file_codes:
            self.file_codes[file] = len(self.files)
            self.files.append(file)
        self.file.append(self.file_codes[file])
        self.line.append(line)
        if at is None:
            self.held[position] = scenario
            self.offset.append(HELD)
            self.digest.append(0)
        else:
            self.offset.append(at[0])
            self.digest.append(line_digest(at[1]))
        self.ids.append(scenario.id)
        self.positions.setdefault(scenario.id, position)
        self.category.append(self.values.code(scenario.category))
        self.difficulty.append(self.values.code(scenario.difficulty))
        self.tags.append(self.values.code(tuple(scenario.tags)))

    def fields(self, position: int) -> ScenarioFields:
        values = self.values.values
        return ScenarioFields(
            self.ids[position],
            str(values[self.category[position]]),
            values[self.tags[position]],  # type: ignore[arg-type]  # coded from a tuple of str
            str(values[self.difficulty[position]]),
        )

    def scenario(self, position: int) -> Scenario:
        held = self.held.get(position)
        if held is not None:
            return held
        cached = self.cache.get(position)
        if cached is not None:
            self.cache.move_to_end(position)
            return cached
        scenario = self._read(position)
        self.cache[position] = scenario
        if len(self.cache) > CACHED:
            self.cache.popitem(last=False)
        return scenario

    def _read(self, position: int) -> Scenario:
        """The scenario read again from its line, which must hold what it held at the start."""
        file = self.files[self.file[position]]
        try:
            with file.open("rb") as handle:
                handle.seek(self.offset[position])
                raw = handle.readline(MAX_LINE_BYTES + 1).rstrip(b"\r\n")
        except OSError as error:
            raise self._changed(position, f"cannot be read again ({error.strerror})") from None
        if line_digest(raw) != self.digest[position]:
            raise self._changed(position, "no longer holds the scenario read at the start")
        return Scenario.model_validate(load_json(raw), context={DEFER_TURN_CHECKS: True})

    def _changed(self, position: int, why: str) -> ScenarioFileChanged:
        file, line = self.files[self.file[position]], self.line[position]
        return ScenarioFileChanged(
            f"{file}:{line} (scenario '{self.ids[position]}') {why}: the benchmark's files "
            "changed after it was read; start again with the files left unchanged"
        )


class ScenarioIndex(Sequence[Scenario]):
    """A read-only sequence of a benchmark's scenarios (or of a choice of them), each read from
    its file when asked for; what chooses scenarios is read without reading them."""

    __slots__ = ("_positions", "_table")

    def __init__(self, table: _Table, positions: Sequence[int]) -> None:
        self._table = table
        self._positions = positions

    def __len__(self) -> int:
        return len(self._positions)

    @overload
    def __getitem__(self, index: int) -> Scenario: ...
    @overload
    def __getitem__(self, index: slice) -> ScenarioIndex: ...
    def __getitem__(self, index: int | slice) -> Scenario | ScenarioIndex:
        if isinstance(index, slice):
            return ScenarioIndex(self._table, self._positions[index])
        return self._table.scenario(self._positions[index])

    def __iter__(self) -> Iterator[Scenario]:
        for position in self._positions:
            yield self._table.scenario(position)

    def __repr__(self) -> str:
        return f"<{len(self)} scenarios read lazily>"

    def fields(self) -> Iterator[ScenarioFields]:
        for position in self._positions:
            yield self._table.fields(position)

    def where(self, keep: Callable[[ScenarioFields], bool]) -> ScenarioIndex:
        """Those whose fields `keep` keeps, in order."""
        kept = array("l", (p for p in self._positions if keep(self._table.fields(p))))
        return ScenarioIndex(self._table, kept)

    def by_id(self) -> Mapping[str, Scenario]:
        return _ById(self)

    def locations(self) -> Mapping[str, Location]:
        return _Locations(self._table)

    def position(self, scenario_id: str) -> int | None:
        """The position of the scenario with this id in the whole benchmark, if it has one."""
        return self._table.positions.get(scenario_id)


class _ById(Mapping[str, Scenario]):
    """The scenarios of an index by id, read when asked for."""

    def __init__(self, index: ScenarioIndex) -> None:
        table = index._table
        whole = isinstance(index._positions, range) and len(index) == len(table.ids)
        self._table = table
        self._kept = None if whole else set(index._positions)

    def _position(self, scenario_id: str) -> int | None:
        found = self._table.positions.get(scenario_id)
        if found is None or (self._kept is not None and found not in self._kept):
            return None
        return found

    def __getitem__(self, scenario_id: str) -> Scenario:
        position = self._position(scenario_id)
        if position is None:
            raise KeyError(scenario_id)
        return self._table.scenario(position)

    def __contains__(self, scenario_id: object) -> bool:
        return isinstance(scenario_id, str) and self._position(scenario_id) is not None

    def __iter__(self) -> Iterator[str]:
        return (sid for sid in self._table.positions if sid in self)

    def __len__(self) -> int:
        return len(self._table.positions) if self._kept is None else len(self._kept)


class _Locations(Mapping[str, Location]):
    """Where each scenario of a benchmark is written, by id (the first, for an id given twice)."""

    def __init__(self, table: _Table) -> None:
        self._table = table

    def __getitem__(self, scenario_id: str) -> Location:
        position = self._table.positions[scenario_id]
        file = self._table.files[self._table.file[position]]
        return Location(file, self._table.line[position])

    def __iter__(self) -> Iterator[str]:
        return iter(self._table.positions)

    def __len__(self) -> int:
        return len(self._table.positions)


class IndexBuilder:
    """Collects the scenarios the loader validated into a ScenarioIndex."""

    def __init__(self) -> None:
        self._table = _Table()

    def add(self, scenario: Scenario, file: Path, line: int, at: tuple[int, bytes] | None) -> None:
        self._table.add(scenario, file, line, at)

    def __len__(self) -> int:
        return len(self._table.ids)

    def locations(self) -> Mapping[str, Location]:
        return _Locations(self._table)

    def index(self) -> ScenarioIndex:
        return ScenarioIndex(self._table, range(len(self._table.ids)))


def narrowed(
    scenarios: Sequence[Scenario], keep: Callable[[ScenarioFields | Scenario], bool]
) -> Sequence[Scenario]:
    """The scenarios `keep` keeps (given each one's fields, or the scenario itself), in order;
    of a ScenarioIndex, without reading them."""
    if isinstance(scenarios, ScenarioIndex):
        return scenarios.where(keep)
    return [scenario for scenario in scenarios if keep(scenario)]


def fields_of(scenarios: Iterable[Scenario]) -> Iterator[ScenarioFields | Scenario]:
    """What chooses each scenario: of a ScenarioIndex its fields, of others the scenarios."""
    if isinstance(scenarios, ScenarioIndex):
        return scenarios.fields()
    return iter(scenarios)


def scenarios_by_id(scenarios: Sequence[Scenario]) -> Mapping[str, Scenario]:
    """The scenarios by id (the first, for an id given twice); of a ScenarioIndex, read when
    asked for."""
    if isinstance(scenarios, ScenarioIndex):
        return scenarios.by_id()
    by_id: dict[str, Scenario] = {}
    for scenario in scenarios:
        by_id.setdefault(scenario.id, scenario)
    return by_id
