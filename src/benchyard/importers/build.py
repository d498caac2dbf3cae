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

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from benchyard.importers.base import Imported, Importer, ImportOptions, ProblemList
from benchyard.importers.registry import get_importer
from benchyard.importers.source import source_sha256

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


def write_benchmark(result: ImportResult, out: Path, *, name: str | None = None) -> Path:
    """Write the imported benchmark under `out` (which must be empty or absent)."""
    imported = result.imported
    if out.exists() and any(out.iterdir()):
        from benchyard.errors import BenchyardError

        raise BenchyardError(f"{out} is not empty; choose a new directory with -o")
    scenario_dir = out / SCENARIO_DIR
    scenario_dir.mkdir(parents=True, exist_ok=True)
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
    (out / "benchmark.yaml").write_text(header + dump_yaml(manifest), encoding="utf-8")
    groups: dict[str, list[dict[str, Any]]] = {}
    for scenario in imported.scenarios:
        groups.setdefault(scenario.group, []).append(scenario.data)
    for group, scenarios in groups.items():
        (scenario_dir / f"{group}.yaml").write_text(dump_yaml(scenarios), encoding="utf-8")
    for relative, content in imported.files.items():
        target = scenario_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    for relative, original in imported.links.items():
        target = scenario_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if original.is_dir():
            shutil.copytree(original, target, symlinks=True)
        else:
            shutil.copy2(original, target, follow_symlinks=False)
    return out


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
