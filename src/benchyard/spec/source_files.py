"""Reading YAML and JSONL spec files while keeping the line of every value."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Located:
    """A parsed document and a way to find the line of any path inside it."""

    data: Any
    node: yaml.Node | None
    line: int
    duplicates: tuple[DuplicateKey, ...] = ()
    """Keys given twice in one mapping of the whole document (only on the document itself)."""

    def line_of(self, path: tuple[str | int, ...]) -> int:
        """The line of the deepest node along `path`: a list item's first line, a mapping entry's
        key (where its name is written, even when the value starts below); for a missing key,
        its parent's line."""
        node, line = self.node, self.line
        for part in path:
            found = _entry(node, part)
            if found is None:
                break
            key, node = found
            line = (key or node).start_mark.line + 1
        return line

    def item(self, index: int) -> Located:
        node = _child(self.node, index)
        line = node.start_mark.line + 1 if node is not None else self.line
        return Located(self.data[index], node, line)

    def key(self, name: str) -> Located:
        node = _child(self.node, name)
        line = node.start_mark.line + 1 if node is not None else self.line
        return Located(self.data[name], node, line)


def _child(node: yaml.Node | None, part: str | int) -> yaml.Node | None:
    found = _entry(node, part)
    return found[1] if found is not None else None


def _entry(node: yaml.Node | None, part: str | int) -> tuple[yaml.Node | None, yaml.Node] | None:
    """The (key node, value node) at `part` of a mapping, or (None, item) of a sequence."""
    if (
        isinstance(node, yaml.SequenceNode)
        and isinstance(part, int)
        and 0 <= part < len(node.value)
    ):
        return None, node.value[part]
    if isinstance(node, yaml.MappingNode):
        # The last of duplicate keys, as that is the value the document holds.
        for key_node, value_node in reversed(node.value):
            if key_node.value == str(part):
                return key_node, value_node
    return None


@dataclass(frozen=True)
class DuplicateKey:
    path: tuple[str | int, ...]
    line: int
    first_line: int


def duplicate_keys(node: yaml.Node | None) -> list[DuplicateKey]:
    """Keys given twice in one mapping (YAML keeps the last silently, hiding typos and pastes)."""
    found: list[DuplicateKey] = []
    seen: set[int] = set()  # a node reached twice through an alias is walked once

    def walk(node: yaml.Node | None, path: tuple[str | int, ...]) -> None:
        if node is None or id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                walk(item, (*path, index))
        elif isinstance(node, yaml.MappingNode):
            first: dict[str, int] = {}
            for key_node, value_node in node.value:
                key, line = str(key_node.value), key_node.start_mark.line + 1
                if isinstance(key_node, yaml.ScalarNode) and key in first and key != "<<":
                    found.append(DuplicateKey((*path, key), line, first[key]))
                first.setdefault(key, line)
                walk(value_node, (*path, key))

    walk(node, ())
    return found


class SpecSyntaxError(Exception):
    def __init__(self, line: int | None, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(message)


def read_yaml(path: Path) -> Located:
    text = path.read_text(encoding="utf-8")
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        duplicates = tuple(duplicate_keys(node))  # before constructing, which flattens merges
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as error:
        raise SpecSyntaxError(*_yaml_problem(error, text)) from None
    except yaml.YAMLError as error:
        raise SpecSyntaxError(None, f"invalid YAML: {error}") from None
    finally:
        loader.dispose()
    return Located(data, node, node.start_mark.line + 1 if node is not None else 1, duplicates)


# The parser's words for what it was reading, as a benchmark author would say them.
_CONTEXTS = {
    "block mapping": "the mapping",
    "flow mapping": "the {...} mapping",
    "block collection": "the list",
    "flow sequence": "the [...] list",
    "quoted scalar": "the quoted string",
    "plain scalar": "the value",
}


def _yaml_problem(error: yaml.MarkedYAMLError, text: str) -> tuple[int | None, str]:
    """The line and message of a YAML syntax error: the parser's complaint, its column, and
    what it was reading, and since which line (an unclosed quote or bracket points at its start)."""
    mark, context_mark = error.problem_mark, error.context_mark
    context = (error.context or "").removeprefix("while scanning ").removeprefix("while parsing ")
    what = _CONTEXTS.get(context.removeprefix("a ").removeprefix("an "))
    if mark is None:
        line = context_mark.line + 1 if context_mark is not None else None
        return line, f"invalid YAML: {error.problem or error.context}"
    if _indented_with_tab(text, mark.line):
        return mark.line + 1, "invalid YAML: a tab character in the indentation; indent with spaces"
    if "end of stream" in (error.problem or "") and what and context_mark is not None:
        return (
            context_mark.line + 1,
            f"invalid YAML: {what} that starts here (column {context_mark.column + 1}) "
            "is never closed",
        )
    message = f"invalid YAML: {error.problem} at column {mark.column + 1}"
    if "mapping values are not allowed" in (error.problem or ""):
        message += " (put quotes around a value that holds ': ')"
    elif what and context_mark is not None and context_mark.line != mark.line:
        message += f", in {what} that starts on line {context_mark.line + 1}"
    return mark.line + 1, message


def _indented_with_tab(text: str, line: int) -> bool:
    """Whether the 0-based `line` of `text` has a tab in its leading whitespace."""
    lines = text.splitlines()
    if not 0 <= line < len(lines):
        return False
    content = lines[line]
    return "\t" in content[: len(content) - len(content.lstrip(" \t"))]


def read_jsonl(path: Path) -> Iterator[Located | SpecSyntaxError]:
    """One Located per non-blank line; a line that is not JSON yields a SpecSyntaxError instead."""
    with path.open(encoding="utf-8") as lines:
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            try:
                yield Located(json.loads(text), None, number)
            except json.JSONDecodeError as error:
                yield SpecSyntaxError(number, f"invalid JSON: {error.msg} at column {error.colno}")
