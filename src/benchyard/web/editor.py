"""Editing one scenario of a benchmark on disk, field by field.

Each top-level field of the scenario is shown as the YAML text of its value, exactly as written in
its file (comments included). A save parses each changed field (ruamel.yaml, for the line of a
syntax error inside it), splices the new text into the file in place of the old lines only (so the
rest of the file, its comments, order and indentation, stays byte for byte as it was; ruamel's
node positions say where each field's lines are), validates the whole benchmark with the loader
(spec/loader.py) in a copy of its directory, and writes the file only when no problem is found.
Each problem is attached to the field it names.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from benchyard.benchmarks.loader import load_benchmark
from benchyard.errors import BenchyardError
from benchyard.spec.loader import Benchmark
from benchyard.spec.problems import BenchmarkInvalid, BenchmarkNotFound, Problem

FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
LEADING_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*")
UNREMOVABLE = frozenset({"id"})


class EditRefused(BenchyardError):
    """A scenario this editor cannot change (built-in, JSONL, flow style) or a stale form."""


@dataclass(frozen=True)
class FieldText:
    name: str
    text: str  # the value's YAML, dedented, as written in the file


@dataclass(frozen=True)
class FieldProblem:
    field: str  # the top-level field it belongs to; "" for the scenario or the benchmark
    path: str  # the full field path, e.g. checks[1].value
    line: int | None
    message: str
    line_of: Literal["file", "field"] = "file"  # a line of the file, or of the field's text


@dataclass(frozen=True)
class ScenarioText:
    """Where a scenario lies in its file and the text of each of its fields."""

    file: Path
    file_sha256: str
    fields: list[FieldText]


@dataclass
class EditOutcome:
    saved: bool
    scenario_id: str
    problems: list[FieldProblem] = field(default_factory=list)


# ---- reading --------------------------------------------------------------------------------


def scenario_text(benchmark: Benchmark, scenario_id: str) -> ScenarioText:
    file = _scenario_file(benchmark, scenario_id)
    text = file.read_text(encoding="utf-8")
    span = _locate(text, scenario_id)
    lines = text.splitlines(keepends=True)
    return ScenarioText(
        file=file,
        file_sha256=_sha(text),
        fields=[FieldText(key.name, key.fragment(lines)) for key in span.keys],
    )


def _scenario_file(benchmark: Benchmark, scenario_id: str) -> Path:
    location = benchmark.locations.get(scenario_id)
    if location is None:
        raise EditRefused(f"{benchmark.name} has no scenario '{scenario_id}'")
    if location.file.suffix not in (".yaml", ".yml"):
        raise EditRefused(
            f"'{scenario_id}' is in {location.file.name}: only YAML scenario files are edited "
            "here; edit that file directly"
        )
    return location.file


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# ---- where a scenario's fields are ------------------------------------------------------------


@dataclass(frozen=True)
class KeySpan:
    """One top-level key of the scenario: lines [start, end) of the file (0-based), the column of
    its name, and the column its value's block starts at (None: the value starts on the key line)."""

    name: str
    start: int
    end: int
    column: int

    def content_end(self, lines: list[str]) -> int:
        """Where the field's own lines end: the blank lines and the comments at or left of its
        name's column that follow it belong to what comes next, and stay where they are."""
        end = self.end
        while end > self.start + 1:
            line = lines[end - 1]
            stripped = line.strip()
            indent = len(line) - len(line.lstrip(" "))
            if stripped and not (stripped.startswith("#") and indent <= self.column):
                break
            end -= 1
        return end

    def fragment(self, lines: list[str]) -> str:
        """The value's text: what follows `name:` on its line, then the lines under it."""
        head = lines[self.start][self.column :]
        rest = head.split(":", 1)[1] if ":" in head else ""
        inline = rest.strip()
        below = "".join(lines[self.start + 1 : self.content_end(lines)])
        if not inline or inline.startswith("#"):
            return textwrap.dedent(below).rstrip("\n")
        if not below.strip():
            return inline
        return inline + "\n" + textwrap.indent(textwrap.dedent(below), "  ").rstrip("\n")

    def value_column(self, lines: list[str]) -> int:
        for line in lines[self.start + 1 : self.end]:
            if line.strip() and not line.lstrip().startswith("#"):
                return len(line) - len(line.lstrip(" "))
        return self.column + 2


@dataclass(frozen=True)
class ScenarioSpan:
    start: int
    end: int
    column: int  # where the scenario's keys start
    keys: list[KeySpan]


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = True  # the loader reports them, at their line
    return yaml


def _locate(text: str, scenario_id: str) -> ScenarioSpan:
    """The lines of scenario `scenario_id` and of each of its keys, from ruamel's node marks."""
    try:
        document = _yaml().load(text)
    except YAMLError as error:
        raise EditRefused(f"the file does not parse: {_one_line(error)}") from None
    total = len(text.splitlines())
    node, start, end = _scenario_node(document, scenario_id, total)
    if node.fa.flow_style():
        raise EditRefused(f"'{scenario_id}' is written in flow style ({{...}}); edit its file")
    names = list(node.keys())
    marks = [node.lc.key(name) for name in names]
    if len({line for line, _ in marks}) != len(marks):
        raise EditRefused(f"'{scenario_id}' has several fields on one line; edit its file")
    keys = [
        KeySpan(
            str(name),
            line,
            marks[index + 1][0] if index + 1 < len(marks) else end,
            column,
        )
        for index, (name, (line, column)) in enumerate(zip(names, marks, strict=True))
    ]
    return ScenarioSpan(start, end, marks[0][1] if marks else 0, keys)


def _scenario_node(document: Any, scenario_id: str, total: int) -> tuple[CommentedMap, int, int]:
    """The scenario's mapping and its lines [start, end) in a file holding a list of scenarios,
    a mapping with a `scenarios` list, or one scenario."""
    end = total
    items = document
    if isinstance(document, CommentedMap) and isinstance(document.get("scenarios"), CommentedSeq):
        keys = list(document.keys())
        position = keys.index("scenarios")
        if position + 1 < len(keys):
            end = document.lc.key(keys[position + 1])[0]
        items = document["scenarios"]
    if isinstance(items, CommentedSeq):
        for index, item in enumerate(items):
            if isinstance(item, CommentedMap) and str(item.get("id")) == scenario_id:
                start = items.lc.item(index)[0]
                stop = items.lc.item(index + 1)[0] if index + 1 < len(items) else end
                return item, start, stop
    elif isinstance(items, CommentedMap) and str(items.get("id")) == scenario_id:
        return items, 0, end
    raise EditRefused(f"scenario '{scenario_id}' is not in this file any more; reload")


# ---- saving ---------------------------------------------------------------------------------


def save_scenario(
    benchmark: Benchmark,
    scenario_id: str,
    edits: dict[str, str],
    *,
    file_sha256: str,
    new_field: tuple[str, str] | None = None,
) -> EditOutcome:
    """Apply the changed fields (`edits`: name -> value text; an empty text removes the field) and
    an added one, validate the benchmark with them, and write the file if it holds no problem."""
    file = _scenario_file(benchmark, scenario_id)
    original = file.read_text(encoding="utf-8")
    if _sha(original) != file_sha256:
        raise EditRefused(f"{file.name} changed on disk since this form was opened; reload it")
    problems = _fragment_problems(edits, new_field)
    if problems:
        return EditOutcome(False, scenario_id, problems)
    changed = _spliced(original, scenario_id, edits, new_field)
    new_id = _new_id(edits) or scenario_id
    if changed == original:
        return EditOutcome(True, new_id)
    problems = _benchmark_problems(benchmark, file, changed, new_id)
    if problems:
        return EditOutcome(False, scenario_id, problems)
    _write(file, changed)
    return EditOutcome(True, new_id)


def _fragment_problems(
    edits: dict[str, str], new_field: tuple[str, str] | None
) -> list[FieldProblem]:
    """Syntax errors inside each field's text, at their line in that text."""
    problems = []
    texts = dict(edits)
    if new_field is not None:
        name, text = new_field
        if not FIELD_NAME.match(name):
            problems.append(
                FieldProblem(name, name, None, "a field name is letters, digits and '_'")
            )
        texts[name] = text
    for name, text in texts.items():
        if not text.strip():
            if name in UNREMOVABLE:
                problems.append(FieldProblem(name, name, None, "this field cannot be removed"))
            continue
        try:
            _yaml().load(text)
        except MarkedYAMLError as error:
            mark = error.problem_mark or error.context_mark
            line = mark.line + 1 if mark is not None else None
            problems.append(FieldProblem(name, name, line, _one_line(error), line_of="field"))
        except YAMLError as error:
            problems.append(FieldProblem(name, name, None, _one_line(error)))
    return problems


def _one_line(error: Exception) -> str:
    problem = getattr(error, "problem", None)
    context = getattr(error, "context", None)
    words = " ".join(str(part) for part in (context, problem) if part) or str(error)
    return " ".join(words.split())


def _new_id(edits: dict[str, str]) -> str | None:
    text = edits.get("id")
    if text is None or not text.strip():
        return None
    value = _yaml().load(text)
    return None if value is None else str(value)


def _spliced(
    original: str, scenario_id: str, edits: dict[str, str], new_field: tuple[str, str] | None
) -> str:
    """The file with each changed field's lines replaced, removed fields' lines dropped, and a new
    field after the last one; every other line as it was."""
    span = _locate(original, scenario_id)
    lines = original.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    replacements: dict[int, tuple[int, list[str]]] = {}
    for key in span.keys:
        text = edits.get(key.name)
        if text is None or _same(text, key.fragment(lines)):
            continue
        if not text.strip() and key is span.keys[0]:
            raise EditRefused(f"'{key.name}' is the scenario's first field and cannot be removed")
        replacements[key.start] = (key.end, _key_lines(key, text, lines))
    if new_field is not None and new_field[1].strip():
        name, text = new_field
        if name in {key.name for key in span.keys}:
            raise EditRefused(f"the scenario already has a field '{name}'")
        last = span.keys[-1]
        end = last.content_end(lines)
        added = _written(name, text, span.column, span.column + 2, prefix=" " * span.column)
        if last.start in replacements:  # the last field changed too: add after its new lines
            stop, new_lines = replacements[last.start]
            content = len(new_lines) - (last.end - end)
            replacements[last.start] = (stop, [*new_lines[:content], *added, *new_lines[content:]])
        else:
            replacements[last.start] = (
                last.end,
                [*lines[last.start : end], *added, *lines[end : last.end]],
            )
    out: list[str] = []
    index = 0
    while index < len(lines):
        if index in replacements:
            stop, new_lines = replacements[index]
            out.extend(new_lines)
            index = stop
        else:
            out.append(lines[index])
            index += 1
    return "".join(out)


def _same(text: str, fragment: str) -> bool:
    return _normal(text) == _normal(fragment)


def _normal(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").strip("\n").split("\n"))


def _key_lines(key: KeySpan, text: str, lines: list[str]) -> list[str]:
    """The new lines of a field, or none when it is removed; the blank lines and comments after it
    (the gap before the next field or scenario) are kept."""
    tail = lines[key.content_end(lines) : key.end]
    if not text.strip():
        return tail
    prefix = lines[key.start][: key.column]
    return [*_written(key.name, text, key.column, key.value_column(lines), prefix), *tail]


def _written(name: str, text: str, column: int, value_column: int, prefix: str) -> list[str]:
    """`name: value` as lines of the file: an inline value stays on the key's line (its next lines
    indented under the key), a block mapping or list goes below it at `value_column`."""
    body = textwrap.dedent(text.replace("\r\n", "\n")).strip("\n").split("\n")
    if _is_block_collection(text):
        indent = " " * max(value_column, column)
        return [f"{prefix}{name}:\n", *(_line(indent, line) for line in body)]
    first, rest = body[0], textwrap.dedent("\n".join(body[1:])).split("\n") if body[1:] else []
    indent = " " * (column + 2)
    return [f"{prefix}{name}: {first}\n", *(_line(indent, line) for line in rest)]


def _line(indent: str, line: str) -> str:
    return f"{indent}{line}\n" if line.strip() else "\n"


def _is_block_collection(text: str) -> bool:
    """Whether the text is a block mapping or list (it must go below its key)."""
    value = _yaml().load(text)
    if not isinstance(value, CommentedMap | CommentedSeq):
        return False
    first = next(
        line.strip()
        for line in text.split("\n")
        if line.strip() and not line.strip().startswith("#")
    )
    return not first.startswith(("{", "["))


# ---- validating with the loader ---------------------------------------------------------------


def _benchmark_problems(
    benchmark: Benchmark, file: Path, text: str, scenario_id: str
) -> list[FieldProblem]:
    """The loader's problems with `text` in place of `file`, in a copy of the benchmark; those in
    this scenario's lines (or naming no line) go to the field they name."""
    relative = file.relative_to(benchmark.root)
    with tempfile.TemporaryDirectory(prefix="benchyard-edit-") as scratch:
        copy = Path(scratch) / benchmark.root.name
        shutil.copytree(benchmark.root, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        (copy / relative).write_text(text, encoding="utf-8")
        try:
            load_benchmark(copy)
        except BenchmarkInvalid as invalid:
            return _attached(invalid.problems, relative.as_posix(), text, scenario_id)
        except BenchmarkNotFound as missing:
            return [FieldProblem("", "", None, str(missing))]
    return []


def _attached(
    problems: list[Problem], relative: str, text: str, scenario_id: str
) -> list[FieldProblem]:
    try:
        span: ScenarioSpan | None = _locate(text, scenario_id)
    except EditRefused:
        span = None
    attached = []
    for problem in problems:
        in_span = problem.line is None or span is None or span.start < problem.line <= span.end
        about_our_id = problem.field == "id" and f"'{scenario_id}'" in problem.message
        ours = problem.file == relative and (in_span or about_our_id)
        leading = LEADING_KEY.match(problem.field) if ours else None
        name = leading.group(0) if leading else ""
        where = "" if ours else f"{problem.file}:{problem.line or ''} "
        attached.append(
            FieldProblem(name, problem.field, problem.line, f"{where}{problem.message}".strip())
        )
    return attached


def _write(file: Path, text: str) -> None:
    """Replace the file in one step, keeping its permissions."""
    mode = file.stat().st_mode & 0o777
    descriptor, temporary = tempfile.mkstemp(prefix=f".{file.name}.", dir=file.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, file)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
