"""Run gates against errors an agent can cause (issue 26, item 9): `--fail-under` counts errors as
failures unless told otherwise.

Most answers built to crash a check now fail it, counted (test_hostile_answers.py). One stays an
uncounted error, since benchyard cannot tell it from a misconfigured judge: an answer long enough
for the judge's endpoint to refuse the request (HTTP 400, over its context). An agent that knows
half the answers and sends such an answer for the rest has every graded attempt right, so its
reported accuracy is 100%; before, `run --fail-under 0.8` passed it. The gate now counts those
errors as failures, and leaves them out only when `--fail-under-excludes-errors` says so."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from benchyard.providers.fake_server import FakeLLM
from benchyard.store.store import Store
from tests.support import UNSANDBOXED, Cli, write_benchmark

MARKER = "flood-the-judge"
AGENT = """
import os, sys
number = int(os.environ["BENCHYARD_SCENARIO_ID"][1:])
print("Paris" if number < 2 else "%s " % sys.argv[1] * 20000)
"""
JUDGE = {
    "replies": [  # the judge's endpoint refuses the long answer, as one over its context would
        {"match": MARKER, "status": 400, "content": "This model's maximum context length is 8192"}
    ],
    "default": {"content": '{"same_meaning": true, "explanation": "it names Paris"}'},
}


def test_errors_an_answer_causes_in_the_judge_do_not_lift_a_run_over_its_gate(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT, encoding="utf-8")
    scenarios = [
        {
            "id": f"q{n}",
            "stimulus": "What is the capital of France?",
            "reference": "Paris",
            "checks": [{"type": "reference_match"}],
        }
        for n in range(4)
    ]
    bench = write_benchmark(tmp_path / "bench", scenarios)
    command = f"{sys.executable} {agent} {MARKER}"
    with FakeLLM(JUDGE) as judge:
        config = {
            "providers": {"judge": {"base_url": judge.url, "max_retries": 0}},
            "judge": {"provider": "judge", "model": "j"},
        }
        (cli.cwd / "benchyard.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        gated = cli("run", str(bench), "--agent-cmd", command, "--fail-under", "0.8", *UNSANDBOXED)
        assert gated.exit_code == 1, gated.output
        assert "2 errors counted as failed" in gated.stderr, gated.stderr
        run = store.resolve_run("latest")
        attempts = {a.scenario_id: a for a in store.attempts(run.id)}
        verdicts = [attempts[f"q{n}"].verdict for n in range(4)]
        assert verdicts == ["passed", "passed", "error", "error"]
        assert {attempts[f"q{n}"].failure_kind for n in (2, 3)} == {"provider_rejected"}
        summary = json.loads(cli("report", run.id, "--format", "json").output)["summary"]
        assert (summary["accuracy"], summary["errors"]) == (1.0, 2)  # what the report shows

        excluded = cli(
            "run", str(bench), "--agent-cmd", command, "--fail-under", "0.8",
            "--fail-under-excludes-errors", *UNSANDBOXED,
        )  # fmt: skip
        assert excluded.exit_code == 0, excluded.output  # told otherwise, the gate leaves them out
