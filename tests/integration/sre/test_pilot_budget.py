"""`run --budget` stops a run at its budget and `benchyard worker` finishes it; `run --pilot`
forecasts the whole run's cost with an interval that brackets what it really cost. Costs are
scripted: the fake OpenAI-compatible server reports the token usage each scenario's reply
carries, and benchyard.yaml prices them."""

from __future__ import annotations

import json
from pathlib import Path

from benchyard.store.queue import Queue
from benchyard.store.store import Store
from tests.integration.providers.conftest import StartFake, write_project
from tests.support import Cli, scenario, write_benchmark

USD_PER_TOKEN = 1.0 / 1_000_000  # agent-model's input price in write_project


def priced_benchmark(
    root: Path, costs: list[float], categories: list[str] | None = None
) -> tuple[Path, dict[str, object]]:
    """One scenario per cost (in `categories`, else all `general`); the fake model's reply to it
    is right and costs exactly that."""
    scenarios = [
        scenario(f"s{index:02d}", f"w{index:02d}", category=(categories or [])[index])
        if categories
        else scenario(f"s{index:02d}", f"w{index:02d}")
        for index in range(len(costs))
    ]
    replies = [
        {
            "match": f"say w{index:02d}",
            "content": f"w{index:02d}",
            "prompt_tokens": round(cost / USD_PER_TOKEN),
            "completion_tokens": 0,
        }
        for index, cost in enumerate(costs)
    ]
    return write_benchmark(root, scenarios), {"replies": replies}


def test_budget_stops_the_run_and_a_worker_finishes_it(
    tmp_path: Path, cli: Cli, store: Store, fake_llm: StartFake
) -> None:
    bench, script = priced_benchmark(tmp_path / "bench", [0.10] * 10)
    write_project(cli.cwd, fake_llm(script).url)
    result = cli("run", str(bench), "--agent", "model", "-j", "1", "--budget", "0.35", "-q")
    assert result.exit_code == 0, result.output
    assert "stopped: budget $0.35 reached: $0.3000 spent" in result.output
    run = store.resolve_run("latest")
    assert run.status == "queued"
    assert run.status_reason and "7 attempts left queued" in run.status_reason
    done = store.attempts(run.id)
    assert len(done) == 3 and sum(a.cost_usd or 0 for a in done) <= 0.35
    assert Queue(store).scenario_ids(run.id) == {f"s{i:02d}" for i in range(10)}

    drained = cli("worker", "--drain")
    assert drained.exit_code == 0, drained.output
    finished = store.get_run(run.id)
    assert finished.status == "finished" and finished.status_reason is None
    attempts = store.attempts(run.id)
    assert sorted(a.scenario_id for a in attempts) == [f"s{i:02d}" for i in range(10)]
    assert all(a.verdict == "passed" for a in attempts)


def test_budget_with_concurrency_never_passes_it(
    tmp_path: Path, cli: Cli, store: Store, fake_llm: StartFake
) -> None:
    bench, script = priced_benchmark(tmp_path / "bench", [0.10] * 12)
    write_project(cli.cwd, fake_llm(script).url)
    result = cli("run", str(bench), "--agent", "model", "-j", "4", "--budget", "0.5", "-q")
    assert result.exit_code == 0, result.output
    run = store.resolve_run("latest")
    spent = sum(a.cost_usd or 0 for a in store.attempts(run.id))
    assert 0 < spent <= 0.5
    assert run.status == "queued"


def test_the_pilot_forecast_brackets_the_real_cost(
    tmp_path: Path, cli: Cli, store: Store, fake_llm: StartFake
) -> None:
    costs = [0.01 * (1 + (index * 7) % 5) for index in range(30)]  # 0.01 to 0.05, mixed
    bench, script = priced_benchmark(tmp_path / "bench", costs)
    write_project(cli.cwd, fake_llm(script).url)
    out = tmp_path / "forecast.json"
    result = cli(
        "run",
        str(bench),
        "--agent",
        "model",
        "-j",
        "3",
        "--pilot",
        "8",
        "--forecast-out",
        str(out),
        "-q",
    )
    assert result.exit_code == 0, result.output
    assert "pilot: 8 of 30 attempts cost" in result.output
    forecast = json.loads(out.read_text(encoding="utf-8"))
    run = store.resolve_run("latest")
    assert run.status == "finished"
    real = sum(a.cost_usd or 0 for a in store.attempts(run.id))
    assert abs(real - sum(costs)) < 1e-9
    low, high = forecast["cost_usd"]["low"], forecast["cost_usd"]["high"]
    assert low <= real <= high, (low, real, high)
    assert high - low < real  # an interval that says something
    assert forecast["wall_sec"]["value"] > 0


def test_pilot_only_leaves_the_rest_queued(
    tmp_path: Path, cli: Cli, store: Store, fake_llm: StartFake
) -> None:
    bench, script = priced_benchmark(tmp_path / "bench", [0.02] * 6)
    write_project(cli.cwd, fake_llm(script).url)
    result = cli("run", str(bench), "--agent", "model", "--pilot", "2", "--pilot-only", "-q")
    assert result.exit_code == 0, result.output
    run = store.resolve_run("latest")
    assert (run.status, len(store.attempts(run.id))) == ("queued", 2)
    assert cli("worker", "--drain").exit_code == 0
    assert len(store.attempts(run.id)) == 6


def test_pilot_and_budget_refuse_a_queued_run(
    tmp_path: Path, cli: Cli, fake_llm: StartFake
) -> None:
    bench, script = priced_benchmark(tmp_path / "bench", [0.02] * 2)
    write_project(cli.cwd, fake_llm(script).url)
    result = cli("run", str(bench), "--agent", "model", "--budget", "1", "--enqueue")
    assert result.exit_code == 2
    assert "not to a queued one" in result.output


def test_the_pilot_samples_every_category_and_its_interval_is_honest(
    tmp_path: Path, cli: Cli, store: Store, fake_llm: StartFake
) -> None:
    """Issue 22, item 9: 18 cheap attempts of one category at one price, 3 dearer and 3 dearest in
    two others. A simple random pilot of 6 (seed 0) drew only cheap ones and forecast $0.24 with
    a zero-width interval against $1.38 spent; the stratified pilot draws from every category and
    its interval holds the real cost, with a width."""
    costs = [0.01] * 18 + [0.10] * 3 + [0.30] * 3
    categories = ["easy"] * 18 + ["hard"] * 3 + ["long"] * 3
    bench, script = priced_benchmark(tmp_path / "bench", costs, categories)
    write_project(cli.cwd, fake_llm(script).url)
    out = tmp_path / "forecast.json"
    result = cli(
        "run", str(bench), "--agent", "model", "--pilot", "6", "--forecast-out", str(out), "-q"
    )
    assert result.exit_code == 0, result.output
    assert "pilot: 6 of 24 attempts (drawn from 3 strata) cost" in result.output
    forecast = json.loads(out.read_text(encoding="utf-8"))
    run = store.resolve_run("latest")
    pilot = sorted(store.attempts(run.id), key=lambda a: a.started_at)[:6]
    assert {a.category for a in pilot} == {"easy", "hard", "long"}
    real = sum(a.cost_usd or 0 for a in store.attempts(run.id))
    assert abs(real - sum(costs)) < 1e-9
    low, high = forecast["cost_usd"]["low"], forecast["cost_usd"]["high"]
    assert low is not None and high is not None
    assert low <= real <= high and high > low, (low, real, high)
    assert forecast["strata"] == 3
