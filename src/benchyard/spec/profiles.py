"""Profiles: named subsets of a benchmark, so that a run fits a time budget (`--profile`).

Every benchmark has `quick`, `standard` and `full`. `full` is every scenario; `quick` and
`standard` are, unless `benchmark.yaml` defines them, an even spread of 2 and 8 scenarios per
category (the first, the last, and evenly between, in file order). A benchmark may define those
two and any other profile under `profiles:`, by ids, filters and a per-category cap:

```yaml
profiles:
  quick: {per_category: 1, description: one of each category, a few minutes}
  math-only: {filters: [category:math]}
  smoke: {ids: [math-001, tools-003]}
```

A run records its profile; reports state it, and `compare` and `history` never mix runs of
different profiles without saying so."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from benchyard.errors import BenchyardError
from benchyard.spec.profile_spec import ProfileSpec

if TYPE_CHECKING:
    from benchyard.spec.loader import Benchmark, ProblemCollector
    from benchyard.spec.models import Scenario
    from benchyard.spec.source_files import Located

FULL = "full"
BUILT_IN_PER_CATEGORY = {"quick": 2, "standard": 8}


class UnknownProfile(BenchyardError):
    """A --profile that the benchmark does not have."""


def profiles_of(benchmark: Benchmark) -> dict[str, ProfileSpec]:
    """The benchmark's profiles, built-in ones included (`full` last)."""
    declared = dict(benchmark.manifest.profiles)
    built_in = {
        name: ProfileSpec(
            description=f"an even spread of {count} scenarios per category", per_category=count
        )
        for name, count in BUILT_IN_PER_CATEGORY.items()
        if name not in declared
    }
    return {**built_in, **declared, FULL: ProfileSpec(description="every scenario")}


def select_profile(benchmark: Benchmark, profile: str | None) -> Sequence[Scenario]:
    """The scenarios of `profile` (None or `full`: all of them), in the benchmark's order."""
    if profile is None or profile == FULL:
        return benchmark.scenarios
    profiles = profiles_of(benchmark)
    if profile not in profiles:
        raise UnknownProfile(
            f"{benchmark.name} has no profile '{profile}' (profiles: {', '.join(profiles)}); "
            f"define it under profiles: in {benchmark.root / 'benchmark.yaml'}"
        )
    return choose(benchmark.scenarios, profiles[profile])


def choose(scenarios: Sequence[Scenario], spec: ProfileSpec) -> Sequence[Scenario]:
    """The scenarios `spec` chooses; of a ScenarioIndex, chosen without reading them."""
    from benchyard.spec.filters import select_scenarios
    from benchyard.spec.scenario_index import fields_of, narrowed, scenarios_by_id

    if spec.ids:
        by_id = scenarios_by_id(scenarios)
        return [by_id[sid] for sid in spec.ids if sid in by_id]
    chosen = select_scenarios(scenarios, spec.filters)
    if spec.per_category is None:
        return chosen
    by_category: dict[str, list[str]] = {}
    for fields in fields_of(chosen):
        by_category.setdefault(fields.category, []).append(fields.id)
    kept = {
        scenario_id
        for members in by_category.values()
        for scenario_id in _spread(members, spec.per_category)
    }
    return narrowed(chosen, lambda scenario: scenario.id in kept)


def _spread(members: list[str], count: int) -> list[str]:
    """`count` members evenly spread over the list: the first, the last and between."""
    if count >= len(members):
        return members
    if count == 1:
        return [members[0]]
    step = (len(members) - 1) / (count - 1)
    return [members[round(index * step)] for index in range(count)]


def profile_sizes(benchmark: Benchmark) -> dict[str, int]:
    return {
        name: len(choose(benchmark.scenarios, spec)) if name != FULL else len(benchmark.scenarios)
        for name, spec in profiles_of(benchmark).items()
    }


def check_profiles(
    file: object,
    located: Located,
    profiles: dict[str, ProfileSpec],
    scenarios: Sequence[Scenario],
    collector: ProblemCollector,
) -> None:
    """Each profile's ids name scenarios of the benchmark and its filters can be read; `full`
    is not redefined. Problems name benchmark.yaml's line and field."""
    from pathlib import Path

    from benchyard.spec.filters import FilterError, select_scenarios
    from benchyard.spec.scenario_index import fields_of

    path_of_file = Path(str(file))
    known = {fields.id for fields in fields_of(scenarios)}
    for name, spec in profiles.items():
        base: tuple[str | int, ...] = ("profiles", name)
        if name == FULL:
            collector.add(
                path_of_file,
                located.line_of(base),
                base,
                "'full' is every scenario and cannot be redefined; give this profile another name",
            )
            continue
        for index, sid in enumerate(spec.ids):
            if sid not in known:
                path = (*base, "ids", index)
                collector.add(path_of_file, located.line_of(path), path, f"no scenario '{sid}'")
        readable = True
        for index, expression in enumerate(spec.filters):
            try:
                select_scenarios([], [expression])
            except FilterError as error:
                readable = False
                path = (*base, "filters", index)
                collector.add(path_of_file, located.line_of(path), path, str(error))
        if readable and not spec.ids and not choose(scenarios, spec):
            collector.add(
                path_of_file, located.line_of(base), base, "selects no scenario of the benchmark"
            )
