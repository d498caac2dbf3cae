"""Reading sources: JSON Lines (optionally gzipped) and JSON arrays, record by record with the line
each starts on, fields checked with a problem that names file, line and field; and the sha256
that identifies a source in a benchmark's provenance."""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, ClassVar, cast

from benchyard.importers.base import BaseImporter, Imported, ImportedScenario, Origin, ProblemList
from benchyard.spec.hashing import content_hash
from benchyard.spec.source_files import (
    JSON_DECODER,
    MAX_LINE_BYTES,
    JsonRefused,
    NestedTooDeep,
    capped_lines,
    json_problem,
    line_too_long,
    load_json,
    nested_deeper_than,
)

MAX_SOURCE_BYTES = 512 * 1024 * 1024
"""A source larger than this (after gunzip) is refused rather than read into memory."""


@dataclass(frozen=True)
class Record:
    """One record of a source: its data, the file, the line it starts on and its position."""

    data: dict[str, Any]
    file: Path
    line: int
    index: int

    def where(self, name: str) -> str:
        """The field as problems name it: `[index].name` in a JSON array, else `name`."""
        return name


def source_sha256(source: Path) -> str:
    """`sha256:<hex>` of a source file's bytes, or the content hash of a source directory."""
    if source.is_dir():
        return content_hash(source)
    digest = hashlib.sha256()
    with source.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()


def _open(source: Path) -> BinaryIO:
    """The source's bytes, gunzipped as they are read when it ends in .gz."""
    if source.suffix == ".gz":
        return cast(BinaryIO, gzip.open(source, "rb"))
    return source.open("rb")


def _unreadable(source: Path, error: BaseException, problems: ProblemList) -> None:
    if isinstance(error, FileNotFoundError):
        problems.add(source, None, "", "no such file")
    elif isinstance(error, IsADirectoryError):
        problems.add(source, None, "", "is a directory; this format reads one file")
    else:
        problems.add(source, None, "", f"cannot be read: {error}")


def read_text(source: Path, problems: ProblemList) -> str | None:
    """A source file as text (gunzipped when it ends in .gz), or None with a problem."""
    try:
        with _open(source) as handle:
            raw = handle.read(MAX_SOURCE_BYTES + 1)
    except (OSError, EOFError, zlib.error) as error:
        _unreadable(source, error, problems)
        return None
    if len(raw) > MAX_SOURCE_BYTES:
        problems.add(source, None, "", f"larger than {MAX_SOURCE_BYTES // (1 << 20)} MiB")
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        problems.add(source, line, "", "not UTF-8 text")
        return None


def read_records(source: Path, problems: ProblemList) -> list[Record]:
    """The records of a JSON Lines file, or of a JSON array (one object per element); each record
    that is not a JSON object is a problem. JSON Lines are read a line at a time (a line over
    MAX_LINE_BYTES is a problem, never read whole), so a gzip bomb stops at MAX_SOURCE_BYTES."""
    records: list[Record] = []
    started = False  # a non-blank line was read
    try:
        with _open(source) as handle:
            total = 0
            for number, line in capped_lines(handle):
                total += MAX_LINE_BYTES if line is None else len(line) + 1
                if total > MAX_SOURCE_BYTES:
                    problems.add(source, number, "", f"over {MAX_SOURCE_BYTES >> 20} MiB")
                    return records
                if line is None:
                    started = True
                    problems.add(source, number, "", line_too_long())
                elif not started and line.lstrip().startswith(b"["):
                    break  # a JSON array: read whole below
                else:
                    started = started or bool(line.strip())
                    record = _line_record(source, number, line, len(records), problems)
                    if record is not None:
                        records.append(record)
            else:
                return records
    except (OSError, EOFError, zlib.error) as error:
        _unreadable(source, error, problems)
        return records
    text = read_text(source, problems)
    return [] if text is None else list(_array_records(source, text, problems))


def read_scenarios(
    source: Path, group: str, scenario: Callable[[Fields], dict[str, Any] | None]
) -> list[ImportedScenario]:
    """`record_scenarios` of a whole source; raise SourceInvalid listing every problem in it."""
    problems = ProblemList()
    scenarios = record_scenarios(source, group, problems, scenario)
    problems.raise_if_any()
    return scenarios


class RecordImporter(BaseImporter):
    """An importer of one file of records (JSON Lines, gzipped or not, or a JSON array), each
    record one scenario of the scenario file named after the importer: a subclass says how a
    record's fields become a scenario (`scenario`) and describes the benchmark (`describe`)."""

    version: ClassVar[str] = "1"  # the imported benchmark's version

    def describe(self, options: Any) -> str:
        raise NotImplementedError

    def scenario(self, fields: Fields, options: Any) -> dict[str, Any] | None:
        """One record's scenario, or None once the problems of its fields are added."""
        raise NotImplementedError

    def read(self, source: Path, options: Any) -> Imported:
        assert isinstance(options, self.options)
        return Imported(
            name=self.name,
            version=self.version,
            description=self.describe(options),
            scenarios=read_scenarios(source, self.name, partial(self.scenario, options=options)),
        )


def record_scenarios(
    source: Path,
    group: str,
    problems: ProblemList,
    scenario: Callable[[Fields], dict[str, Any] | None],
) -> list[ImportedScenario]:
    """One scenario per record of `source`, each from the line it starts on, all for the scenario
    file `group`: `scenario` makes its data from the record's fields, or returns None once it has
    added their problems."""
    scenarios = []
    for record in read_records(source, problems):
        data = scenario(Fields(record, problems))
        if data is not None:
            scenarios.append(ImportedScenario(data, Origin(source, record.line), group))
    return scenarios


def _line_record(
    source: Path, number: int, line: bytes, index: int, problems: ProblemList
) -> Record | None:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        problems.add(source, number, "", "not UTF-8 text")
        return None
    if not text.strip():
        return None
    try:
        data = load_json(text)
    except JsonRefused as error:
        problems.add(source, number, "", f"invalid JSON: {json_problem(error, text)}")
        return None
    if not isinstance(data, dict):
        problems.add(source, number, "", f"expected a JSON object, found {_kind(data)}")
        return None
    return Record(data, source, number, index)


def _array_records(source: Path, text: str, problems: ProblemList) -> Iterator[Record]:
    """Each element of a JSON array with the line it starts on (a compact array is one line, so
    problems also name the element's index)."""
    decoder = JSON_DECODER
    position = text.index("[") + 1
    index = 0
    while True:
        position = _skip_space(text, position)
        if position >= len(text):
            problems.add(source, text.count("\n") + 1, "", "invalid JSON: the array is not closed")
            return
        if text[position] == "]":
            return
        line = text.count("\n", 0, position) + 1
        try:
            data, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            problems.add(source, error.lineno, f"[{index}]", f"invalid JSON: {error.msg}")
            return
        except (RecursionError, NestedTooDeep):
            problems.add(source, line, f"[{index}]", "invalid JSON: nested too deep")
            return
        except JsonRefused as error:
            problems.add(source, line, f"[{index}]", f"invalid JSON: {error}")
            return
        if nested_deeper_than(data):
            problems.add(source, line, f"[{index}]", "invalid JSON: nested too deep")
            return
        if isinstance(data, dict):
            yield ArrayRecord(data, source, line, index)
        else:
            problems.add(source, line, f"[{index}]", f"expected a JSON object, found {_kind(data)}")
        index += 1
        position = _skip_space(text, end)
        if position < len(text) and text[position] == ",":
            position += 1
        elif position < len(text) and text[position] != "]":
            problems.add(
                source, text.count("\n", 0, position) + 1, "", "invalid JSON: expected ','"
            )
            return


class ArrayRecord(Record):
    def where(self, name: str) -> str:
        return f"[{self.index}].{name}" if name else f"[{self.index}]"


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "text"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__


_TYPE_WORDS: dict[type, str] = {
    str: "text",
    int: "a whole number",
    list: "a list",
    dict: "an object",
    bool: "true or false",
}


class Fields:
    """Typed access to a record's fields; a missing or mistyped field is a problem naming the
    file, line and field, and the access returns None (so reading goes on and every problem is
    listed)."""

    def __init__(self, record: Record, problems: ProblemList) -> None:
        self.record = record
        self.problems = problems
        self.ok = True

    def get(self, name: str, kind: type, *, required: bool = True, default: Any = None) -> Any:
        data = self.record.data
        if name not in data or data[name] is None:
            if required:
                self.problem(name, "required field is missing")
            return default
        value = data[name]
        if (kind is int and isinstance(value, bool)) or not isinstance(value, kind):
            expected = _TYPE_WORDS.get(kind, kind.__name__)
            self.problem(name, f"expected {expected}, found {_kind(value)}")
            return default
        return value

    def text_list(self, name: str, *, required: bool = True) -> list[str] | None:
        """A list of strings; also accepts a JSON-encoded list in a string (SWE-bench writes
        FAIL_TO_PASS so)."""
        value = self.record.data.get(name)
        if value is None:
            if required:
                self.problem(name, "required field is missing")
            return None
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                self.problem(name, "expected a list of text (or one encoded as JSON text)")
                return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self.problem(name, "expected a list of text")
            return None
        return list(value)

    def problem(self, name: str, message: str) -> None:
        self.ok = False
        self.problems.add(self.record.file, self.record.line, self.record.where(name), message)
