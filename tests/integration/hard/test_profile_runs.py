"""`run --profile`: the run records its profile, reports state it, `compare` refuses runs of
different profiles unless told, and `history` marks each run's profile."""

from __future__ import annotations

import json

from tests.support import Cli, write_benchmark


def _bench(cli: Cli) -> str:
    scenarios = [
        {"id": f"{category}-{i}", "category": category, "stimulus": "x", "reference": "x",
         "checks": [{"type": "equals", "value": "x"}]}
        for category in ("alpha", "beta")
        for i in range(5)
    ]  # fmt: skip
    return str(write_benchmark(cli.cwd / "bench", scenarios))


def test_a_profile_run_says_so_and_is_never_compared_silently(cli: Cli) -> None:
    bench = _bench(cli)
    quick = cli("run", bench, "--agent", "oracle", "--profile", "quick", "-q")
    assert quick.exit_code == 0, quick.output
    full = cli("run", bench, "--agent", "oracle", "-q")
    assert full.exit_code == 0, full.output

    report = json.loads(cli("report", "latest~1", "--format", "json").output)
    assert report["run"]["settings"]["profile"] == "quick"
    assert report["summary"]["attempt_count"] == 4
    assert "(profile quick)" in cli("report", "latest~1", "--format", "md").output
    assert "(profile full)" in cli("report", "latest").output
    assert (
        "(profiles differ: quick, full)"
        in cli("report", "latest~1", "latest", "--format", "md").output
    )

    refused = cli("compare", "latest~1", "latest")
    assert refused.exit_code == 2
    assert "different profile" in refused.output and "profile quick" in refused.output
    allowed = cli("compare", "latest~1", "latest", "--allow-version-mismatch")
    assert allowed.exit_code == 0, allowed.output

    history = json.loads(cli("history", "fixture-bench", "--format", "json", db=True).output)
    assert [point["scope"] for point in history] == ["profile quick", "all scenarios"]
    assert [point["partial"] for point in history] == [True, False]


def test_an_unknown_profile_is_refused_before_anything_runs(cli: Cli) -> None:
    bench = _bench(cli)
    result = cli("run", bench, "--agent", "oracle", "--profile", "nightly")
    assert result.exit_code == 2
    assert "no profile 'nightly'" in result.output and "quick, standard, full" in result.output
    assert "no runs yet" in cli("runs").output
