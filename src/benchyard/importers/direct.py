"""Loading a benchmark straight from a source: a `benchmark.yaml` with `format:` and `source:`
(and `options:`) is built in memory on every load, through the same validation as scenario files,
without an imported copy to keep in sync.

```yaml
name: humaneval
version: "1"
format: humaneval
source: data/HumanEval.jsonl.gz       # relative to this directory, or absolute
options: {time_limit_sec: 3}
```

Problems name the source file and line. The content hash covers this directory, the format, its
version, the options and the source's sha256, so a changed source is a changed benchmark. Files a
format's scenarios name (hidden tests, reference patches, task folders) are written once into a
cache keyed by all of that (`$XDG_CACHE_HOME/benchyard/imported/<key>/`, never shown to a sandbox),
since fixtures are copied from there into each attempt's workdir.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from benchyard.errors import BenchyardError
from benchyard.importers.base import Imported
from benchyard.importers.build import (
    SCENARIO_DIR,
    parse_options,
    provenance_of,
    raise_path_problems,
    write_files_or_problem,
)
from benchyard.importers.registry import get_importer
from benchyard.spec.hashing import content_hash
from benchyard.spec.loader import (
    MANIFEST,
    Benchmark,
    Location,
    ProblemCollector,
    check_unique,
    load_scenario,
)
from benchyard.spec.models import BenchmarkManifest, Scenario
from benchyard.spec.plugins import Plugins
from benchyard.spec.problems import BenchmarkInvalid
from benchyard.spec.source_files import Located
from benchyard.untrusted import remove_tree


def load_from_source(
    root: Path,
    manifest: BenchmarkManifest,
    source_doc: Located,
    collector: ProblemCollector,
    plugins: Plugins,
) -> Benchmark:
    """The benchmark `manifest` describes, its scenarios read from its source and validated
    against `plugins`."""
    assert manifest.format is not None and manifest.source is not None
    manifest_file = root / MANIFEST
    try:
        importer = get_importer(manifest.format)
    except BenchyardError as error:
        collector.add(manifest_file, source_doc.line_of(("format",)), ("format",), str(error))
        raise BenchmarkInvalid(collector.problems) from None
    source = Path(manifest.source)
    source = (source if source.is_absolute() else root / source).resolve()
    if not source.exists():
        collector.add(
            manifest_file,
            source_doc.line_of(("source",)),
            ("source",),
            f"no such {'directory' if importer.source_kind == 'directory' else 'file'} "
            f"'{manifest.source}' (looked for {source})",
        )
        raise BenchmarkInvalid(collector.problems)
    try:
        options = parse_options(
            importer, manifest.options, file=manifest_file, line=source_doc.line_of(("options",))
        )
        imported = importer.read(source, options)
    except BenchmarkInvalid as invalid:  # the source's own problems, with its file and line
        raise BenchmarkInvalid([*collector.problems, *invalid.problems]) from None
    provenance = provenance_of(importer, source, options)
    base = _materialised(imported, provenance)
    scenarios: list[Scenario] = []
    locations: dict[str, Location] = {}
    for entry in imported.scenarios:
        document = Located(entry.data, None, entry.origin.line)
        scenario = load_scenario(
            base or entry.origin.file.parent,
            manifest,
            entry.origin.file,
            document,
            collector,
            plugins,
            base=base,
        )
        if scenario is None:
            continue
        location = Location(entry.origin.file, entry.origin.line, base)
        check_unique(scenario, location, locations, collector)
        scenarios.append(scenario)
        locations.setdefault(scenario.id, location)
    if not scenarios and not collector.problems:
        collector.add(source, None, (), f"no scenarios found in this {importer.name} source")
    if collector.problems:
        raise BenchmarkInvalid(collector.problems)
    digest = hashlib.sha256(
        json.dumps(
            [content_hash(root), {k: v for k, v in provenance.items() if k != "source"}],
            sort_keys=True,
        ).encode()
    )
    return Benchmark(
        root, manifest, scenarios, "sha256:" + digest.hexdigest(), plugins, locations, provenance
    )


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "benchyard" / "imported"


def _materialised(imported: Imported, provenance: dict[str, Any]) -> Path | None:
    """The directory holding the files the scenarios name (written once per key), or None when
    they name none."""
    if not imported.files and not imported.links:
        return None
    key = hashlib.sha256(
        json.dumps({k: v for k, v in provenance.items() if k != "source"}, sort_keys=True).encode()
    ).hexdigest()[:32]
    target = cache_root() / key
    scenario_dir = target / SCENARIO_DIR
    if scenario_dir.is_dir():
        return scenario_dir
    source = Path(str(provenance.get("source", target)))
    raise_path_problems(imported, source)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=target.parent))
    try:
        write_files_or_problem(imported, staging / SCENARIO_DIR, source, scenario_files=False)
        with contextlib.suppress(OSError):  # another process wrote it meanwhile: keep theirs
            staging.rename(target)
    finally:
        remove_tree(staging, ignore_errors=True)
    return scenario_dir
