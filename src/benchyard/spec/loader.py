"""Reading a benchmark directory into a validated `Benchmark`, collecting every problem at once;
its checks, environments and `format:` sources validated through the `Plugins` it is given."""

from __future__ import annotations

import difflib
import errno
import os
from collections import ChainMap
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast, get_args

from pydantic import BaseModel, ValidationError

from benchyard.spec.hashing import content_hash, scenario_hash
from benchyard.spec.models import (
    COMMON_CHECK_KEYS,
    DEFER_TURN_CHECKS,
    BenchmarkManifest,
    CheckSpec,
    FixtureFile,
    Limits,
    Scenario,
)
from benchyard.spec.plugins import CheckParamsModel, Plugins
from benchyard.spec.problems import BenchmarkInvalid, Problem, format_field
from benchyard.spec.scenario_index import IndexBuilder
from benchyard.spec.scenario_index import Location as Location  # where importers find it
from benchyard.spec.source_files import Located, SpecSyntaxError, read_jsonl_lines, read_yaml

MANIFEST = "benchmark.yaml"
DEFAULT_TIMEOUT_SEC = 60.0
DEFAULT_MAX_TURNS = 10
HASHES_KEPT = 4096  # scenario hashes a Benchmark keeps computed


@dataclass
class Benchmark:
    root: Path
    manifest: BenchmarkManifest
    scenarios: Sequence[Scenario]  # a ScenarioIndex (spec/scenario_index.py) when read from files
    content_hash: str
    plugins: Plugins = field(repr=False, compare=False)  # what its scenarios were validated by
    locations: Mapping[str, Location] = field(default_factory=dict)
    provenance: dict[str, Any] | None = None  # an imported benchmark's origin (importers/)
    _scenario_hashes: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def version(self) -> str:
        return self.manifest.version

    def limits_for(self, scenario: Scenario) -> Limits:
        """The scenario's limits, falling back to the benchmark's defaults, then benchyard's."""
        defaults = self.manifest.defaults
        return Limits(
            timeout_sec=scenario.limits.timeout_sec or defaults.timeout_sec or DEFAULT_TIMEOUT_SEC,
            max_turns=scenario.limits.max_turns or defaults.max_turns or DEFAULT_MAX_TURNS,
        )

    def scenario_dir(self, scenario: Scenario) -> Path:
        location = self.locations[scenario.id]
        return location.base or location.file.parent

    def scenario_hash(self, scenario: Scenario) -> str:
        """The scenario's own content hash (spec/hashing.py), stored with each of its attempts so
        that a comparison pairs only the scenarios that did not change: its definition, its
        effective limits, the benchmark's defaults and sandbox, and the files it names. Not its
        benchmark's name, version or other scenarios."""
        found = self._scenario_hashes.get(scenario.id)
        if found is None:
            definition = {
                "scenario": scenario.model_dump(mode="json"),
                "limits": self.limits_for(scenario).model_dump(mode="json"),
                "benchmark": self.manifest.model_dump(mode="json", include={"defaults", "sandbox"}),
            }
            sources = [src for src, _ in _fixture_sources(scenario)]
            sources += list(_check_files(scenario, self.plugins))
            found = scenario_hash(definition, self.root, self.scenario_dir(scenario), sources)
            if len(self._scenario_hashes) >= HASHES_KEPT:  # the oldest goes: memory stays flat
                del self._scenario_hashes[next(iter(self._scenario_hashes))]
            self._scenario_hashes[scenario.id] = found
        return found


class ProblemCollector:
    """Gathers problems for one benchmark, with paths relative to its root."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.problems: list[Problem] = []

    def add(self, file: Path, line: int | None, path: tuple[str | int, ...], message: str) -> None:
        self.problems.append(Problem(self._relative(file), line, format_field(path), message))

    def _relative(self, file: Path) -> str:
        try:
            return file.relative_to(self.root).as_posix()
        except ValueError:
            return str(file)

    def validation_errors(
        self,
        file: Path,
        located: Located,
        error: ValidationError,
        prefix: tuple[str | int, ...] = (),
        model: type[BaseModel] | None = None,
        extra_fields: Iterable[str] = (),
    ) -> None:
        """One problem per field that failed. With `model` (the model validated), an unknown
        field suggests the closest known one of its mapping, or of `extra_fields`."""
        by_path: dict[tuple[str | int, ...], list[Any]] = {}
        for item in error.errors():
            by_path.setdefault(_data_path(located.data, prefix, item["loc"]), []).append(item)
        for relative, items in by_path.items():
            if any(other[: len(relative)] == relative for other in by_path if other != relative):
                continue  # a union member's complaint about the whole: the deeper one is clearer
            path = prefix + relative
            message = _message(items)
            if items[0]["type"] == "extra_forbidden" and model is not None and relative:
                known = [*_field_names(_model_at(model, relative[:-1])), *extra_fields]
                message += _did_you_mean(str(relative[-1]), known)
            self.add(file, located.line_of(path), path, message)


def _data_path(
    data: Any, prefix: tuple[str | int, ...], loc: Iterable[Any]
) -> tuple[str | int, ...]:
    """Keep only the parts of a pydantic error location that name real keys or indexes in `data`."""
    node = data
    for part in prefix:
        node = node[part] if _has(node, part) else None
    path: list[str | int] = []
    for part in loc:
        if _has(node, part):
            node = node[part]
            path.append(part)
        elif (
            isinstance(node, dict)
            and isinstance(part, str)
            and part.isidentifier()
            and "[" not in part
        ):
            path.append(part)  # a missing key: name it, there is nothing deeper
            node = None
    return tuple(path)


def _has(node: Any, part: Any) -> bool:
    if isinstance(node, dict):
        return part in node
    if isinstance(node, list):
        return isinstance(part, int) and 0 <= part < len(node)
    return False


# What a type error expected, in the words of a YAML author.
_EXPECTED = {
    "string_type": "text",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
}
_BOUNDS = {
    "greater_than": ("gt", "greater than"),
    "greater_than_equal": ("ge", "at least"),
    "less_than": ("lt", "less than"),
    "less_than_equal": ("le", "at most"),
}


def _message(items: list[Any]) -> str:
    """The errors pydantic gave for one field, said plainly, with what was found there."""
    item = items[0]
    kind, context, found = item["type"], item.get("ctx") or {}, _found(item.get("input"))
    expected = [_EXPECTED[each["type"]] for each in items if each["type"] in _EXPECTED]
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field"
    if expected and len(expected) == len(items):  # several when a union's members all failed
        return f"expected {' or '.join(dict.fromkeys(expected))}, found {found}"
    if kind == "literal_error":
        return f"expected {context['expected']}, found {found}"
    if kind in _BOUNDS:
        key, words = _BOUNDS[kind]
        bound = context[key]
        shown = int(bound) if isinstance(bound, float) and bound.is_integer() else bound
        return f"must be {words} {shown}, found {found}"
    if kind in ("too_short", "string_too_short"):
        least = context.get("min_length", 1)
        unit = "characters" if kind == "string_too_short" else "items"
        return "must not be empty" if least == 1 else f"needs at least {least} {unit}"
    if kind == "string_too_long":
        found_length = len(item.get("input") or "")
        return (
            f"at most {context['max_length']} characters (what the store keeps), "
            f"found {found_length}"
        )
    if kind == "string_pattern_mismatch":
        return f"{_clip(repr(item.get('input')))} does not match the pattern {context['pattern']}"
    if kind == "finite_number":
        return f"expected a finite number, found {found}"
    return str(item["msg"]).removeprefix("Value error, ")


def _found(value: Any) -> str:
    if isinstance(value, str):
        return f"text {_clip(repr(value))}"
    if isinstance(value, bool) or value is None:
        return "true" if value is True else "false" if value is False else "null"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return _clip(repr(value))


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _did_you_mean(word: str, known: Iterable[str]) -> str:
    hint = difflib.get_close_matches(word, list(known), n=1)
    return f" (did you mean '{hint[0]}'?)" if hint else ""


def _field_names(model: type[BaseModel] | None) -> list[str]:
    if model is None:
        return []
    return [info.alias or name for name, info in model.model_fields.items()]


def _model_at(model: type[BaseModel], path: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The model that validates the mapping at `path` inside `model` (list indexes skipped)."""
    current = model
    for part in path:
        if isinstance(part, int):
            continue
        fields = {info.alias or name: info for name, info in current.model_fields.items()}
        inner = _inner_model(fields[part].annotation) if part in fields else None
        if inner is None:
            return None
        current = inner
    return current


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    """The model inside an annotation such as `Limits`, `list[CheckSpec]` or `Fixtures | None`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in get_args(annotation):
        found = _inner_model(argument)
        if found is not None:
            return found
    return None


def _validate(
    model: type[BaseModel],
    located: Located,
    file: Path,
    collector: ProblemCollector,
    context: dict[str, Any] | None = None,
) -> Any:
    try:
        return model.model_validate(located.data, context=context)
    except ValidationError as error:
        collector.validation_errors(file, located, error, model=model)
        return None


def resolve_benchmark_path(reference: str | Path) -> Path:
    """A directory, its benchmark.yaml, the name of a built-in benchmark, or the name (or directory
    name) of one of the benchmarks under the current directory, as `benchyard benchmarks` lists."""
    from benchyard.spec.library import builtin_benchmarks, local_benchmarks_named
    from benchyard.spec.problems import BenchmarkNotFound

    path = Path(reference)
    if path.is_file() and path.name == MANIFEST:
        return path.parent
    if (path / MANIFEST).is_file():
        return path
    builtins = builtin_benchmarks()
    if str(reference) in builtins:
        return builtins[str(reference)]
    named = local_benchmarks_named(str(reference), Path.cwd()) if path.name == str(path) else []
    if len(named) == 1:
        return named[0]
    if named:
        shown = ", ".join(str(found.relative_to(Path.cwd().resolve())) for found in named)
        raise BenchmarkNotFound(f"'{reference}' names several benchmarks here: give one of {shown}")
    hint = difflib.get_close_matches(str(reference), list(builtins), n=1)
    suggestion = f" (did you mean '{hint[0]}'?)" if hint else ""
    raise BenchmarkNotFound(
        f"no benchmark at '{reference}'{suggestion}: give a directory holding {MANIFEST}, "
        f"a built-in name ({', '.join(sorted(builtins))}), or the name of one that "
        "`benchyard benchmarks` lists here"
    )


def read_benchmark(reference: str | Path, plugins: Plugins) -> Benchmark:
    """Read a benchmark and validate it, its checks and environments against `plugins`; raise
    BenchmarkInvalid listing every problem found."""
    root = resolve_benchmark_path(reference).resolve()
    collector = ProblemCollector(root)
    loaded_manifest = _load_manifest(root, collector) or _fallback_manifest(root)
    if loaded_manifest is None:
        raise BenchmarkInvalid(collector.problems)
    manifest, manifest_source = loaded_manifest
    if manifest.format is not None:  # scenarios read from a source in a published format
        return plugins.load_from_source(root, manifest, manifest_source, collector)
    read = IndexBuilder()
    broken: dict[str, Location] = {}  # ids of scenarios with problems: still taken
    taken = ChainMap(read.locations(), broken)  # type: ignore[arg-type]  # only read
    files = _scenario_files(root, manifest, manifest_source, collector)
    if not files and not collector.problems:
        collector.add(
            root / MANIFEST,
            _line_if_given(manifest_source, "scenarios"),
            ("scenarios",),
            f"no scenario files match {', '.join(manifest.scenarios)}",
        )
    for file in files:
        for scenario, location, raw_id, at in _load_scenario_file(
            root, manifest, file, collector, plugins
        ):
            if scenario is None:  # its problems are collected; its id still counts as taken
                if raw_id is not None:
                    _check_unique_id(raw_id, location, taken, collector)
                    broken.setdefault(raw_id, location)
                continue
            check_unique(scenario, location, taken, collector)
            read.add(scenario, file, location.line, at)
    scenarios = read.index()
    if files and not scenarios and not collector.problems:
        collector.add(
            root / MANIFEST,
            _line_if_given(manifest_source, "scenarios"),
            ("scenarios",),
            f"no scenarios in {', '.join(collector._relative(file) for file in files)}",
        )
    if manifest.profiles:
        from benchyard.spec.profiles import check_profiles

        check_profiles(root / MANIFEST, manifest_source, manifest.profiles, scenarios, collector)
    if collector.problems:
        raise BenchmarkInvalid(collector.problems)
    return Benchmark(
        root,
        manifest,
        scenarios,
        content_hash(root),
        plugins,
        read.locations(),
        manifest.provenance,
    )


def _line_if_given(located: Located, key: str) -> int | None:
    return (
        located.line_of((key,)) if isinstance(located.data, dict) and key in located.data else None
    )


def _load_manifest(
    root: Path, collector: ProblemCollector
) -> tuple[BenchmarkManifest, Located] | None:
    file = root / MANIFEST
    located = _read_yaml(file, collector)
    if located is None:
        return None
    if not isinstance(located.data, dict):
        collector.add(
            file, located.line, (), "expected a mapping with name, version, description, defaults"
        )
        return None
    manifest: BenchmarkManifest | None = _validate(BenchmarkManifest, located, file, collector)
    return (manifest, located) if manifest is not None else None


def _fallback_manifest(root: Path) -> tuple[BenchmarkManifest, Located] | None:
    """For a benchmark.yaml with problems (already collected): a manifest of its valid top-level
    fields, the rest left at their defaults, so that the scenario files are checked too and
    `validate` lists every problem at once. None when it names a `format` (its scenarios come
    from a source read by an importer, which wants a sound manifest)."""
    try:
        located = read_yaml(root / MANIFEST)
    except (SpecSyntaxError, UnicodeDecodeError):
        located = Located({}, None, 1)
    data = located.data if isinstance(located.data, dict) else {}
    if "format" in data:
        return None
    kept: dict[str, Any] = {"name": "unnamed", "version": "unversioned"}
    for key, value in data.items():
        try:
            BenchmarkManifest.model_validate({**kept, key: value})
        except ValidationError:
            continue
        kept[key] = value
    return BenchmarkManifest.model_validate(kept), located


def _read_yaml(
    file: Path, collector: ProblemCollector, scenario_file: bool = False
) -> Located | None:
    in_file = _in_scenario if scenario_file else tuple
    try:
        located = read_yaml(file)
    except SpecSyntaxError as error:
        collector.add(file, error.line, in_file(error.path), error.message)
        return None
    except UnicodeDecodeError:
        _not_utf8(file, collector)
        return None
    for duplicate in located.duplicates:
        collector.add(
            file,
            duplicate.line,
            in_file(duplicate.path),
            f"key given twice (first on line {duplicate.first_line}); only the last one counts",
        )
    return located


def _in_scenario(path: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """A path in a scenario file as a field of its scenario, as every other problem names it."""
    path = path[2:] if path[:1] == ("scenarios",) and len(path) > 2 else path
    return path[1:] if path and isinstance(path[0], int) else path


def _not_utf8(file: Path, collector: ProblemCollector) -> None:
    raw = file.read_bytes()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        column = error.start - (raw.rfind(b"\n", 0, error.start) + 1) + 1
        byte = raw[error.start : error.start + 1].hex()
        collector.add(
            file, line, (), f"not UTF-8 text: byte 0x{byte} at column {column} (save it as UTF-8)"
        )
    else:  # pragma: no cover - only called after a decoding error
        collector.add(file, None, (), "not UTF-8 text")


def _scenario_files(
    root: Path, manifest: BenchmarkManifest, source: Located, collector: ProblemCollector
) -> list[Path]:
    """The files the manifest's patterns match, except those that are links leading outside."""
    found: dict[Path, None] = {}
    for index, pattern in enumerate(manifest.scenarios):
        try:
            matches = sorted(root.glob(pattern))
        except (ValueError, IndexError, NotImplementedError) as error:
            path: tuple[str | int, ...] = ("scenarios", index)
            line = source.line_of(path)
            collector.add(
                root / MANIFEST, line, path, f"'{pattern}' is not a usable pattern: {error}"
            )
            continue
        except RecursionError:  # pathlib's `**` recurses: a tree thousands of levels deep
            path = ("scenarios", index)
            collector.add(
                root / MANIFEST,
                source.line_of(path),
                path,
                f"'{pattern}' cannot be searched: the benchmark's directories nest too deep",
            )
            continue
        for match in matches:
            relative = match.relative_to(root)
            if match.is_file() and "fixtures" not in relative.parts and relative != Path(MANIFEST):
                found[match] = None
    inside = [file for file in found if file.resolve().is_relative_to(root)]
    for file in (file for file in found if file not in inside):
        collector.add(
            root / MANIFEST,
            _line_if_given(source, "scenarios"),
            ("scenarios",),
            f"{collector._relative(file)} leads outside the benchmark directory through a link "
            f"(to {file.resolve()})",
        )
    return inside


def _load_scenario_file(
    root: Path,
    manifest: BenchmarkManifest,
    file: Path,
    collector: ProblemCollector,
    plugins: Plugins,
) -> Iterator[tuple[Scenario | None, Location, str | None, tuple[int, bytes] | None]]:
    """Each scenario of the file as it is read, with its location, its id as written (None when
    it has none) and, in a JSONL file, its line's offset and bytes; the scenario is None when it
    has problems."""
    documents: Iterable[tuple[Located, tuple[int, bytes] | None]]
    if file.suffix == ".jsonl":
        documents = _jsonl_documents(file, collector)
    else:
        located = _read_yaml(file, collector, scenario_file=True)
        found = _yaml_scenarios(file, located, collector) if located is not None else []
        documents = ((document, None) for document in found)
    for document, at in documents:
        scenario = load_scenario(root, manifest, file, document, collector, plugins)
        yield scenario, Location(file, document.line), _raw_id(document.data), at


def _jsonl_documents(
    file: Path, collector: ProblemCollector
) -> Iterator[tuple[Located, tuple[int, bytes]]]:
    """The scenarios of a JSONL file as they are read, one line at a time, with each line's
    offset and bytes, so that each line's parsed data is dropped once its scenario is validated
    rather than all of the file's held at once (issue 16); a line that is not JSON, or text that
    is not UTF-8, is a problem."""
    try:
        for offset, raw, entry in read_jsonl_lines(file):
            if isinstance(entry, SpecSyntaxError):
                collector.add(file, entry.line, (), entry.message)
            else:
                yield entry, (offset, raw)
    except UnicodeDecodeError:
        _not_utf8(file, collector)


def _raw_id(data: Any) -> str | None:
    """A scenario's id as written, for duplicate checks of scenarios with other problems."""
    value = data.get("id") if isinstance(data, dict) else None
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        return None
    return str(value)


def _yaml_scenarios(file: Path, located: Located, collector: ProblemCollector) -> list[Located]:
    """A YAML file holds a list of scenarios, one scenario, or a mapping with a `scenarios` list."""
    data = located.data
    if isinstance(data, dict) and isinstance(data.get("scenarios"), list):
        located = located.key("scenarios")
        data = located.data
    if isinstance(data, list):
        return [located.item(index) for index in range(len(data))]
    if isinstance(data, dict):
        return [located]
    if data is not None:
        collector.add(file, located.line, (), "expected a scenario mapping or a list of scenarios")
    return []


def load_scenario(
    root: Path,
    manifest: BenchmarkManifest,
    file: Path,
    document: Located,
    collector: ProblemCollector,
    plugins: Plugins,
    base: Path | None = None,
) -> Scenario | None:
    """The scenario, its checks and environment validated against `plugins`, or None when it
    has problems (all of them added to `collector`); fixture sources resolve in `base` (default:
    the file's directory)."""
    if not isinstance(document.data, dict):
        collector.add(file, document.line, (), "expected a scenario mapping")
        return None
    problems_before = len(collector.problems)
    scenario: Scenario | None = _validate(
        Scenario, document, file, collector, context={DEFER_TURN_CHECKS: True}
    )
    # Each check's own parameters, even when the scenario has other problems.
    checks = document.data.get("checks")
    for index, check in enumerate(checks if isinstance(checks, list) else []):
        if isinstance(check, dict) and isinstance(check.get("type"), str):
            params = {key: value for key, value in check.items() if key not in COMMON_CHECK_KEYS}
            _validate_check(file, document, index, check["type"], params, collector, plugins)
    environment = document.data.get("environment")
    if isinstance(environment, dict) and isinstance(environment.get("type"), str):
        _validate_environment(file, document, environment, collector, plugins)
    if scenario is not None:
        for path, message in scenario.turn_problems(_environment_tools(scenario, plugins)):
            collector.add(file, document.line_of(path), path, message)
        _check_turns_and_fixtures(
            root, manifest, file, document, scenario, collector, plugins, base
        )
    else:  # field errors do not hide missing fixtures: look at the paths as written
        for src, path in _raw_fixture_sources(document.data):
            problem = _fixture_problem(root, base or file.parent, src)
            if problem is not None:
                collector.add(file, document.line_of(path), path, problem)
    return scenario if len(collector.problems) == problems_before else None


def _validate_check(
    file: Path,
    document: Located,
    index: int,
    kind: str,
    params: dict[str, Any],
    collector: ProblemCollector,
    plugins: Plugins,
) -> None:
    model = plugins.check_params(kind)
    prefix: tuple[str | int, ...] = ("checks", index)
    if model is None:
        known = plugins.check_names()
        hint = difflib.get_close_matches(kind, known, n=1)
        suggestion = f" (did you mean '{hint[0]}'?)" if hint else f" (known: {', '.join(known)})"
        path = (*prefix, "type")
        collector.add(
            file, document.line_of(path), path, f"unknown check type '{kind}'{suggestion}"
        )
        return
    try:
        model.model_validate(params)
    except ValidationError as error:
        collector.validation_errors(
            file, document, error, prefix, model=model, extra_fields=COMMON_CHECK_KEYS
        )


def _validate_environment(
    file: Path,
    document: Located,
    environment: dict[str, Any],
    collector: ProblemCollector,
    plugins: Plugins,
) -> None:
    """A scenario's simulated environment: a known type, and parameters it can simulate."""
    found = plugins.environment(environment["type"])
    if found is None:
        path: tuple[str | int, ...] = ("environment", "type")
        unknown = plugins.unknown_environment(environment["type"])
        collector.add(file, document.line_of(path), path, unknown)
        return
    params = {key: value for key, value in environment.items() if key != "type"}
    try:
        validated = found.params.model_validate(params)
    except ValidationError as error:
        collector.validation_errors(
            file, document, error, ("environment",), model=found.params, extra_fields=("type",)
        )
        return
    problem = found.check(validated)
    if problem:
        collector.add(file, document.line_of(("environment",)), ("environment",), problem)


def _environment_tools(scenario: Scenario, plugins: Plugins) -> tuple[str, ...]:
    """The names of the tools the scenario's environment offers (none when it has none)."""
    if scenario.environment is None:
        return ()
    found = plugins.environment(scenario.environment.type)
    return found.tool_names if found is not None else ()


def check_unique(
    scenario: Scenario,
    location: Location,
    seen: Mapping[str, Location],
    collector: ProblemCollector,
) -> None:
    """A problem when the scenario's id is taken already."""
    _check_unique_id(scenario.id, location, seen, collector)


def _check_unique_id(
    scenario_id: str, location: Location, seen: Mapping[str, Location], collector: ProblemCollector
) -> None:
    first = seen.get(scenario_id)
    if first is not None:
        where = f"{collector._relative(first.file)}:{first.line}"
        collector.add(
            location.file,
            location.line,
            ("id",),
            f"duplicate scenario id '{scenario_id}' (first defined at {where})",
        )


def _check_turns_and_fixtures(
    root: Path,
    manifest: BenchmarkManifest,
    file: Path,
    document: Located,
    scenario: Scenario,
    collector: ProblemCollector,
    plugins: Plugins,
    base: Path | None = None,
) -> None:
    if scenario.limits.max_turns:
        max_turns, limit_source = scenario.limits.max_turns, "the scenario's limits.max_turns"
    elif manifest.defaults.max_turns:
        max_turns, limit_source = manifest.defaults.max_turns, f"defaults.max_turns in {MANIFEST}"
    else:
        max_turns, limit_source = DEFAULT_MAX_TURNS, "benchyard's default"
    turns = len(scenario.stimulus.turns)
    if turns > max_turns:
        path: tuple[str | int, ...] = ("stimulus", "turns")
        collector.add(
            file,
            document.line_of(path),
            path,
            f"{turns} user turns exceed max_turns {max_turns} ({limit_source})",
        )
    for src, path in _fixture_sources(scenario):
        problem = _fixture_problem(root, base or file.parent, src)
        if problem is not None:
            collector.add(file, document.line_of(path), path, problem)
    for path, problem in _check_file_problems(root, base or file.parent, scenario, plugins):
        collector.add(file, document.line_of(path), path, problem)


def _check_file_problems(
    root: Path, base: Path, scenario: Scenario, plugins: Plugins
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Each problem with a benchmark file a check names (CheckParams.benchmark_files, such as a
    `python` grader): checked as a fixture source is, then by the check type itself."""
    for index, spec in enumerate(scenario.checks):
        params = _valid_params(spec, plugins)
        if params is None:
            continue  # reported with the check's parameters
        for name, src in params.benchmark_files().items():
            problem = _fixture_problem(root, base, src)
            if problem is None:
                problem = params.benchmark_file_problem(name, (base / src).resolve())
            if problem is not None:
                yield ("checks", index, name), problem


def _fixture_problem(root: Path, base: Path, src: str) -> str | None:
    """What is wrong with a fixture path, if anything: it leaves the benchmark directory (as
    written, or through a link), names nothing, or is a directory holding a link that leaves."""
    if not Path(os.path.normpath(base / src)).is_relative_to(root):
        return f"'{src}' is outside the benchmark directory"
    followed = _follow(base / src)
    if isinstance(followed, str):
        return f"'{src}' {followed}"
    source, exists = followed
    if not source.is_relative_to(root):
        return f"'{src}' leads outside the benchmark directory through a link (to {source})"
    if not exists:
        return f"no such file '{src}' (looked for {source.relative_to(root).as_posix()})"
    found = _stray_link(source, root) if source.is_dir() else None
    if found is not None:
        link, why = found
        return f"'{src}' holds a link {link.relative_to(root).as_posix()} {why}"
    return None


def _follow(path: Path) -> tuple[Path, bool] | str:
    """`path` with its links followed and whether that exists, or why they cannot be followed."""
    try:
        return path.resolve(strict=True), True
    except (FileNotFoundError, NotADirectoryError):
        return path.resolve(), False
    except RuntimeError:  # Python 3.11 and 3.12 say a loop of links so
        return "goes through links that lead to each other"
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "goes through links that lead to each other"
        return f"cannot be read ({error.strerror})"


def _stray_link(directory: Path, root: Path) -> tuple[Path, str] | None:
    """The first link under `directory` that leads outside `root`, to nothing or into a loop,
    and why; links to directories inside `root` are followed (each directory once)."""
    seen: set[Path] = set()
    pending = [directory]
    while pending:
        current = pending.pop()
        real = current.resolve()
        if real in seen:
            continue
        seen.add(real)
        try:
            entries = sorted(os.scandir(current), key=lambda entry: entry.name)
        except OSError:
            continue  # unreadable: copying it says so
        for entry in entries:
            path = Path(entry.path)
            if not entry.is_symlink():
                if entry.is_dir(follow_symlinks=False):
                    pending.append(path)
                continue
            why = _link_problem(path, root)
            if why is not None:
                return path, why
            if path.is_dir():
                pending.append(path)
    return None


def _link_problem(link: Path, root: Path) -> str | None:
    """Why a link found in a fixture directory cannot be copied, if it cannot."""
    followed = _follow(link)
    if isinstance(followed, str):
        return f"that {followed}"
    target, exists = followed
    if not target.is_relative_to(root):
        return f"that leads outside the benchmark directory (to {target})"
    if not exists:
        return f"to nothing ({os.readlink(link)} does not exist)"
    return None


def _raw_fixture_sources(data: dict[str, Any]) -> Iterator[tuple[str, tuple[str | int, ...]]]:
    """_fixture_sources of a scenario mapping that did not validate: the paths as written."""
    fixtures, change = data.get("fixtures"), data.get("reference_change")
    lists: list[tuple[tuple[str | int, ...], Any]] = []
    if isinstance(fixtures, dict):
        lists += [(("fixtures", key), fixtures.get(key)) for key in ("files", "verification")]
    if isinstance(change, dict):
        lists.append((("reference_change", "files"), change.get("files")))
    for prefix, items in lists:
        for index, item in enumerate(items if isinstance(items, list) else []):
            src = item.get("src") if isinstance(item, dict) else item
            if isinstance(src, str) and src:
                yield src, (*prefix, index, "src")
    if isinstance(change, dict) and isinstance(change.get("patch"), str) and change["patch"]:
        yield change["patch"], ("reference_change", "patch")


def _check_files(scenario: Scenario, plugins: Plugins) -> Iterator[str]:
    """The benchmark files the scenario's checks read (CheckParams.benchmark_files)."""
    for spec in scenario.checks:
        params = _valid_params(spec, plugins)
        if params is not None:
            yield from params.benchmark_files().values()


def _valid_params(spec: CheckSpec, plugins: Plugins) -> CheckParamsModel | None:
    """The check's parameters validated by its type, or None when the type is unknown or they
    are not valid."""
    model = plugins.check_params(spec.type)
    if model is None:
        return None
    try:
        return cast(CheckParamsModel, model.model_validate(spec.params))
    except ValidationError:
        return None


def _fixture_sources(scenario: Scenario) -> Iterator[tuple[str, tuple[str | int, ...]]]:
    """Every file the scenario names relative to its file, with the field path naming it."""
    change = scenario.reference_change
    lists: list[tuple[tuple[str | int, ...], list[FixtureFile]]] = [
        (("fixtures", "files"), scenario.fixtures.files),
        (("fixtures", "verification"), scenario.fixtures.verification),
        (("reference_change", "files"), change.files if change else []),
    ]
    for prefix, fixtures in lists:
        for index, fixture in enumerate(fixtures):
            if fixture.src is not None:
                yield fixture.src, (*prefix, index, "src")
    if change is not None and change.patch is not None:
        yield change.patch, ("reference_change", "patch")
