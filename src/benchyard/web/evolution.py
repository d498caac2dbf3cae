"""A benchmark's accuracy over its runs, or by commit (the runs of one commit pooled), per agent
and per category, with its Wilson interval. Runs of another content hash, and runs of part of the
benchmark (filters, a limit, a rerun), are never pooled with the others: a commit's runs are pooled
only when they share agent, content hash and whole-or-part."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlencode

from benchyard.report.stats import wilson_interval
from benchyard.store.browse import CategoryTally, RunFilter, category_tallies, list_runs
from benchyard.store.records import RunRecord
from benchyard.store.store import Store
from benchyard.web.charts import Plotted, accuracy_chart
from benchyard.web.models import Chart, Evolution, EvolutionPoint
from benchyard.web.rows import ACTIVE, is_subset

MAX_RUNS = 500
NO_COMMIT = "(no commit)"


@dataclass
class _Group:
    """Runs pooled into one point."""

    agent: str
    commit: str | None
    version: str
    content_hash: str
    subset: bool
    runs: list[RunRecord] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str | None, str, bool]:
        return self.agent, self.commit, self.content_hash, self.subset


def evolution(
    store: Store,
    benchmark: str,
    *,
    agent: str | None = None,
    by: Literal["run", "commit"] = "run",
) -> Evolution:
    newest_first, _ = list_runs(store, RunFilter(benchmark=benchmark), limit=MAX_RUNS)
    everyone = [run for run in reversed(newest_first) if run.status not in ACTIVE]
    agents = sorted({run.agent_name for run in everyone})
    chosen = [run for run in everyone if agent in (None, "", run.agent_name)]
    tallies = category_tallies(store, [run.id for run in chosen])
    groups = _groups(chosen, by)
    categories = sorted({name for per_run in tallies.values() for name in per_run})
    points = [
        point
        for category in (None, *categories)
        for point in (_point(group, tallies, category, by) for group in groups)
        if point is not None
    ]
    return Evolution(
        by=by,
        agent=agent or "",
        agents=agents,
        categories=categories,
        points=points,
        charts=[
            _chart(benchmark, groups, points, category, by) for category in (None, *categories)
        ],
    )


def _groups(runs: Sequence[RunRecord], by: str) -> list[_Group]:
    groups: list[_Group] = []
    by_key: dict[tuple[str, str | None, str, bool], _Group] = {}
    for run in runs:
        group = _Group(
            run.agent_name,
            run.agent_commit,
            run.benchmark_version,
            run.benchmark_hash,
            is_subset(run),
        )
        if by == "commit" and group.key in by_key:
            by_key[group.key].runs.append(run)
            continue
        group.runs.append(run)
        by_key[group.key] = group
        groups.append(group)
    return groups


def _point(
    group: _Group,
    tallies: dict[str, dict[str, CategoryTally]],
    category: str | None,
    by: str,
) -> EvolutionPoint | None:
    passed = counted = 0
    for run in group.runs:
        per_category = tallies.get(run.id, {})
        chosen = per_category.values() if category is None else [per_category.get(category)]
        for tally in chosen:
            if tally is not None:
                passed += tally.passed
                counted += tally.counted
    if counted == 0:
        return None
    first = group.runs[0]
    return EvolutionPoint(
        agent=group.agent,
        category=category,
        key=first.id if by == "run" else (group.commit or NO_COMMIT),
        run_ids=[run.id for run in group.runs],
        commit=group.commit,
        version=group.version,
        benchmark_hash=group.content_hash,
        started_at=first.started_at,
        subset=group.subset,
        passed=passed,
        counted=counted,
        accuracy=passed / counted,
        accuracy_ci95=wilson_interval(passed, counted),
    )


def _chart(
    benchmark: str,
    groups: list[_Group],
    points: list[EvolutionPoint],
    category: str | None,
    by: str,
) -> Chart:
    slot_of = {id(group): slot for slot, group in enumerate(groups)}
    mine = [point for point in points if point.category == category]
    by_first_run = {group.runs[0].id: group for group in groups}
    plotted = []
    for point in mine:
        group = by_first_run[point.run_ids[0]]
        low, high = point.accuracy_ci95 or (0.0, 0.0)
        plotted.append(
            Plotted(
                slot=slot_of[id(group)],
                series=point.agent,
                accuracy=point.accuracy or 0.0,
                low=low,
                high=high,
                content_hash=point.benchmark_hash,
                subset=point.subset,
                title=_title(point),
                href=_href(benchmark, point, by),
            )
        )
    return accuracy_chart(
        f"accuracy{f' — {category}' if category else ''}, by {by}",
        [_slot_label(group, by) for group in groups],
        plotted,
        sorted({group.agent for group in groups}),
        _hash_changes(groups),
    )


def _hash_changes(groups: list[_Group]) -> list[tuple[int, str]]:
    changes = []
    for slot in range(1, len(groups)):
        before, after = groups[slot - 1], groups[slot]
        if before.content_hash != after.content_hash:
            changes.append(
                (slot, f"{after.version} ({after.content_hash.removeprefix('sha256:')[:8]})")
            )
    return changes


def _slot_label(group: _Group, by: str) -> str:
    if by == "commit":
        return (group.commit or NO_COMMIT)[:8]
    return group.runs[0].started_at.strftime("%m-%d %H:%M")


def _title(point: EvolutionPoint) -> str:
    low, high = point.accuracy_ci95 or (0.0, 0.0)
    parts = [
        point.agent,
        f"{len(point.run_ids)} runs" if len(point.run_ids) > 1 else f"run {point.run_ids[0][:8]}",
        f"commit {point.commit[:10]}" if point.commit else NO_COMMIT,
        f"{100 * (point.accuracy or 0):.1f}% [{100 * low:.1f}, {100 * high:.1f}]",
        f"{point.passed}/{point.counted}",
        f"{point.version} {point.benchmark_hash[:19]}",
    ]
    if point.subset:
        parts.append("part of the benchmark")
    return " · ".join(parts)


def _href(benchmark: str, point: EvolutionPoint, by: str) -> str:
    if by == "run" or len(point.run_ids) == 1:
        return f"/runs/{point.run_ids[0]}"
    query = {"benchmark": benchmark, "agent": point.agent, "commit": point.commit or ""}
    return f"/runs?{urlencode(query)}"
