"""Building a speed run's report from the store: figures, findings and confidence are computed
from the recorded samples and environment every time, so a report never drifts from its data."""

from __future__ import annotations

from collections import Counter

from benchyard.errors import BenchyardError
from benchyard.speed.figures import length_figures, level_figures, prefill_fit, saturation
from benchyard.speed.models import Environment, SpeedReport, SpeedRunInfo, options_of
from benchyard.speed.plausibility import confidence, findings
from benchyard.speed.records import SPEED_KIND, load_samples
from benchyard.store.records import RunRecord
from benchyard.store.store import Store

SHOWN_ERRORS = 10


class NotASpeedRun(BenchyardError):
    """A benchmark run given where a speed run is needed, or the other way round."""


def is_speed(run: RunRecord) -> bool:
    return getattr(run, "kind", "benchmark") == SPEED_KIND


def run_info(run: RunRecord) -> SpeedRunInfo:
    environment = run.settings.get("environment") or {}
    return SpeedRunInfo(
        id=run.id,
        status=run.status,
        agent=run.agent_name,
        model=str(environment.get("model") or run.agent_config.get("model") or "?"),
        base_url=str(environment.get("base_url") or "?"),
        commit=run.agent_commit,
        dirty=run.agent_dirty,
        host=run.host,
        benchyard_version=run.benchyard_version,
        started_at=run.started_at,
        finished_at=run.finished_at,
        protocol=f"{run.benchmark_version} ({run.benchmark_hash[:19]})",
        options=options_of(run.settings),
    )


def build_speed_report(store: Store, run: RunRecord) -> SpeedReport:
    if not is_speed(run):
        raise NotASpeedRun(f"run {run.id[:8]} is a benchmark run, not a speed run")
    options = options_of(run.settings)
    environment = Environment.model_validate(run.settings["environment"])
    samples = load_samples(store, run.id)
    lengths = length_figures(samples, options)
    found = findings(samples, options, environment, lengths)
    levels = level_figures(samples, options)
    measured = [s for s in samples if s.phase != "warmup"]
    return SpeedReport(
        run=run_info(run),
        environment=environment,
        lengths=lengths,
        prefill_fit=prefill_fit(lengths),
        concurrency=levels,
        saturation=saturation(levels),
        findings=found,
        confidence=confidence(samples, options, environment, lengths, found),
        samples=len(measured),
        usage_sources=dict(Counter(s.usage_source for s in measured if s.error is None)),
        retries=sum(s.retries for s in measured),
        errors=[s.error for s in measured if s.error][:SHOWN_ERRORS],
    )
