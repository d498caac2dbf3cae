"""What `run` tells CI before and after its attempts: `--fail-under` counts errors as failures
unless `--fail-under-excludes-errors`; an agent command that cannot be found is refused before any
attempt (exit 2, one line); a run whose every attempt failed to start exits non-zero; a run that
prints no report (`-q`) exits as its report would say."""

from __future__ import annotations

import json
from dataclasses import astuple
from pathlib import Path

from benchyard.cli.run_commands import Threshold, run_failure
from benchyard.report.build import build_report
from benchyard.report.gate import FinalCounts, GateOn
from benchyard.store.store import Store
from tests.support import UNSANDBOXED, Cli, scenario, write_benchmark


def _half_unreferenced(root: Path) -> Path:
    """Two scenarios the oracle can replay, two it cannot (an error each: no reference)."""
    referenced = [scenario("a", "a"), scenario("b", "b")]
    bare = [
        {"id": sid, "stimulus": "?", "checks": [{"type": "equals", "value": "x"}]} for sid in "cd"
    ]
    return write_benchmark(root, [*referenced, *bare])


def test_fail_under_counts_errors_as_failures_unless_told_not_to(tmp_path: Path, cli: Cli) -> None:
    bench = _half_unreferenced(tmp_path / "b")
    gated = cli("run", str(bench), "--agent", "oracle", "-q", "--fail-under", "0.8")
    assert gated.exit_code == 1, gated.output
    assert (
        "below threshold: accuracy 50.0% is under --fail-under 80.0% (2/4 passed, 2 errors "
        "counted as failed; --fail-under-excludes-errors leaves them out)"
    ) in gated.stderr
    summary = json.loads(cli("report", "latest", "--format", "json").output)["summary"]
    assert (summary["accuracy"], summary["errors"]) == (1.0, 2)  # reports leave them out
    excluded = cli(
        "run", str(bench), "--agent", "oracle", "-q", "--fail-under", "0.8",
        "--fail-under-excludes-errors",
    )  # fmt: skip
    assert excluded.exit_code == 0, excluded.output
    # On the lower bound too: 2/4 gives [15%, 85%], 2/2 (errors left out) gives [34%, 100%].
    for extra, code in (((), 1), (("--fail-under-excludes-errors",), 0)):
        bound = cli(
            "run", str(bench), "--agent", "oracle", "-q", "--fail-under", "0.3",
            "--fail-under-on", "lower-bound", *extra,
        )  # fmt: skip
        assert bound.exit_code == code, bound.output


def test_a_missing_agent_program_is_refused_before_any_attempt(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = write_benchmark(tmp_path / "b", [scenario("a", "a")])
    for command, missing in [
        ("pyhton3 agent.py", "pyhton3"),
        ("FOO=1 BAR='x y' no-such-agent --flag", "no-such-agent"),
        (f"{tmp_path}/nowhere/agent.sh", f"{tmp_path}/nowhere/agent.sh"),
    ]:
        result = cli("run", str(bench), "--agent-cmd", command, "-q", *UNSANDBOXED)
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith("error: the agent's command cannot run: ")
        assert missing in lines[0]
        assert "Traceback" not in result.output
    assert store.list_runs() == []  # refused before anything was recorded


def test_a_program_that_is_not_executable_is_refused(tmp_path: Path, cli: Cli) -> None:
    bench = write_benchmark(tmp_path / "b", [scenario("a", "a")])
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\necho a\n")
    script.chmod(0o644)
    result = cli("run", str(bench), "--agent-cmd", str(script), "-q", *UNSANDBOXED)
    assert result.exit_code == 2, result.output
    assert "is not executable" in result.stderr and str(script) in result.stderr


def test_shell_syntax_and_builtins_are_left_to_the_shell(tmp_path: Path, cli: Cli) -> None:
    """What cannot be resolved without running a shell is not refused: `cd x && ...`, `$VAR`,
    `exec`, a subshell; they run, and fail or pass as the shell decides."""
    bench = write_benchmark(tmp_path / "b", [scenario("a", "a")])
    for command in ("echo a", "exec echo a", "$(echo echo) a", "(echo a)", "cd . && echo a"):
        result = cli("run", str(bench), "--agent-cmd", command, "-q", *UNSANDBOXED)
        assert result.exit_code == 0, (command, result.output)


def test_a_run_whose_every_attempt_failed_to_start_exits_non_zero(tmp_path: Path, cli: Cli) -> None:
    """The preflight cannot see through shell syntax; the run itself then says nothing started."""
    bench = write_benchmark(tmp_path / "b", [scenario("a", "a"), scenario("b", "b")])
    command = "cd . && pyhton3 agent.py"
    result = cli(
        "run", str(bench), "--agent-cmd", command, "-q", "--retries", "0", *UNSANDBOXED
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    told = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(told) == 1, result.stderr
    assert told[0].startswith(
        "error: no attempt started: all 2 final attempts ended in agent_start; the first: "
        "agent command could not run (exit 127): "
    )
    assert "pyhton3: not found" in told[0]


def test_a_quiet_run_exits_from_its_counts_as_its_report_would_say(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    """`run -q` builds no report: its exit status comes from its final attempts counted by verdict,
    which must say what the report's summary says, for every gate."""
    wrong = {
        "id": "w",
        "stimulus": "?",
        "checks": [{"type": "equals", "value": "x"}],
        "reference": "y",
    }
    bare = {"id": "e", "stimulus": "?", "checks": [{"type": "equals", "value": "x"}]}
    benchmarks = {
        "passes": [scenario("a", "a")],
        "mixed": [scenario("a", "a"), scenario("b", "b"), wrong, bare],
        "errors": [bare],
    }
    thresholds = [Threshold(None, GateOn.accuracy)] + [
        Threshold(rate, on, excluded)
        for rate in (0.4, 0.6, 0.9)
        for on in GateOn
        for excluded in (False, True)
    ]
    codes = {}
    for name, scenarios in benchmarks.items():
        result = cli(
            "run", str(write_benchmark(tmp_path / name, scenarios)), "--agent", "oracle", "-q"
        )
        run = store.resolve_run("latest")
        report = build_report(store, run)
        counts = FinalCounts.of(store.final_verdict_kinds(run.id))
        summary = report.summary
        assert astuple(counts)[:5] == (
            summary.attempt_count,
            summary.passed,
            summary.failed,
            summary.timeouts,
            summary.errors,
        )
        assert counts.counted == summary.counted
        for threshold in thresholds:
            assert run_failure(store, run, None, threshold) == run_failure(
                store, run, report, threshold
            ), (name, threshold)
        codes[name] = result.exit_code
    assert codes == {"passes": 0, "mixed": 0, "errors": 3}
