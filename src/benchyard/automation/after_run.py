"""What happens when a run ends: compare it with the run before it, record the outcome on its
schedule's firing, and announce it to the webhooks that want it.

The baseline of a scheduled run is the previous finished run of the same schedule; of any other
run, the previous finished run of the same benchmark (name, version and content hash), agent and
scope (filters, limit, profile, epochs), not a rerun or a rescore. The comparison is
`benchyard compare BASELINE RUN`'s, and `run.regression` is sent exactly when
`--fail-on-regression` would exit 1 (report/compare.py `regression`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import select

from benchyard.automation import schedules
from benchyard.store.records import RunRecord
from benchyard.store.schema import runs
from benchyard.store.store import Store, run_from_row

if TYPE_CHECKING:  # a run that no schedule fired and no webhook wants loads none of these
    from benchyard.automation.webhook_config import WebhookConfig
    from benchyard.report.model import Comparison

DEFAULT_ALPHA = 0.05
SCOPE_KEYS = ("filters", "limit", "profile", "epochs")
Log = Callable[[str], None]


@dataclass(frozen=True)
class RunEnded:
    run_id: str
    baseline_run_id: str | None
    regression: bool | None
    deliveries: int  # webhook deliveries recorded


def handle_run_end(
    store: Store,
    hooks: Mapping[str, WebhookConfig],
    run_id: str,
    *,
    log: Log | None = None,
    now: datetime | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> RunEnded:
    say = log or (lambda message: None)
    run = store.get_run(run_id)
    firing = schedules.firing_for_run(store, run_id)
    wanted = _wanted_events(hooks, run) if hooks else []
    if run.kind != "benchmark" or (firing is None and not wanted):
        return RunEnded(run_id, None, None, 0)
    from benchyard.automation import events, webhooks
    from benchyard.report.build import build_report

    report = build_report(store, run)
    baseline: RunRecord | None = None
    if firing is not None:
        baseline = schedules.previous_run(store, firing)
    elif events.RUN_REGRESSION in wanted:
        baseline = previous_comparable(store, run)
    comparison, detail = _compare(store, baseline, run, alpha)
    regression = comparison.candidates[0].regression if comparison is not None else None
    if firing is not None:
        schedules.record_comparison(
            store, firing.id, baseline.id if baseline else None, regression, detail
        )
    payload = events.run_payload(run, report, comparison, firing.schedule_id if firing else None)
    made = webhooks.emit(
        store,
        hooks,
        events.RUN_FINISHED,
        payload,
        benchmark=run.benchmark_name,
        run_id=run.id,
        now=now,
    )
    if regression:
        say(f"run {run.id[:8]}: {detail}")
        made += webhooks.emit(
            store,
            hooks,
            events.RUN_REGRESSION,
            payload,
            benchmark=run.benchmark_name,
            run_id=run.id,
            now=now,
        )
    return RunEnded(run.id, baseline.id if baseline else None, regression, len(made))


def _wanted_events(hooks: Mapping[str, WebhookConfig], run: RunRecord) -> list[str]:
    from benchyard.automation import events

    return [e for e in (events.RUN_FINISHED, events.RUN_REGRESSION) if _wanted(hooks, e, run)]


def _wanted(hooks: Mapping[str, WebhookConfig], event: str, run: RunRecord) -> bool:
    return any(hook.wants(event, run.benchmark_name) for hook in hooks.values())


def _compare(
    store: Store, baseline: RunRecord | None, run: RunRecord, alpha: float
) -> tuple[Comparison | None, str]:
    from benchyard.errors import BenchyardError
    from benchyard.report.compare import compare_runs
    from benchyard.report.compare_render import verdict_line

    if baseline is None:
        return None, "no earlier run to compare with"
    try:
        comparison = compare_runs(store, [baseline, run], alpha=alpha)
    except BenchyardError as refused:
        return None, f"not compared with run {baseline.id[:8]}: {refused}"
    return comparison, verdict_line(comparison.candidates[0], alpha)


def previous_comparable(store: Store, run: RunRecord, scan: int = 50) -> RunRecord | None:
    """The newest finished run before `run` of the same benchmark contents, agent and scope."""
    query = (
        select(runs)
        .where(
            runs.c.benchmark_name == run.benchmark_name,
            runs.c.benchmark_hash == run.benchmark_hash,
            runs.c.agent_name == run.agent_name,
            runs.c.status == "finished",
            runs.c.started_at < run.started_at,
            runs.c.id != run.id,
            runs.c.parent_run_id.is_(None),
            runs.c.rescored_from.is_(None),
        )
        .order_by(runs.c.started_at.desc())
        .limit(scan)
    )
    with store.engine.connect() as connection:
        candidates = [run_from_row(row) for row in connection.execute(query)]
    scope = _scope(run)
    return next((found for found in candidates if _scope(found) == scope), None)


def _scope(run: RunRecord) -> tuple[object, ...]:
    settings = run.settings
    return tuple(
        tuple(settings.get(key) or ()) if key == "filters" else settings.get(key)
        for key in SCOPE_KEYS
    )
