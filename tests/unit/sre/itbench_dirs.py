"""Small ITBench-format directories written by the tests themselves (never ../shared)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def write_scenario(
    root: Path,
    number: int,
    injections: list[dict[str, Any]],
    entities: list[dict[str, Any]],
    v1: dict[str, Any] | None = None,
    *,
    app: str = "opentelemetryDemo",
    wait_for: dict[str, Any] | None = None,
) -> Path:
    directory = root / f"scenario_{number}"
    directory.mkdir(parents=True)
    fault: dict[str, Any] = {"injections": injections}
    if wait_for:
        fault["waitFor"] = wait_for
    scenario = {
        "apiVersion": "itbench.io/v2",
        "kind": "Scenario",
        "metadata": {"name": f"scenario-{number}"},
        "spec": {
            "applications": {app: {"enabled": True}},
            "faults": [fault] if injections else [],
            "tools": {"sre": {"enabled": True}},
        },
    }
    truth = {
        "apiVersion": "itbench.io/v2",
        "kind": "GroundTruth",
        "metadata": {"name": f"scenario-{number}"},
        "spec": {
            "alerts": [],
            "entities": [
                {
                    "apiVersion": "v1",
                    "kind": e["kind"],
                    "metadata": {
                        **({"name": e["name"]} if "name" in e else {}),
                        **({"namespace": e["namespace"]} if e.get("namespace") else {}),
                    },
                }
                for e in entities
            ],
            "solutions": [
                [
                    {
                        "steps": [
                            {
                                "command": "kubectl rollout undo",
                                "text": "SOLUTION-MARKER-7781 undo it",
                            }
                        ]
                    }
                ]
            ],
        },
    }
    (directory / "scenario.yaml").write_text(
        "---\n" + yaml.safe_dump(scenario, sort_keys=False), encoding="utf-8"
    )
    (directory / "groundtruth.yaml").write_text(
        "---\n" + yaml.safe_dump(truth, sort_keys=False), encoding="utf-8"
    )
    if v1 is not None:
        (directory / "groundtruth_v1.yaml").write_text(
            "---\n" + yaml.safe_dump(v1, sort_keys=False), encoding="utf-8"
        )
    return directory


def k8s(
    kind: str, name: str, namespace: str | None = "otel-demo", api: str = "apps/v1"
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": metadata}


def flag_injection(flag: str) -> dict[str, Any]:
    return {
        "id": "opentelemetry-demo-feature-flag",
        "args": {
            "flag": {"name": flag, "state": "on"},
            "kubernetesObject": k8s("ConfigMap", "flagd-config", api="v1"),
        },
    }


FLAGD = {"kind": "ConfigMap", "name": "flagd-config", "namespace": "otel-demo"}


def small_itbench(root: Path) -> Path:
    """Four scenarios: a feature flag (with v1 groups and aliases), a bad image, a chaos
    schedule, and a false alarm."""
    write_scenario(
        root,
        1,
        [flag_injection("loadGeneratorFloodHomepage")],
        [FLAGD],
        {
            "spec": {
                "alerts": [
                    {
                        "group_id": "frontend-proxy-service-1",
                        "id": "HighRequestErrorRate",
                        "metadata": {
                            "description": "ALERT-DESCRIPTION-MARKER-5521 caused by the load generator"
                        },
                    }
                ],
                "aliases": [["load-generator-pod-1", "frontend-proxy-service-1", "no-such-group"]],
                "groups": [
                    {
                        "id": "load-generator-pod-1",
                        "kind": "Pod",
                        "namespace": "otel-demo",
                        "filter": ["load-generator-.*"],
                        "root_cause": True,
                    },
                    {
                        "id": "frontend-proxy-service-1",
                        "kind": "Service",
                        "namespace": "otel-demo",
                        "filter": ["frontend-proxy\\b"],
                    },
                    {
                        "id": "junk",
                        "kind": "HorizontalPodAutoscaler",
                        "namespace": "otel-demo",
                        "filter": ["*.*"],
                    },
                ],
                "propagations": [
                    {
                        "source": "load-generator-pod-1",
                        "target": "frontend-proxy-service-1",
                        "condition": "PROPAGATION-MARKER-9932",
                        "effect": "x",
                    }
                ],
                "recommendedActions": [
                    {"solution": {"actions": ["ACTION-MARKER-4410"], "id": "a"}}
                ],
            }
        },
        wait_for={
            "postInjection": [
                {
                    "id": "restart-kubernetes-workload",
                    "args": {"kubernetesObject": k8s("Deployment", "flagd")},
                }
            ]
        },
    )
    write_scenario(
        root,
        20,
        [
            {
                "id": "nonexistent-kubernetes-workload-container-image",
                "args": {
                    "container": {"name": "product-catalog"},
                    "kubernetesObject": k8s("Deployment", "product-catalog"),
                },
            }
        ],
        [{"kind": "Deployment", "name": "product-catalog", "namespace": "otel-demo"}],
    )
    write_scenario(
        root,
        17,
        [
            {
                "id": "scheduled-chaos-mesh-experiment",
                "args": {
                    "kubernetesObject": k8s(
                        "Schedule",
                        "product-catalog-network-delay",
                        "chaos-mesh",
                        "chaos-mesh.org/v1alpha1",
                    ),
                    "scheduleSpec": {
                        "type": "NetworkChaos",
                        "networkChaos": {
                            "action": "delay",
                            "delay": {"latency": "20000ms"},
                            "mode": "all",
                            "selector": {
                                "labelSelectors": {
                                    "app.kubernetes.io/component": "product-catalog"
                                },
                                "namespaces": ["otel-demo"],
                            },
                        },
                    },
                },
            }
        ],
        [{"kind": "Schedule", "name": "product-catalog-network-delay", "namespace": "chaos-mesh"}],
    )
    write_scenario(
        root,
        37,
        [],
        [],
        {
            "alerts": [{"group_id": "ns", "id": "CPUSpend"}],
            "groups": [{"id": "ns", "kind": "Namespace", "name": "otel-demo", "root_cause": True}],
            "aliases": [["ns"]],
        },
    )
    return root
