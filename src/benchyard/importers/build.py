"""Reading a source through its importer, and writing what it gives as a benchmark directory.

```
DIR/
├── benchmark.yaml           name, version, description, defaults, provenance (format, source sha256)
└── scenarios/
    ├── <group>.yaml         the scenarios, one YAML list per group (a BFCL category, ...)
    └── fixtures/...         the files they name: hidden tests, reference patches, task folders
```
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from benchyard.importers.base import Imported, Importer, ImportOptions, ProblemList
from benchyard.importers.registry import get_importer
from benchyard.importers.source import source_sha256
from benchyard.untrusted import (
    copy_tree_under,
    path_name_problem,
    relative_path_problem,
    remove_tree,
    write_new_under,
)

SCENARIO_DIR = "scenarios"


@dataclass(frozen=True)
class ImportResult:
    imported: Imported
    provenance: dict[str, Any]


def parse_options(
    importer: Importer, raw: Mapping[str, Any], *, file: Path | None = None, line: int | None = None
) -> ImportOptions:
    """The importer's options from `key: value` pairs; every wrong one is a problem."""
    try:
        return importer.options.model_validate(dict(raw))
    except ValidationError as error:
        problems = ProblemList()
        for item in error.errors():
            where = ".".join(str(part) for part in item["loc"])
            message = "unknown option" if item["type"] == "extra_forbidden" else item["msg"]
            known = ", ".join(importer.options.model_fields) or "none"
            problems.add(
                file or Path(f"<{importer.name} options>"),
                line,
                f"options.{where}" if where else "options",
                f"{message} (options of {importer.name}: {known})",
            )
        problems.raise_if_any()
        raise  # pragma: no cover - raise_if_any raised


def provenance_of(importer: Importer, source: Path, options: ImportOptions) -> dict[str, Any]:
    """What identifies an imported benchmark's origin: recorded in benchmark.yaml and every run."""
    from benchyard import __version__

    return {
        "format": importer.name,
        "format_version": importer.format_version,
        "source": str(source),
        "source_sha256": source_sha256(source),
        "options": options.model_dump(mode="json", exclude_defaults=True),
        "benchyard_version": __version__,
    }


def read_source(
    format_name: str, source: Path, raw_options: Mapping[str, Any] | None = None
) -> ImportResult:
    """Read `source` in `format_name`; raise SourceInvalid listing every problem."""
    importer = get_importer(format_name)
    options = parse_options(importer, raw_options or {})
    source = source.resolve()
    problems = ProblemList()
    if importer.source_kind == "directory" and not source.is_dir():
        problems.add(source, None, "", f"{format_name} reads a directory of tasks")
    elif importer.source_kind == "file" and not source.is_file():
        problems.add(source, None, "", "no such file" if not source.exists() else "not a file")
    problems.raise_if_any()
    imported = importer.read(source, options)
    return ImportResult(imported, provenance_of(importer, source, options))


def write_benchmark(
    result: ImportResult,
    out: Path,
    *,
    name: str | None = None,
    check: Callable[[Path], object] | None = None,
) -> Path:
    """Write the imported benchmark under `out` (which must be empty or absent), all or nothing:
    every name that becomes a path is checked first (SourceInvalid lists those that would leave
    the directory), the files are written into a new directory beside `out`, no link followed,
    and renamed to `out` at the end; `check` (loading it, say) then runs on `out`, which is
    removed again if it raises."""
    imported = result.imported
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        from benchyard.errors import BenchyardError

        raise BenchyardError(f"{out} is not empty; choose a new directory with -o")
    source = Path(str(result.provenance.get("source", out)))
    raise_path_problems(imported, source)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.importing-", dir=out.parent))
    try:
        _write_manifest(result, staging, name)
        write_files_or_problem(imported, staging / SCENARIO_DIR, source, scenario_files=True)
        staging.chmod(0o755)
        if out.is_dir():
            out.rmdir()  # empty, checked above
        staging.rename(out)
    finally:
        remove_tree(staging, ignore_errors=True)
    if check is not None:
        try:
            check(out)
        except BaseException:
            remove_tree(out, ignore_errors=True)
            raise
    return out


def _write_manifest(result: ImportResult, root: Path, name: str | None) -> None:
    imported = result.imported
    manifest: dict[str, Any] = {
        "name": name or imported.name,
        "version": imported.version,
        "description": imported.description,
    }
    if imported.defaults:
        manifest["defaults"] = imported.defaults
    if imported.sandbox:
        manifest["sandbox"] = imported.sandbox
    manifest["provenance"] = result.provenance
    header = (
        f"# Imported by `benchyard import {result.provenance['format']}` from "
        f"{Path(result.provenance['source']).name}; an ordinary benchmark: edit it freely.\n"
    )
    (root / "benchmark.yaml").write_text(header + dump_yaml(manifest), encoding="utf-8")


def path_problems(imported: Imported, source: Path) -> ProblemList:
    """Every name of `imported` that would not be a path inside the benchmark's scenario
    directory (`..`, absolute, a backslash, ...), and every source file or directory it copies
    that is a link: one problem each, before anything is written."""
    problems = ProblemList()
    for group in dict.fromkeys(scenario.group for scenario in imported.scenarios):
        problem = path_name_problem(f"{group}.yaml")
        if problem is not None:
            problems.add(source, None, "group", f"the scenario file name {group!r} {problem}")
    for relative in [*imported.files, *imported.links]:
        problem = relative_path_problem(relative)
        if problem is not None:
            problems.add(source, None, "files", f"the file name {relative!r} {problem}")
    base = (source if source.is_dir() else source.parent).resolve()
    for relative, original in imported.links.items():
        if original.is_symlink():
            problems.add(original, None, "", f"is a link; {relative!r} is copied from it")
        elif not original.resolve().is_relative_to(base):
            problems.add(
                original,
                None,
                "",
                f"leads outside {base} through a link; {relative!r} is copied from it",
            )
    return problems


def raise_path_problems(imported: Imported, source: Path) -> None:
    path_problems(imported, source).raise_if_any()


def write_files(imported: Imported, scenario_dir: Path, *, scenario_files: bool) -> None:
    """Write what `imported` names below `scenario_dir` (its scenario files too, when asked):
    every path checked (raise_path_problems first), no link followed, nothing overwritten."""
    scenario_dir.mkdir(parents=True, exist_ok=True)
    if scenario_files:
        groups: dict[str, list[dict[str, Any]]] = {}
        for scenario in imported.scenarios:
            groups.setdefault(scenario.group, []).append(scenario.data)
        for group, scenarios in groups.items():
            write_new_under(scenario_dir, f"{group}.yaml", dump_yaml(scenarios).encode("utf-8"))
    for relative, content in imported.files.items():
        write_new_under(scenario_dir, relative, content)
    for relative, original in imported.links.items():
        copy_tree_under(original, scenario_dir, relative)


def write_files_or_problem(
    imported: Imported, scenario_dir: Path, source: Path, *, scenario_files: bool
) -> None:
    """write_files, a file that cannot be written (a tree too deep, a full disk) raised as a
    problem of the source (SourceInvalid) rather than a traceback."""
    try:
        write_files(imported, scenario_dir, scenario_files=scenario_files)
    except OSError as error:
        problems = ProblemList()
        what = error.strerror or str(error)
        problems.add(Path(error.filename or source), None, "", f"cannot be imported: {what}")
        problems.raise_if_any()


class _Dumper(yaml.SafeDumper):
    """Readable YAML: multi-line text as `|` blocks, keys in the order given, no line folding."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _text)


def dump_yaml(data: Any) -> str:
    return yaml.dump(
        data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10_000, indent=2
    )
