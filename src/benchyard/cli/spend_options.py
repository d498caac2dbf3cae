"""`run --pilot N`, `--pilot-only`, `--budget USD`: options and the gate they build
(runner/spend.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

if TYPE_CHECKING:
    from benchyard.runner.spend import SpendGate

T = TypeVar("T")

PilotOption = Annotated[
    int | None,
    typer.Option(
        "--pilot",
        min=1,
        help="Run N attempts (a random sample stratified by category and app) first, then "
        "forecast the whole run's cost and time with a 95% interval, then go on.",
    ),
]
PilotOnlyOption = Annotated[
    bool,
    typer.Option(
        "--pilot-only",
        help="Stop after the pilot: the rest stays queued (`benchyard worker` finishes it).",
    ),
]
PilotSeedOption = Annotated[int, typer.Option("--pilot-seed", help="Seed of the pilot's sample.")]
BudgetOption = Annotated[
    float | None,
    typer.Option(
        "--budget",
        min=0.0,
        help="USD: start no attempt that would take the run's spend (agent and judge) past "
        "this, and stop the model-bridge call that does (that attempt: an uncounted error); "
        "the rest stays queued for `benchyard worker`.",
    ),
]
ForecastOutOption = Annotated[
    Path | None, typer.Option("--forecast-out", help="Write the pilot's forecast as JSON here.")
]


def spend_gate(
    plan: Sequence[T],
    concurrency: int,
    *,
    pilot: int | None,
    pilot_only: bool,
    pilot_seed: int,
    budget: float | None,
    enqueue: bool,
    forecast_out: Path | None,
) -> tuple[Sequence[T], SpendGate | None]:
    """The plan (the pilot's sample first) and the gate, or the plan as it is and None."""
    if pilot_only and pilot is None:
        raise typer.BadParameter("--pilot-only needs --pilot N", param_hint="--pilot-only")
    if pilot is None and budget is None:
        return plan, None
    if enqueue:
        raise typer.BadParameter(
            "--pilot and --budget apply to a run executed here, not to a queued one",
            param_hint="--enqueue",
        )
    from benchyard.runner.spend import SpendGate, pilot_order, scenario_stratum

    strata: dict[str, str] = {}
    population: dict[str, int] = {}
    for planned in plan:  # PlannedAttempt: its scenario's stratum (category, app)
        scenario = getattr(planned, "scenario", None)
        if scenario is not None:
            name = strata.setdefault(scenario.id, scenario_stratum(scenario))
            population[name] = population.get(name, 0) + 1
    if pilot is not None:
        plan = pilot_order(
            plan,
            pilot,
            pilot_seed,
            lambda item: strata.get(getattr(getattr(item, "scenario", None), "id", ""), ""),
        )
    gate = SpendGate(
        planned=len(plan),
        concurrency=concurrency,
        budget_usd=budget,
        pilot=pilot,
        pilot_only=pilot_only,
        strata=strata,
        population=population if sum(population.values()) == len(plan) else {},
    )

    def tell(forecast: object) -> None:
        from benchyard.runner.spend import Forecast

        assert isinstance(forecast, Forecast)
        typer.echo(forecast.describe(), err=True)
        if forecast_out is not None:
            forecast_out.parent.mkdir(parents=True, exist_ok=True)
            forecast_out.write_text(
                json.dumps(forecast.to_json(), indent=2) + "\n", encoding="utf-8"
            )

    gate.on_forecast(tell)
    return plan, gate


def tell_stopped(gate: SpendGate | None) -> None:
    if gate is not None and gate.stop_reason is not None:
        typer.echo(f"stopped: {gate.stop_reason}", err=True)
