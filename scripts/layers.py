"""benchyard's layers, read from docs/architecture.md, against the imports of src/benchyard.

Run `python scripts/layers.py` for the counts and each offending import; tests/unit/test_layers.py
runs the same analysis and fails on anything not in its list of known exceptions.

What counts as an import: every `import benchyard...` and `from benchyard... import ...` in a module,
at module level or inside a function (a lazy import is still a dependency), except those under
`if TYPE_CHECKING:` (they never run: they name a type for the checker). `from benchyard.x import y`
where `y` is a module counts as an import of `benchyard.x.y`.

A room is a row's package (`runner/`) or module (`runner/failures.py`, `config.py`); a module
belongs to the most specific room that names it. Three things are reported:
- an upward arrow: a module importing a module of a room on a higher floor;
- a circle between rooms: rooms that reach each other through their imports;
- a circle between modules: modules that reach each other through their imports.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src"
PACKAGE = "benchyard"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
TABLE_START = "<!-- layers: start -->"
TABLE_END = "<!-- layers: end -->"


@dataclass(frozen=True)
class Import:
    """One import of one benchyard module by another."""

    importer: str
    imported: str
    line: int

    def __str__(self) -> str:
        return f"{self.importer} -> {self.imported} (line {self.line})"


def read_floors(architecture: Path = ARCHITECTURE) -> list[list[str]]:
    """The rooms of each floor, bottom first, from the table between the layer markers."""
    text = architecture.read_text(encoding="utf-8")
    table = text.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0]
    floors: list[list[str]] = []
    for row in table.splitlines():
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].isdigit():
            continue
        floors.append(re.findall(r"`([^`]+)`", cells[1]))
    return floors


def module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def source_modules() -> dict[str, Path]:
    return {
        module_name(path): path
        for path in sorted((SOURCE / PACKAGE).rglob("*.py"))
        if "library" not in path.relative_to(SOURCE / PACKAGE).parts[:1]
    }


def type_checking_nodes(tree: ast.Module) -> set[int]:
    """The ids of every node under an `if TYPE_CHECKING:` block."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for statement in node.body:
                hidden.update(id(inner) for inner in ast.walk(statement))
    return hidden


def imported_names(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - node.level + 1]
        base = ".".join([*parts, base] if base else parts)
    return [f"{base}.{alias.name}" for alias in node.names]


def resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module a dotted name imports: itself, or the module holding the attribute."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    hidden = type_checking_nodes(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom) or id(node) in hidden:
            continue
        seen: set[str] = set()
        for name in imported_names(node, module, path.name == "__init__.py"):
            if name != PACKAGE and not name.startswith(PACKAGE + "."):
                continue
            target = resolve(name, modules)
            if target in (None, module, PACKAGE) or target in seen:
                continue
            seen.add(target)
            yield Import(module, target, node.lineno)


def all_imports() -> list[Import]:
    modules = source_modules()
    return [
        found for module, path in modules.items() for found in imports_of(module, path, modules)
    ]


def room_of(module: str, rooms: Iterable[str]) -> str | None:
    """The most specific room naming the module (`runner/failures.py` before `runner/`)."""
    relative = module.removeprefix(PACKAGE).lstrip(".").replace(".", "/") or "__init__"
    best: str | None = None
    for room in rooms:
        if room.endswith(".py"):
            matches = relative == room.removesuffix(".py") or (
                relative + "/__init__" == room.removesuffix(".py")
            )
        else:
            matches = relative == room.rstrip("/") or relative.startswith(room)
        if matches and (best is None or len(room) > len(best)):
            best = room
    return best


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one node, each sorted, in order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


@dataclass(frozen=True)
class Findings:
    unplaced: list[str]
    upward: list[Import]
    room_circles: list[list[str]]
    module_circles: list[list[str]]


def analyse(floors: list[list[str]], imports: list[Import]) -> Findings:
    floor_of = {room: number for number, rooms in enumerate(floors) for room in rooms}
    rooms = list(floor_of)
    ends = {module for found in imports for module in (found.importer, found.imported)}
    modules = sorted(ends | set(source_modules()))
    placed = {module: room_of(module, rooms) for module in modules}
    upward: list[Import] = []
    room_graph: dict[str, set[str]] = {}
    module_graph: dict[str, set[str]] = {}
    for found in imports:
        module_graph.setdefault(found.importer, set()).add(found.imported)
        source, target = placed[found.importer], placed[found.imported]
        if source is None or target is None or source == target:
            continue
        room_graph.setdefault(source, set()).add(target)
        if floor_of[target] > floor_of[source]:
            upward.append(found)
    return Findings(
        unplaced=[module for module, room in placed.items() if room is None],
        upward=sorted(upward, key=lambda found: (found.importer, found.imported)),
        room_circles=strongly_connected(room_graph),
        module_circles=strongly_connected(module_graph),
    )


def without(imports: list[Import], known: Iterable[tuple[str, str]]) -> list[Import]:
    """The imports less the known exceptions, each named `(importer, imported)`."""
    skip = set(known)
    return [found for found in imports if (found.importer, found.imported) not in skip]


def main() -> int:
    floors = read_floors()
    findings = analyse(floors, all_imports())
    for module in findings.unplaced:
        print(f"not in any room: {module}")
    print(f"upward arrows: {len(findings.upward)}")
    for found in findings.upward:
        print(f"  {found}")
    print(f"circles between rooms: {len(findings.room_circles)}")
    for circle in findings.room_circles:
        print(f"  {len(circle)} rooms: {', '.join(circle)}")
    print(f"circles between modules: {len(findings.module_circles)}")
    for circle in findings.module_circles:
        print(f"  {len(circle)} modules: {', '.join(circle)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
