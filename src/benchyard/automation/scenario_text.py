"""Scenario files changed as text, so that a proposal's diff shows only what it changes.

A changed scenario's lines are replaced by the new scenario written as YAML at the same
indentation (or, in a JSONL file, its line by the new JSON); a removed one's lines are dropped; a
new one is added after the last scenario of its file. Every other line of the file (comments,
order, other scenarios) stays byte for byte as it was. Where the lines of a scenario are comes
from ruamel.yaml's node positions, as in the web UI's editor."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from benchyard.errors import BenchyardError

YAML_SUFFIXES = (".yaml", ".yml")


class TextRefused(BenchyardError):
    """A scenario file whose layout this module cannot change line by line."""


class _Dumper(yaml.SafeDumper):
    """Block style; lists indented under their key; text with line breaks as literal blocks."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def scenario_yaml(draft: dict[str, Any], column: int = 0) -> str:
    """The scenario as one item of a YAML list, its dash at `column`."""
    text = yaml.dump(
        [draft],
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )
    pad = " " * column
    return "".join(pad + line if line.strip() else line for line in text.splitlines(keepends=True))


def mapping_yaml(data: dict[str, Any]) -> str:
    """A mapping (benchmark.yaml) in the same style."""
    return yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )


def scenario_json(draft: dict[str, Any]) -> str:
    return json.dumps(draft, ensure_ascii=False) + "\n"


def new_file(drafts: list[dict[str, Any]], suffix: str) -> str:
    if suffix == ".jsonl":
        return "".join(scenario_json(draft) for draft in drafts)
    return "\n".join(scenario_yaml(draft) for draft in drafts)


@dataclass(frozen=True)
class _Span:
    start: int  # first line of the item (0-based)
    end: int  # one past its last line of content
    column: int  # the column of its dash ("- id: ...")


@dataclass(frozen=True)
class _Layout:
    kind: str  # list | mapping-list | single
    items: dict[str, _Span]
    append_at: int  # the line after the last scenario's content
    column: int  # the dash column of new items


def replace(text: str, suffix: str, changes: dict[str, dict[str, Any] | None]) -> str:
    """`text` with each scenario id in `changes` replaced by its new draft, or removed (None)."""
    if suffix == ".jsonl":
        return _replace_jsonl(text, changes)
    layout = _layout(text)
    lines = _lines(text)
    replacements: dict[int, tuple[int, list[str]]] = {}
    for scenario_id, draft in changes.items():
        span = layout.items.get(scenario_id)
        if span is None:
            raise TextRefused(f"scenario '{scenario_id}' is not in this file")
        if layout.kind == "single":
            new = [] if draft is None else _single(draft)
        else:
            new = [] if draft is None else _split(scenario_yaml(draft, span.column))
        replacements[span.start] = (span.end, new)
    return "".join(_spliced(lines, replacements))


def append(text: str, suffix: str, drafts: list[dict[str, Any]]) -> str:
    """`text` with the drafts added after its last scenario."""
    if not drafts:
        return text
    if suffix == ".jsonl":
        base = text if not text or text.endswith("\n") else text + "\n"
        return base + "".join(scenario_json(draft) for draft in drafts)
    layout = _layout(text)
    if layout.kind == "single":
        raise TextRefused("this file holds a single scenario; new scenarios go to another file")
    lines = _lines(text)
    added: list[str] = []
    for draft in drafts:
        added += ["\n", *_split(scenario_yaml(draft, layout.column))]
    at = layout.append_at
    return "".join([*lines[:at], *added, *lines[at:]])


def scenario_ids(text: str, suffix: str) -> list[str]:
    """The ids of the scenarios in a file, in order (for choosing where new ones go)."""
    if suffix == ".jsonl":
        found = []
        for line in text.splitlines():
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict) and isinstance(data.get("id"), str):
                found.append(data["id"])
        return found
    try:
        return list(_layout(text).items)
    except TextRefused:
        return []


def can_append(text: str, suffix: str) -> bool:
    if suffix == ".jsonl":
        return True
    try:
        return _layout(text).kind != "single"
    except TextRefused:
        return False


# ---- where the scenarios of a YAML file are ---------------------------------------------------


def _layout(text: str) -> _Layout:
    try:
        loader = YAML(typ="rt")
        loader.allow_duplicate_keys = True
        document = loader.load(text)
    except YAMLError as error:
        raise TextRefused(f"the file does not parse: {' '.join(str(error).split())}") from None
    lines = _lines(text)
    total = len(lines)
    end = total
    kind = "list"
    items = document
    if isinstance(document, CommentedMap) and isinstance(document.get("scenarios"), CommentedSeq):
        kind = "mapping-list"
        keys = list(document.keys())
        position = keys.index("scenarios")
        if position + 1 < len(keys):
            end = document.lc.key(keys[position + 1])[0]
        items = document["scenarios"]
    if isinstance(items, CommentedMap):
        if items.fa.flow_style():
            raise TextRefused("the scenario is written in flow style ({...})")
        scenario_id = str(items.get("id"))
        first = items.lc.key(next(iter(items)))[0] if items else 0
        stop = _content_end(lines, first, total, 0)
        return _Layout("single", {scenario_id: _Span(first, stop, 0)}, stop, 0)
    if not isinstance(items, CommentedSeq):
        raise TextRefused("the file holds neither a list of scenarios nor a scenario")
    if items.fa.flow_style():
        raise TextRefused("the list of scenarios is written in flow style ([...])")
    spans: dict[str, _Span] = {}
    column = 0
    append_at = end
    positions = [items.lc.item(index) for index in range(len(items))]
    for index, item in enumerate(items):
        line, value_column = positions[index]
        dash = lines[line].rfind("-", 0, value_column) if line < total else -1
        if dash < 0:
            raise TextRefused("a scenario of this file does not start its own line")
        column = dash
        stop = positions[index + 1][0] if index + 1 < len(items) else end
        stop = _content_end(lines, line, stop, dash)
        if isinstance(item, CommentedMap):
            if item.fa.flow_style():
                raise TextRefused(f"scenario '{item.get('id')}' is written in flow style ({{...}})")
            spans.setdefault(str(item.get("id")), _Span(line, stop, dash))
        append_at = stop
    if not len(items):
        column = 2 if kind == "mapping-list" else 0
    return _Layout(kind, spans, append_at, column)


def _content_end(lines: list[str], start: int, end: int, column: int) -> int:
    """Where an item's own lines end: blank lines and comments at or left of its column that
    follow it belong to what comes next."""
    while end > start + 1:
        line = lines[end - 1]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip(" "))
        if stripped and not (stripped.startswith("#") and indent <= column):
            break
        end -= 1
    return end


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return lines


def _split(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _single(draft: dict[str, Any]) -> list[str]:
    """A file's one scenario as a mapping (the list item's lines, dedented by its dash)."""
    item = _split(scenario_yaml(draft))
    return [line[2:] if line.startswith(("- ", "  ")) else line for line in item]


def _spliced(lines: list[str], replacements: dict[int, tuple[int, list[str]]]) -> list[str]:
    out: list[str] = []
    index = 0
    while index < len(lines):
        if index in replacements:
            stop, new = replacements[index]
            out.extend(new)
            index = stop
        else:
            out.append(lines[index])
            index += 1
    return out


def _replace_jsonl(text: str, changes: dict[str, dict[str, Any] | None]) -> str:
    out = []
    seen = set()
    for line in text.splitlines(keepends=True):
        try:
            data = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        scenario_id = data.get("id") if isinstance(data, dict) else None
        if isinstance(scenario_id, str) and scenario_id in changes and scenario_id not in seen:
            seen.add(scenario_id)
            draft = changes[scenario_id]
            if draft is not None:
                out.append(scenario_json(draft))
            continue
        out.append(line if line.endswith("\n") else line + "\n")
    missing = set(changes) - seen
    if missing:
        raise TextRefused(f"scenario '{sorted(missing)[0]}' is not in this file")
    return "".join(out)
