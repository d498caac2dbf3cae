"""The simulator: the same incident and seed give the same bytes (in other processes too), a
fault leaves its evidence where a real one would, and the tools answer bad questions with
errors, never exceptions."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from typing import Any

import pytest

from benchyard.sre.faults import MECHANISMS, FaultError
from benchyard.sre.incident import IncidentSpec
from benchyard.sre.tools import tools_for
from benchyard.sre.world import World, _build_cached, build_world

FLAG = {
    "app": "otel-demo",
    "seed": 11,
    "faults": [
        {
            "mechanism": "feature-flag",
            "target": {"kind": "ConfigMap", "name": "flagd-config", "namespace": "otel-demo"},
            "params": {"flag": "cartFailure", "restart": ["flagd", "cart"]},
        }
    ],
}
QUESTIONS: list[tuple[str, dict[str, Any]]] = [
    ("list_alerts", {}),
    ("get_topology", {}),
    ("get_objects", {"kind": "Pod"}),
    ("get_objects", {"kind": "ConfigMap"}),
    ("get_objects", {"kind": "Schedule", "namespace": "chaos-mesh"}),
    ("describe_object", {"kind": "ConfigMap", "name": "flagd-config"}),
    ("describe_object", {"kind": "Deployment", "name": "cart"}),
    ("get_events", {}),
    ("get_logs", {"service": "cart", "since_minutes": 30, "limit": 100}),
    ("get_logs", {"service": "frontend", "grep": "fail", "limit": 50}),
    ("get_metrics", {"service": "cart", "metric": "error_rate", "start": "-45m"}),
    ("get_metrics", {"service": "checkout", "metric": "latency_p95_ms", "step_sec": 30}),
    ("get_traces", {"only_errors": True, "limit": 5}),
]


def answers(world: World) -> str:
    tools = {tool.name: tool for tool in tools_for(world)}
    return "\n".join(tools[name].respond(arguments)[0] for name, arguments in QUESTIONS)


def fresh(spec: dict[str, Any]) -> World:
    """A world built anew, not from the cache."""
    return _build_cached.__wrapped__(IncidentSpec.model_validate(spec).model_dump_json())  # type: ignore[attr-defined]


def test_same_seed_same_bytes() -> None:
    assert answers(fresh(FLAG)) == answers(fresh(FLAG))


def test_same_bytes_in_other_processes() -> None:
    """Whatever the hash seed: nothing depends on set or dict ordering by hash."""
    program = (
        "import hashlib, json, sys; from tests.unit.sre.test_simulator import FLAG, answers, fresh; "
        "print(hashlib.sha256(answers(fresh(FLAG)).encode()).hexdigest())"
    )
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", program], capture_output=True, text=True, env=env, check=True
        )
        digests.add(done.stdout.strip())
    assert digests == {hashlib.sha256(answers(fresh(FLAG)).encode()).hexdigest()}


def test_another_seed_another_cluster() -> None:
    assert answers(fresh(FLAG)) != answers(fresh({**FLAG, "seed": 12}))


def call(world: World, tool_name: str, **arguments: Any) -> tuple[str, bool]:
    tool = next(tool for tool in tools_for(world) if tool.name == tool_name)
    return tool.respond(arguments)


def test_a_feature_flag_leaves_its_trail() -> None:
    world = build_world(IncidentSpec.model_validate(FLAG))
    configmap = json.loads(
        call(world, "describe_object", kind="ConfigMap", name="flagd-config")[0]
    )["object"]
    assert '"cartFailure"' in configmap["data"]["demo.flagd.json"]
    changes = [entry["time"] for entry in configmap["metadata"]["managedFields"]]
    assert changes[-1] > changes[0]  # edited during the incident
    logs, _ = call(world, "get_logs", service="cart", limit=300)
    assert "Wasn't able to connect to redis" in logs
    assert "PROVIDER_CONFIGURATION_CHANGED (flags changed: cartFailure)" in logs
    alerts = json.loads(call(world, "list_alerts")[0])["alerts"]
    assert {"cart", "checkout"} <= {
        a["labels"].get("service") for a in alerts if a["alertname"] == "HighRequestErrorRate"
    }


def test_a_bad_image_leaves_pods_pulling_and_events() -> None:
    spec = {
        "app": "ledger",
        "seed": 3,
        "faults": [
            {
                "mechanism": "bad-image",
                "target": {"kind": "Deployment", "name": "accounts", "namespace": "ledger"},
            }
        ],
    }
    world = build_world(IncidentSpec.model_validate(spec))
    pods = json.loads(
        call(
            world, "get_objects", kind="Pod", label_selector="app.kubernetes.io/component=accounts"
        )[0]
    )["items"]
    assert [pod["status"] for pod in pods] == ["ImagePullBackOff"]
    events = json.loads(call(world, "get_events", type="Warning")[0])["events"]
    assert any(
        "Failed to pull image" in e["message"] and e["object"] == f"Pod/{pods[0]['name']}"
        for e in events
    )
    text, error = call(world, "get_logs", pod=pods[0]["name"])
    assert error and "waiting to start" in text
    web = call(world, "get_logs", service="web-api", grep="accounts", limit=5)[0]
    assert "connection refused" in web.lower() or "Connection refused" in web


def test_a_chaos_schedule_is_there_to_find() -> None:
    spec = {
        "app": "otel-demo",
        "seed": 5,
        "faults": [
            {
                "mechanism": "chaos",
                "target": {
                    "kind": "Schedule",
                    "name": "currency-latency",
                    "namespace": "chaos-mesh",
                },
                "service": "currency",
                "params": {
                    "type": "NetworkChaos",
                    "action": "delay",
                    "latency_ms": 3000,
                    "spec": {
                        "action": "delay",
                        "selector": {"labelSelectors": {"app.kubernetes.io/component": "currency"}},
                    },
                },
            }
        ],
        "noise": {"red_herrings": 0},
    }
    world = build_world(IncidentSpec.model_validate(spec))
    schedules = json.loads(call(world, "get_objects", kind="Schedule", namespace="chaos-mesh")[0])[
        "items"
    ]
    assert [(s["name"], s["paused"]) for s in schedules] == [("currency-latency", False)]
    p95 = json.loads(
        call(world, "get_metrics", service="currency", metric="latency_p95_ms", start="-5m")[0]
    )["points"]
    assert p95[-1][1] > 5000


def test_a_false_alarm_breaks_nothing() -> None:
    spec = {"app": "otel-demo", "seed": 9, "alerts": [{"alert": "CPUSpend"}]}
    world = build_world(IncidentSpec.model_validate(spec))
    assert all(state.error == 0 and state.down is None for state in world.effective.values())
    assert [
        a["alertname"]
        for a in world.alerts
        if a["labels"].get("namespace") == "otel-demo" and "service" not in a["labels"]
    ] == ["CPUSpend"]


@pytest.mark.parametrize("mechanism", sorted(MECHANISMS))
def test_every_mechanism_simulates(mechanism: str) -> None:
    examples = {
        "feature-flag": ("ConfigMap", "flagd-config", None, {"flag": "adFailure"}),
        "chaos": (
            "Schedule",
            "s",
            "ad",
            {"type": "StressChaos", "spec": {"stressors": {"cpu": {"load": 90}}}},
        ),
        "bad-env": ("Deployment", "shipping", None, {"name": "QUOTE_ADDR", "value": "quote:0000"}),
        "unschedulable": (
            "Deployment",
            "payment",
            None,
            {"reason": "cordoned", "pdb": "payment-pdb"},
        ),
        "credentials": ("Secret", "email-service-secret", "email", {"mode": "secret"}),
        "mesh-policy": ("Deployment", "checkout", None, {"mode": "strict-mtls"}),
        "api-surge": ("Namespace", "otel-demo", None, {}),
        "config-change": (
            "ConfigMap",
            "product-catalog-products",
            "product-catalog",
            {"key": "products.json", "value": "[]", "error": 0.5},
        ),
        "service-port": ("Service", "ad", None, {}),
        "service-selector": ("Service", "ad", None, {}),
        "service-deleted": ("Service", "ad", None, {}),
        "network-policy": ("Deployment", "frontend", None, {}),
    }
    kind, name, service, params = examples.get(mechanism, ("Deployment", "ad", None, {}))
    fault: dict[str, Any] = {
        "mechanism": mechanism,
        "target": {"kind": kind, "name": name, "namespace": "otel-demo"},
        "params": params,
    }
    if service:
        fault["service"] = service
    world = build_world(
        IncidentSpec.model_validate({"app": "otel-demo", "seed": 1, "faults": [fault]})
    )
    assert world.alerts, f"{mechanism} raised no alert"
    for name_, arguments in QUESTIONS:
        if "service" in arguments and world.service(arguments["service"]) is None:
            continue
        call(world, name_, **arguments)  # answers, or says what is wrong; never raises


def test_a_fault_that_does_not_fit_the_app_is_refused() -> None:
    spec = IncidentSpec.model_validate(
        {
            "app": "bookinfo",
            "seed": 1,
            "faults": [
                {
                    "mechanism": "bad-image",
                    "target": {"kind": "Deployment", "name": "cart", "namespace": "book-info"},
                }
            ],
        }
    )
    with pytest.raises(FaultError, match="cart"):
        fresh(spec.model_dump())


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("get_objects", {"kind": "Gadget"}, "no objects of kind 'Gadget'"),
        ("get_objects", {"kind": "Pod", "namespace": "nowhere"}, "no namespace 'nowhere'"),
        ("describe_object", {"kind": "Deployment", "name": "nope"}, "not found"),
        ("get_logs", {}, "give either `pod` or `service`"),
        ("get_logs", {"pod": "cart-123"}, "not found"),
        ("get_logs", {"service": "cart", "grep": "("}, "not a valid regular expression"),
        ("get_metrics", {"service": "cart", "metric": "joy"}, "unknown metric 'joy'"),
        (
            "get_metrics",
            {"service": "cart", "metric": "error_rate", "start": "yesterday"},
            "start: expected",
        ),
        (
            "get_metrics",
            {"service": "cart", "metric": "error_rate", "start": "now", "end": "-5m"},
            "start must be before end",
        ),
        ("get_traces", {"service": "warp-drive"}, "no service 'warp-drive'"),
    ],
)
def test_bad_questions_get_errors(name: str, arguments: dict[str, Any], message: str) -> None:
    world = build_world(IncidentSpec.model_validate(FLAG))
    tool = next(tool for tool in tools_for(world) if tool.name == name)
    text, error = tool.respond(arguments)
    assert error and message in text


def test_answers_are_capped() -> None:
    world = build_world(IncidentSpec.model_validate(FLAG))
    text, error = call(world, "get_objects", kind="Pod", namespace="all")
    assert not error and len(text) <= 16_100
