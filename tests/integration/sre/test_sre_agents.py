"""SRE incidents end to end: agents that investigate through benchyard's tools (a command agent
over the tool server, the `openai` agent in its tool loop), every call observed and costed, and
the root-cause figures in the audit artefact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchyard.runner.tool_events import observed_calls
from benchyard.store.store import Store
from tests.integration.providers.conftest import StartFake, write_project
from tests.support import Cli, write_benchmark

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "agents"
QUIET = {"red_herrings": 0, "noisy_neighbour": False}
TASK = 'Alerts are firing in otel-demo. Name the root cause as JSON: {"root_causes": [...]}.'
COSTS = {
    "list_alerts": 1,
    "get_topology": 1,
    "get_objects": 1,
    "describe_object": 1,
    "get_events": 1,
    "get_logs": 2,
    "get_metrics": 2,
    "get_traces": 3,
}


def incident(
    sid: str,
    environment: dict[str, Any],
    truth: dict[str, Any],
    reference: list[dict[str, Any]],
    **extra: Any,
) -> dict[str, Any]:
    return {
        "id": sid,
        "category": "sre",
        "stimulus": {"task": TASK},
        "environment": {"type": "sre", "app": "otel-demo", "noise": QUIET, **environment},
        "reference": json.dumps({"root_causes": reference}),
        "checks": [
            {"type": "root_cause", **truth},
            {"type": "tool_cost", "weight": 0, "costs": COSTS, "budget": 10},
        ],
        **extra,
    }


PRODUCT_CATALOG = {"kind": "Deployment", "name": "product-catalog", "namespace": "otel-demo"}
FLAGD = {"kind": "ConfigMap", "name": "flagd-config", "namespace": "otel-demo"}
SCHEDULE = {"kind": "Schedule", "name": "pc-delay", "namespace": "chaos-mesh"}
HAND_COUNTED = [
    # A: a bad image on product-catalog. It raises three alerts of its own (error rate, pod not
    # ready, replicas mismatch), each caller one (error rate). The Service is an alias of the
    # Deployment in the ground truth: the baseline is right.
    incident(
        "a-bad-image",
        {
            "seed": 41,
            "faults": [
                {"mechanism": "bad-image", "started_min_ago": 15, "target": PRODUCT_CATALOG}
            ],
        },
        {
            "entities": [PRODUCT_CATALOG],
            "groups": [
                {
                    "id": "deploy",
                    "kind": "Deployment",
                    "namespace": "otel-demo",
                    "name": "product-catalog",
                    "root_cause": True,
                },
                {
                    "id": "svc",
                    "kind": "Service",
                    "namespace": "otel-demo",
                    "name": "product-catalog",
                },
            ],
            "aliases": [["deploy", "svc"]],
            "v1_groups": True,  # the Service stands for its Deployment here: opted in
        },
        [PRODUCT_CATALOG],
    ),
    # B: a false alarm: one cost alert on the namespace, none on a service. The baseline names
    # nothing: right.
    incident(
        "b-false-alarm",
        {"seed": 42, "alerts": [{"alert": "CPUSpend"}]},
        {"entities": []},
        [],
        negative=True,
    ),
    # C: the paymentFailure flag. checkout alerts twice (error rate and the latency alert the
    # incident is known to raise), payment, frontend and frontend-proxy once: the baseline names
    # checkout, a false positive.
    incident(
        "c-flag",
        {
            "seed": 43,
            "alerts": [{"alert": "HighRequestLatency", "service": "checkout"}],
            "faults": [
                {
                    "mechanism": "feature-flag",
                    "started_min_ago": 15,
                    "target": FLAGD,
                    "params": {"flag": "paymentFailure", "variant": "100%"},
                }
            ],
        },
        {"entities": [FLAGD]},
        [FLAGD],
    ),
    # D: a 20 s delay on product-catalog from a Chaos Mesh schedule: every caller times out and
    # alerts twice; whichever service the baseline names, it is a false positive.
    incident(
        "d-chaos",
        {
            "seed": 44,
            "faults": [
                {
                    "mechanism": "chaos",
                    "started_min_ago": 15,
                    "target": SCHEDULE,
                    "service": "product-catalog",
                    "params": {
                        "type": "NetworkChaos",
                        "action": "delay",
                        "latency_ms": 20000,
                        "spec": {"action": "delay"},
                    },
                }
            ],
        },
        {"entities": [SCHEDULE]},
        [SCHEDULE],
    ),
]


def test_the_most_alerting_service_scores_the_hand_count(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = write_benchmark(tmp_path / "bench", HAND_COUNTED)
    assert cli("verify", str(bench), db=False).exit_code == 0
    result = cli("run", str(bench), "--agent-cmd", f"python3 {EXAMPLES / 'sre_baseline.py'}", "-q")
    assert result.exit_code == 0, result.output
    run = store.resolve_run("latest")
    verdicts = {a.scenario_id: a.verdict for a in store.attempts(run.id)}
    assert verdicts == {
        "a-bad-image": "passed",
        "b-false-alarm": "passed",
        "c-flag": "failed",
        "d-chaos": "failed",
    }
    audit = json.loads(cli("report", run.id, "--format", "audit").output)
    assert audit["accuracy"] == 0.5
    assert audit["false_positive_basis"] == {
        "basis": "root_cause_entities",
        "false_positives": 2,
        "denominator": 3,
    }
    assert audit["false_positive_rate"] == 2 / 3
    assert audit["root_cause"]["attempts_with_false_positive"] == 2
    assert audit["negative_scenarios"] == {"counted": 1, "failed": 0, "rate": 0.0}
    calls = observed_calls(store.attempts(run.id, with_evidence=True)[0].trajectory or [])
    assert [call.name for call in calls] == ["list_alerts"]  # observed by the tool server


MODEL_SCRIPT = {
    "replies": [
        {"match": "Alerts are firing", "tool_calls": [{"name": "list_alerts", "arguments": {}}]},
        {
            "match": '"alerts"',
            "tool_calls": [
                {
                    "name": "get_objects",
                    "arguments": {"kind": "Schedule", "namespace": "chaos-mesh"},
                }
            ],
        },
        {
            "match": "pc-delay",
            "content": json.dumps({"root_causes": [SCHEDULE], "confidence": 0.9}),
            "prompt_tokens": 900,
            "completion_tokens": 40,
        },
    ]
}


def test_the_openai_agent_investigates_with_the_simulated_tools(
    tmp_path: Path, cli: Cli, store: Store, fake_llm: StartFake
) -> None:
    llm = fake_llm(MODEL_SCRIPT)
    write_project(cli.cwd, llm.url)
    bench = write_benchmark(tmp_path / "bench", [HAND_COUNTED[3]])
    result = cli("run", str(bench), "--agent", "model", "-q")
    assert result.exit_code == 0, result.output
    attempt = store.attempts(store.resolve_run("latest").id, with_evidence=True)[0]
    assert attempt.verdict == "passed", attempt.cause
    calls = observed_calls(attempt.trajectory or [])
    assert [(c.name, c.arguments) for c in calls] == [
        ("list_alerts", {}),
        ("get_objects", {"kind": "Schedule", "namespace": "chaos-mesh"}),
    ]
    tool_cost = next(check for check in attempt.checks if check.check_type == "tool_cost")
    assert tool_cost.reason.startswith("2 tool calls cost 2 of budget 10")
    offered = [tool["function"]["name"] for tool in llm.requests[0]["tools"]]
    assert offered == [
        "list_alerts",
        "get_topology",
        "get_objects",
        "describe_object",
        "get_events",
        "get_logs",
        "get_metrics",
        "get_traces",
    ]
    assert attempt.turns == 3 and (attempt.cost_usd or 0) > 0


def test_the_scripted_reference_agent_on_sre_starter(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    assert cli("verify", "sre-starter", db=False).exit_code == 0
    agent = f"python3 {EXAMPLES / 'sre_agent.py'}"
    result = cli(
        "run", "sre-starter", "--agent-cmd", agent, "--filter", "category:deploy", "-j", "4", "-q"
    )
    assert result.exit_code == 0, result.output
    attempts = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    assert len(attempts) == 8
    assert all(len(observed_calls(a.trajectory or [])) >= 3 for a in attempts)  # it investigates
    assert sum(a.verdict == "passed" for a in attempts) >= 6
    assert all(a.turns >= 3 for a in attempts)  # one logged step per turn


def test_judge_mode_records_where_the_judge_disagrees(
    tmp_path: Path, cli: Cli, store: Store, fake_llm: StartFake
) -> None:
    """`judge: also`, as ITBench's official evaluator grades: the run's judge model reads the
    agent's output and the ground truth. Here it refuses a right answer; the deterministic match
    keeps the verdict, and the audit artefact shows the disagreement and flags the attempt."""
    judge = {
        "replies": [
            {
                "model": "judge-model",
                "content": '{"predictions": [{"entity": "x", "matches": null}], "explanation": "no"}',
            }
        ]
    }
    llm = fake_llm(judge)
    write_project(cli.cwd, llm.url, judge={})
    scenario = dict(HAND_COUNTED[2])
    scenario["checks"] = [{**scenario["checks"][0], "judge": "also"}, scenario["checks"][1]]
    bench = write_benchmark(tmp_path / "bench", [scenario])
    result = cli("run", str(bench), "--agent", "oracle", "-q")
    assert result.exit_code == 0, result.output
    run = store.resolve_run("latest")
    attempt = store.attempts(run.id)[0]
    assert attempt.verdict == "passed"
    check = attempt.checks[0]
    assert check.details is not None and check.details["disagreement"] is True
    assert check.details["judge"]["passed"] is False
    assert (attempt.judge_cost_usd or 0) > 0 and not attempt.cost_usd
    audit = json.loads(cli("report", run.id, "--format", "audit").output)
    assert audit["root_cause"]["judge_disagreements"] == ["c-flag#1"]
    assert audit["flag_counts"]["judge_disagreement"] == 1
    assert (
        "Ground-truth root causes:\n1. ConfigMap/otel-demo/flagd-config"
        in llm.requests[0]["messages"][-1]["content"]
    )
