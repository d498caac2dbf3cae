"""A benchmark's accuracy over its runs, or by commit (the runs of one commit pooled), per agent
and per category, with its Wilson interval. Runs of another content hash, and runs of part of the
benchmark (filters, a limit, a rerun), are never pooled with the others: a commit's runs are pooled
only when they share agent, content hash and whole-or-part. By commit, a rerun of the same agent,
commit and content hash is merged into the run it re-ran as `benchyard report --merged` merges it
(its attempts replace those they re-ran), so that a commit is one point and one x position."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Literal
from urllib.parse import urlencode

from benchyard.report.build import build_report
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
    merged: list[RunRecord] = field(default_factory=list)  # reruns merged into `runs`

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
    reruns: dict[str, list[RunRecord]] = {}
    if by == "commit":
        chosen, tallies, reruns = _merge_reruns(store, chosen, tallies)
    groups = _groups(chosen, by, reruns)
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


def _merge_reruns(
    store: Store, runs: list[RunRecord], tallies: dict[str, dict[str, CategoryTally]]
) -> tuple[list[RunRecord], dict[str, dict[str, CategoryTally]], dict[str, list[RunRecord]]]:
    """The runs less the reruns merged into the run they re-ran; that run's tallies are those of
    `report --merged` on its latest rerun (each rerun's attempts replace those it re-ran); and
    which reruns each merged run took in (oldest first)."""
    by_id = {run.id: run for run in runs}
    reruns: dict[str, list[RunRecord]] = {}
    for run in runs:  # oldest first: the last rerun of a chain is the one merged
        root = _root(run, by_id)
        if root is not None:
            reruns.setdefault(root.id, []).append(run)
    if not reruns:
        return runs, tallies, {}
    merged = dict(tallies)
    for root_id, chain in reruns.items():
        report = build_report(store, chain[-1], merged=True)
        merged[root_id] = {
            name: CategoryTally(counts.passed, counts.counted, counts.errors)
            for name, counts in report.categories.items()
        }
    taken = {run.id for chain in reruns.values() for run in chain}
    return [run for run in runs if run.id not in taken], merged, reruns


def _root(run: RunRecord, by_id: dict[str, RunRecord]) -> RunRecord | None:
    """The run `run` re-ran, through reruns, when every run of the chain is shown, of the same
    agent, commit and content hash, and it starts with a run of its own (no parent); else None."""
    if not run.parent_run_id:
        return None
    current = run
    while current.parent_run_id:
        parent = by_id.get(current.parent_run_id)
        if parent is None or (parent.agent_name, parent.agent_commit, parent.benchmark_hash) != (
            run.agent_name,
            run.agent_commit,
            run.benchmark_hash,
        ):
            return None
        current = parent
    return current


def _groups(
    runs: Sequence[RunRecord], by: str, reruns: dict[str, list[RunRecord]] | None = None
) -> list[_Group]:
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
            group = by_key[group.key]
        else:
            by_key[group.key] = group
            groups.append(group)
        group.runs.append(run)
        group.merged += (reruns or {}).get(run.id, [])
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
        run_ids=[run.id for run in (*group.runs, *group.merged)],
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
    slot_of, labels = _slots(groups, by)
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
        labels,
        plotted,
        sorted({group.agent for group in groups}),
        _hash_changes(groups, slot_of),
    )


def _slots(groups: list[_Group], by: str) -> tuple[dict[int, int], list[str]]:
    """Each group's x position, and the positions' labels (each different): by run, one position
    per run; by commit, one per commit, shared by its agents' points."""
    slot_of: dict[int, int] = {}
    labels: list[str] = []
    by_commit: dict[str | None, int] = {}
    for group in groups:
        if by == "commit":
            if group.commit not in by_commit:
                by_commit[group.commit] = len(labels)
                labels.append((group.commit or NO_COMMIT)[:8])
            slot_of[id(group)] = by_commit[group.commit]
        else:
            slot_of[id(group)] = len(labels)
            labels.append(group.runs[0].started_at.strftime("%m-%d %H:%M"))
    return slot_of, unique_labels(labels)


def unique_labels(labels: list[str]) -> list[str]:
    """The labels, a repeated one followed by its count (`11-30 12:00`, `11-30 12:00 (2)`)."""
    seen: dict[str, int] = {}
    shown = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        shown.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return shown


def _hash_changes(groups: list[_Group], slot_of: dict[int, int]) -> list[tuple[int, str]]:
    """(position, label) where the benchmark's content hash differs from the position before's."""
    first_at: dict[int, _Group] = {}
    for group in groups:
        first_at.setdefault(slot_of[id(group)], group)
    changes = []
    slots = sorted(first_at)
    for before, after in pairwise(slots):
        old, new = first_at[before], first_at[after]
        if old.content_hash != new.content_hash:
            changes.append(
                (after, f"{new.version} ({new.content_hash.removeprefix('sha256:')[:8]})")
            )
    return changes


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
