"""Speed next to ability: one table, one row per agent (a model), from the speed runs and benchmark
runs given to `benchyard report` together. Speed: time to first token, decode and prefill speed
at the sweep's prompt length, the highest aggregate throughput, and the figures' confidence.
Ability: each benchmark category's raw counts and accuracy, columns named benchmark/category."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from pydantic import Field

from benchyard.report.build import build_report
from benchyard.report.render import md_cell, percent
from benchyard.speed.models import SpeedModel
from benchyard.speed.render import ms_text, rate_text
from benchyard.speed.report import build_speed_report, is_speed
from benchyard.store.records import RunRecord
from benchyard.store.store import Store

if TYPE_CHECKING:
    from rich.console import RenderableType


class AbilityCell(SpeedModel):
    raw: str = Field(description="passed/counted")
    accuracy: float | None
    run_id: str


class ModelRow(SpeedModel):
    agent: str
    model: str | None
    speed_run: str | None
    confidence: str | None
    ttft_ms: float | None = Field(description="Median, at the sweep's prompt length.")
    decode_tps: float | None = Field(description="Median, one call at a time, same length.")
    prefill_tps: float | None = Field(description="From the slope of TTFT over prompt lengths.")
    aggregate_tps: float | None = Field(description="The highest concurrency level's.")
    aggregate_concurrency: int | None
    ability: dict[str, AbilityCell] = Field(description="By benchmark/category.")
    profiles: dict[str, str | None] = Field(
        default_factory=dict, description="Each benchmark's profile in the run used."
    )


class ModelsTable(SpeedModel):
    schema_version: str = "1"
    kind: str = "models"
    columns: list[str] = Field(description="benchmark/category, in order.")
    rows: list[ModelRow]
    notes: list[str]


def models_table(store: Store, runs: Sequence[RunRecord]) -> ModelsTable:
    """Rows by agent, in the order first given; the first run given of each agent per speed and
    per benchmark is used (a later one is named in the notes)."""
    rows: dict[str, ModelRow] = {}
    notes: list[str] = []
    columns: dict[str, None] = {}
    for run in runs:
        row = rows.setdefault(
            run.agent_name,
            ModelRow(
                agent=run.agent_name,
                model=_model(run),
                speed_run=None,
                confidence=None,
                ttft_ms=None,
                decode_tps=None,
                prefill_tps=None,
                aggregate_tps=None,
                aggregate_concurrency=None,
                ability={},
            ),
        )
        if is_speed(run):
            if row.speed_run is not None:
                notes.append(f"{run.agent_name}: speed run {run.id[:8]} left out (one per agent)")
                continue
            _add_speed(row, store, run)
            continue
        if run.benchmark_name in row.profiles:
            notes.append(
                f"{run.agent_name}: run {run.id[:8]} of {run.benchmark_name} left out "
                "(one per agent and benchmark)"
            )
            continue
        report = build_report(store, run)
        row.profiles[run.benchmark_name] = run.settings.get("profile")
        for category, counts in report.categories.items():
            key = f"{run.benchmark_name}/{category}"
            columns[key] = None
            row.ability[key] = AbilityCell(raw=counts.raw, accuracy=counts.accuracy, run_id=run.id)
    _profile_notes(rows.values(), notes)
    return ModelsTable(columns=list(columns), rows=list(rows.values()), notes=notes)


def _model(run: RunRecord) -> str | None:
    model = run.agent_config.get("model")
    return model if isinstance(model, str) else None


def _add_speed(row: ModelRow, store: Store, run: RunRecord) -> None:
    report = build_speed_report(store, run)
    row.speed_run, row.confidence = run.id, report.confidence.level
    middle = next((f for f in report.lengths if f.label == report.run.options.level_length), None)
    if middle is not None:
        row.ttft_ms = middle.ttft_sec.median * 1000 if middle.ttft_sec else None
        row.decode_tps = middle.decode_tps.median if middle.decode_tps else None
    row.prefill_tps = report.prefill_fit.prefill_tps if report.prefill_fit else None
    if report.concurrency:
        top = report.concurrency[-1]
        row.aggregate_tps, row.aggregate_concurrency = top.aggregate_tps, top.concurrency


def _profile_notes(rows: Iterable[ModelRow], notes: list[str]) -> None:
    """Say so when one benchmark's runs were of different profiles (never mixed silently)."""
    by_benchmark: dict[str, set[str | None]] = {}
    for row in rows:
        for benchmark, profile in row.profiles.items():
            by_benchmark.setdefault(benchmark, set()).add(profile)
    for benchmark, profiles in by_benchmark.items():
        if len(profiles) > 1:
            shown = ", ".join(sorted(p or "full" for p in profiles))
            notes.append(
                f"{benchmark}: the runs are of different profiles ({shown}): its columns do not "
                "compare like with like"
            )


HEAD = ("agent", "model", "TTFT ms", "decode tok/s", "prefill tok/s", "throughput tok/s", "speed")


def _cells(table: ModelsTable, row: ModelRow) -> list[str]:
    throughput = (
        "—"
        if row.aggregate_tps is None
        else f"{rate_text(row.aggregate_tps)} @{row.aggregate_concurrency}"
    )
    speed = [
        ms_text(row.ttft_ms / 1000) if row.ttft_ms is not None else "—",
        rate_text(row.decode_tps),
        rate_text(row.prefill_tps),
        throughput,
        row.confidence or "—",
    ]
    ability = []
    for column in table.columns:
        cell = row.ability.get(column)
        ability.append("—" if cell is None else f"{cell.raw} ({percent(cell.accuracy)})")
    return [row.agent, row.model or "—", *speed, *ability]


def _headers(table: ModelsTable) -> list[str]:
    return [*HEAD, *table.columns]


def models_markdown(table: ModelsTable) -> str:
    headers = _headers(table)
    lines = [
        "# Models: speed and ability",
        "",
        "| " + " | ".join(md_cell(h) for h in headers) + " |",
        "|" + "---|" * len(headers),
    ]
    for row in table.rows:
        lines.append("| " + " | ".join(md_cell(cell) for cell in _cells(table, row)) + " |")
    lines.append("")
    lines += [f"- {md_cell(note)}" for note in table.notes]
    return "\n".join(lines) + "\n"


def models_rich(table: ModelsTable) -> list[RenderableType]:
    from rich.table import Table
    from rich.text import Text

    rich_table = Table(title="models: speed and ability")
    for header in _headers(table):
        rich_table.add_column(header)
    for row in table.rows:
        rich_table.add_row(*(Text(cell) for cell in _cells(table, row)))
    return [rich_table, *(Text(note) for note in table.notes)]
