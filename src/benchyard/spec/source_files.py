"""Reading YAML and JSONL spec files while keeping the line of every value."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import yaml

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_DEPTH = 100
"""How deeply lists and mappings may nest in a spec file (its top-level value is level 1)."""
MAX_EXPANDED_VALUES = 1_000_000
"""How many values aliases (`*name`) may expand a YAML document to, or ALIAS_GROWTH times the
values it writes out when that is more: a "billion laughs" file never reaches the harness."""
ALIAS_GROWTH = 10
MAX_NUMBER_CHARS = 1000
"""The longest number a JSON value may write out: Python refuses integers over 4,300 digits with
a ValueError, and a float literal past 1e308 would be infinite."""
MAX_LINE_BYTES = 16 * 1024 * 1024
"""The longest line a JSON Lines file may hold: a longer one is a problem, never read whole."""
SHOWN_PATH_PARTS = 6
"""A problem deep inside a value names its field down to this many keys and indexes."""

FieldPath = tuple[str | int, ...]


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
    """A file, or a line of one, that cannot be read as data; `path` names the field where known."""

    def __init__(self, line: int | None, message: str, path: FieldPath = ()) -> None:
        self.line = line
        self.message = message
        self.path = path
        super().__init__(message)


def read_yaml(path: Path) -> Located:
    text = path.read_text(encoding="utf-8")
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            check_shape(node)  # before anything walks or builds the document
        duplicates = tuple(duplicate_keys(node))  # before constructing, which flattens merges
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as error:
        raise SpecSyntaxError(*_yaml_problem(error, text)) from None
    except yaml.YAMLError as error:
        raise SpecSyntaxError(None, f"invalid YAML: {error}") from None
    except RecursionError:  # PyYAML's own composer recurses (libyaml stops at 1000 levels)
        raise SpecSyntaxError(_too_deep_yaml_line(text), f"invalid YAML: {_TOO_DEEP}") from None
    finally:
        loader.dispose()
    return Located(data, node, node.start_mark.line + 1 if node is not None else 1, duplicates)


# ---- the shape of a YAML document: nesting, and what its aliases expand to -------------------

_TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"


@dataclass(frozen=True)
class _Shape:
    values: int  # every value, each alias counted as all that it expands to
    written: int  # every value as written (an alias is one)
    levels: int  # lists and mappings nested, through aliases


_Trail = list[tuple[str | int, int]]
"""A path into a document, with the line of each step."""


def _children(node: yaml.Node) -> list[yaml.Node]:
    """A list's items, or a mapping's keys and values in turn."""
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _part(node: yaml.Node, index: int) -> str | int:
    """The key or index that names child `index` of `node` (as `_children` lists them)."""
    if isinstance(node, yaml.MappingNode):
        key = node.value[index // 2][0]
        return str(key.value) if isinstance(key, yaml.ScalarNode) else "?"
    return index


class _Measure:
    """One pass over a document's node graph in document order, without recursion: the first time
    a list or mapping is reached is where it is written (its anchor); later ones are aliases."""

    def __init__(self, root: yaml.Node) -> None:
        self.root = root
        self.shapes: dict[int, _Shape] = {}
        self.home: dict[int, int] = {}  # a list or mapping -> the one it is written in
        self._walk()

    def _walk(self) -> None:
        shapes, home = self.shapes, self.home
        # Each frame: node, its children, the next child, values, written, deepest child levels.
        stack: list[list[Any]] = [[self.root, _children(self.root), 0, 1, 1, 0]]
        open_nodes = {id(self.root)}
        while stack:
            frame = stack[-1]
            node, children, index = frame[0], frame[1], frame[2]
            while index < len(children):
                child = children[index]
                index += 1
                if not isinstance(child, yaml.CollectionNode):
                    frame[3] += 1
                    frame[4] += 1
                    continue
                shape = shapes.get(id(child))
                if shape is not None:  # an alias of a value measured already
                    frame[3] += shape.values
                    frame[4] += 1
                    frame[5] = max(frame[5], shape.levels)
                    continue
                frame[2] = index
                if id(child) in open_nodes:
                    raise self._problem(stack, "an alias (*name) inside the value it names")
                if len(stack) >= MAX_DEPTH:
                    home[id(child)] = id(node)
                    raise self._problem(stack, _TOO_DEEP)
                home[id(child)] = id(node)
                open_nodes.add(id(child))
                stack.append([child, _children(child), 0, 1, 1, 0])
                break
            else:
                stack.pop()
                open_nodes.discard(id(node))
                shape = _Shape(frame[3], frame[4], frame[5] + 1)
                shapes[id(node)] = shape
                if stack:
                    parent = stack[-1]
                    parent[3] += shape.values
                    parent[4] += shape.written
                    parent[5] = max(parent[5], shape.levels)

    def _problem(self, stack: list[list[Any]], message: str) -> SpecSyntaxError:
        """The problem at the child the top frame stopped at, along the path of the stack."""
        trail: _Trail = []
        for frame in stack:
            node, index = frame[0], frame[2] - 1
            trail.append((_part(node, index), self.entry_line(node, index, trail)))
        return _shape_problem(trail, self.root, message)

    def shape(self, node: yaml.Node) -> _Shape:
        if isinstance(node, yaml.CollectionNode):
            return self.shapes[id(node)]
        return _Shape(1, 1, 0)

    def written_in(self, parent: yaml.Node, child: yaml.Node) -> bool:
        return self.home.get(id(child)) == id(parent)

    def entry_line(self, node: yaml.Node, index: int, trail: _Trail) -> int:
        """The line of child `index` of `node`: a mapping key's, a list item's where it is written,
        else (an alias, whose own place the node graph does not keep) its list's."""
        if isinstance(node, yaml.MappingNode):
            return _line(node.value[index // 2][0])
        child = _children(node)[index]
        if self.written_in(node, child) or not isinstance(child, yaml.CollectionNode):
            return _line(child)
        return trail[-1][1] if trail else _line(node)


def check_shape(root: yaml.Node) -> None:
    """Raise SpecSyntaxError for a document nested more than MAX_DEPTH levels deep, one that
    aliases expand past the limit, or an alias inside the value it names (a loop)."""
    if not isinstance(root, yaml.CollectionNode):
        return
    measure = _Measure(root)
    shape = measure.shape(root)
    if shape.levels > MAX_DEPTH:
        raise _shape_problem(_deepest_alias(measure), root, f"{_TOO_DEEP} through aliases (*name)")
    limit = max(MAX_EXPANDED_VALUES, ALIAS_GROWTH * shape.written)
    if shape.values > limit:
        raise _shape_problem(
            _biggest_expansion(measure),
            root,
            f"aliases (*name) expand the file to {shape.values:,} values, more than the "
            f"{limit:,} allowed; write the data out, or alias less of it",
        )


def _deepest_alias(measure: _Measure) -> _Trail:
    """The path along the deepest values down to the alias that takes them too deep."""
    node, trail = measure.root, _Trail()
    while isinstance(node, yaml.CollectionNode):
        children = _children(node)
        index = max(range(len(children)), key=lambda at: measure.shape(children[at]).levels)
        trail.append((_part(node, index), measure.entry_line(node, index, trail)))
        if not measure.written_in(node, children[index]):
            break
        node = children[index]
    return trail


def _biggest_expansion(measure: _Measure) -> _Trail:
    """The path down to the value that holds most of what aliases add to the file."""

    def growth(node: yaml.Node) -> int:
        shape = measure.shape(node)
        return shape.values - shape.written

    node, trail = measure.root, _Trail()
    while True:
        children = _children(node)
        written = [at for at, child in enumerate(children) if measure.written_in(node, child)]
        if not written:
            break
        index = max(written, key=lambda at: growth(children[at]))
        if 2 * growth(children[index]) <= growth(node):
            break
        trail.append((_part(node, index), measure.entry_line(node, index, trail)))
        node = children[index]
    return trail


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _shape_problem(trail: _Trail, root: yaml.Node, message: str) -> SpecSyntaxError:
    """The problem at the field along `trail`, named down to SHOWN_PATH_PARTS parts."""
    shown = trail[:SHOWN_PATH_PARTS]
    line = shown[-1][1] if shown else _line(root)
    return SpecSyntaxError(line, message, tuple(part for part, _ in shown))


def _too_deep_yaml_line(text: str) -> int | None:
    """The line where a document goes deeper than MAX_DEPTH, read event by event (no recursion)."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    return int(event.start_mark.line) + 1 if event.start_mark else None
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return None
    return None


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
    if "maximum nesting depth" in (error.problem or "") and mark is not None:
        # libyaml's own limit (1000 levels), well past ours
        return mark.line + 1, f"invalid YAML: {_TOO_DEEP} at column {mark.column + 1}"
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
    """One Located per non-blank line; a line that is not JSON, nests more than MAX_DEPTH levels
    deep, writes a number over MAX_NUMBER_CHARS or is longer than MAX_LINE_BYTES (never read
    whole) yields a SpecSyntaxError instead. Text that is not UTF-8 raises UnicodeDecodeError."""
    for _, _, entry in read_jsonl_lines(path):
        yield entry


def read_jsonl_lines(path: Path) -> Iterator[tuple[int, bytes, Located | SpecSyntaxError]]:
    """read_jsonl's entries, each with its line's byte offset in the file and its bytes as read
    (without the line break; empty for a line too long), so that it can be read again alone."""
    with path.open("rb") as handle:
        start = 0
        for number, raw in capped_lines(handle):
            entry = jsonl_entry(number, raw)
            if entry is not None:
                yield start, raw or b"", entry
            start = handle.tell()


def jsonl_entry(number: int, raw: bytes | None) -> Located | SpecSyntaxError | None:
    """Line `number` of a JSONL file (None: longer than MAX_LINE_BYTES) read; None when blank."""
    if raw is None:
        return SpecSyntaxError(number, line_too_long())
    text = raw.decode("utf-8")
    if not text.strip():
        return None
    try:
        return Located(load_json(text), None, number)
    except JsonRefused as error:
        return SpecSyntaxError(number, f"invalid JSON: {json_problem(error, text)}")


def capped_lines(handle: BinaryIO, cap: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes | None]]:
    """Each line of a binary file with its number (from 1), without its line break; None for a
    line longer than `cap`, which is skipped without being held in memory."""
    number = 0
    while True:
        line = handle.readline(cap + 1)
        if not line:
            return
        number += 1
        if len(line) > cap:
            while line and not line.endswith(b"\n"):
                line = handle.readline(1024 * 1024)
            yield number, None
            continue
        yield number, line.rstrip(b"\r\n")


def line_too_long(cap: int = MAX_LINE_BYTES) -> str:
    return f"the line is longer than {cap // (1024 * 1024)} MiB (not read)"


class JsonRefused(ValueError):
    """JSON that is not read into data: invalid, nested too deep, or a number too large."""


class NestedTooDeep(JsonRefused):
    """JSON whose lists and objects nest more than MAX_DEPTH levels deep."""


class NumberTooLarge(JsonRefused):
    """A JSON number written with more than MAX_NUMBER_CHARS characters, or one so large that it
    would be infinite (`literal`: as written)."""

    def __init__(self, message: str, literal: str) -> None:
        super().__init__(message)
        self.literal = literal


def json_problem(error: ValueError, text: str) -> str:
    """What is wrong with JSON `text`, for a problem line: the message and the column."""
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at column {error.colno}"
    if isinstance(error, NestedTooDeep):
        return f"{error} at column {_too_deep_json_column(text)}"
    return str(error)


def json_error_line(error: ValueError, text: str) -> int | None:
    """The line of `text` where JSON that load_json refused goes wrong, where it can be told."""
    if isinstance(error, json.JSONDecodeError):
        return error.lineno
    if isinstance(error, NestedTooDeep):
        offset = _too_deep_json_column(text) - 1
    elif isinstance(error, NumberTooLarge) and error.literal in text:
        offset = text.index(error.literal)
    else:
        return None
    return text.count("\n", 0, offset) + 1


def load_json(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads` for untrusted text: data nested more than `max_depth` levels deep (which
    would end in a RecursionError here or in whatever walks the data later) raises NestedTooDeep;
    a number over MAX_NUMBER_CHARS, or one that would be infinite, NumberTooLarge; NaN and
    Infinity are refused; invalid JSON raises json.JSONDecodeError (also a JsonRefused)."""
    try:
        data = JSON_DECODER.decode(text.decode("utf-8") if isinstance(text, bytes) else text)
    except RecursionError:
        raise NestedTooDeep(_TOO_DEEP) from None
    except json.JSONDecodeError as error:
        raise _Invalid(error.msg, error.doc, error.pos) from None
    opened = text.count(b"[") + text.count(b"{") if isinstance(text, bytes) else None
    if opened is None:
        assert isinstance(text, str)
        opened = text.count("[") + text.count("{")
    if opened > max_depth and nested_deeper_than(data, max_depth):
        raise NestedTooDeep(_TOO_DEEP)
    return data


class _Invalid(json.JSONDecodeError, JsonRefused):
    """json.JSONDecodeError that is also a JsonRefused, so one except clause catches them all."""


def _bounded_int(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise NumberTooLarge(
            f"a number of {len(text)} characters (at most {MAX_NUMBER_CHARS})", text
        )
    return int(text)


def _finite_float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise NumberTooLarge(
            f"a number of {len(text)} characters (at most {MAX_NUMBER_CHARS})", text
        )
    value = float(text)
    if not math.isfinite(value):
        raise NumberTooLarge(f"the number {text[:40]} is too large (it would be infinite)", text)
    return value


def _no_constant(name: str) -> Any:
    raise NumberTooLarge(f"{name} is not a JSON number", name)


JSON_DECODER = json.JSONDecoder(
    parse_int=_bounded_int, parse_float=_finite_float, parse_constant=_no_constant
)


def nested_deeper_than(data: Any, max_depth: int = MAX_DEPTH) -> bool:
    """Whether lists and mappings in `data` nest more than `max_depth` levels (no recursion)."""
    if not isinstance(data, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, level = stack.pop()
        if level > max_depth:
            return True
        inner = value.values() if isinstance(value, dict) else value
        stack.extend((item, level + 1) for item in inner if isinstance(item, dict | list))
    return False


_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _too_deep_json_column(text: str) -> int:
    """The column where JSON text goes deeper than MAX_DEPTH (strings skipped)."""
    depth = 0
    for token in _JSON_TOKENS.finditer(text):
        mark = token.group()
        if mark in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return token.start() + 1
        elif mark in "]}":
            depth -= 1
    return 1
