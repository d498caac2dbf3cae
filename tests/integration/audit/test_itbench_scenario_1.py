"""The audit's strict accuracy on ITBench's own scenario 1, its three files verbatim from
itbench-hub/ITBench at commit 8949d5b2 (`scenarios/sre/project/roles/scenarios/files/scenario_1/`,
Apache-2.0). ITBench's official scorer (ITBench-Evaluations at 14f026fc) is an LLM judge that
matches predicted entities to the v2 ground truth's `spec.entities` (here the `flagd-config`
ConfigMap); benchyard matches deterministically: an answer passes only when every named entity is
accepted, and the v1 groups (whose alias set takes the victim `frontend-proxy` Service for the
cause) widen the truth only when asked (issue 22, item 8)."""

# ruff: noqa: E501 (ITBench's files are kept verbatim, long lines included)

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.integration.audit.test_strict_accuracy import WRONG, _audit
from tests.support import Cli

SCENARIO = r"""---
apiVersion: itbench.io/v2
kind: Scenario
metadata:
  name: scenario-1
spec:
  applications:
    opentelemetryDemo:
      enabled: true
  faults:
    - injections:
        - args:
            flag:
              name: loadGeneratorFloodHomepage
              state: "on"
            kubernetesObject:
              apiVersion: v1
              kind: ConfigMap
              metadata:
                name: flagd-config
                namespace: otel-demo
          id: opentelemetry-demo-feature-flag
      waitFor:
        postInjection:
          - args:
              kubernetesObject:
                apiVersion: apps/v1
                kind: Deployment
                metadata:
                  name: flagd
                  namespace: otel-demo
            id: restart-kubernetes-workload
          - args:
              kubernetesObject:
                apiVersion: apps/v1
                kind: Deployment
                metadata:
                  name: load-generator
                  namespace: otel-demo
            id: restart-kubernetes-workload
  tools:
    sre:
      enabled: true
"""

GROUNDTRUTH = r"""---
apiVersion: itbench.io/v2
kind: GroundTruth
metadata:
  name: scenario-1
spec:
  alerts: []
  entities:
    - apiVersion: v1
      kind: ConfigMap
      metadata:
        name: flagd-config
        namespace: otel-demo
  solutions:
    - - steps:
          - command: kubectl -n otel-demo edit configmap flagd-config
            text: Disable the feature flag (loadGeneratorFloodHomepage) by manually editing the contents of the ConfigMap
          - command: kubectl -n otel-demo rollout restart deployment
            text: Restart all of the Deployment workloads.
"""

GROUNDTRUTH_V1 = r"""---
apiVersion: itbench.io/v1
kind: GroundTruth
metadata:
  name: scenario-1
spec:
  alerts:
    - group_id: frontend-proxy-service-1
      id: HighRequestErrorRate
      metadata:
        description: Error rate is above threshold for frontend-proxy service
    - group_id: accounting-service-1
      id: NoDatabaseOperations
      metadata:
        description: Accounting service stops performing database operations due to request starvation from frontend-proxy overload
  aliases:
    - - load-generator-service-1
      - load-generator-pod-1
      - frontend-proxy-service-1
      - frontend-proxy-pod-1
  fault:
    - category: Change
      condition: To be specified
      entity:
        group_id: load-generator-pod-1
        kind: Pod
        name: load-generator-pod-1
      fault_mechanism: custom
  groups:
    - filter:
        - load-generator-.*
      id: load-generator-pod-1
      kind: Pod
      namespace: otel-demo
      root_cause: true
    - filter:
        - load-generator\b
      id: load-generator-service-1
      kind: Service
      namespace: otel-demo
    - filter:
        - frontend-proxy\b
      id: frontend-proxy-service-1
      kind: Service
      namespace: otel-demo
    - filter:
        - frontend-proxy-.*
      id: frontend-proxy-pod-1
      kind: Pod
      namespace: otel-demo
    - filter:
        - accounting\b
      id: accounting-service-1
      kind: Service
      namespace: otel-demo
  propagations:
    - condition: load-generator pod is configured with a higher number of users
      effect: load-generator creates a high number of requests as a result
      source: load-generator-pod-1
      target: load-generator-service-1
    - condition: frontend-proxy service overloaded - request volume exceeds configured capacity
      effect: frontend-proxy service error rate is above threshold
      source: load-generator-service-1
      target: frontend-proxy-service-1
    - condition: frontend-proxy service overloaded - request volume exceeds configured capacity
      effect: frontend-proxy service latency is above threshold
      source: load-generator-service-1
      target: frontend-proxy-service-1
    - condition: frontend-proxy service error rate above threshold prevents request forwarding
      effect: Accounting service receives no requests and stops performing database operations
      source: frontend-proxy-service-1
      target: accounting-service-1
  recommendedActions:
    - solution:
        actions:
          - deem if traffic is legit
        id: deem_if_traffic_is_legit
    - solution:
        actions:
          - set up autoscaler
        id: set_up_autoscaler
"""

CAUSE = {"kind": "ConfigMap", "name": "flagd-config", "namespace": "otel-demo"}
VICTIM = {"kind": "Service", "name": "frontend-proxy", "namespace": "otel-demo"}


def _imported(tmp_path: Path, cli: Cli, *options: str) -> Path:
    source = tmp_path / "itbench" / "scenario_1"
    source.mkdir(parents=True, exist_ok=True)
    for name, text in (
        ("scenario.yaml", SCENARIO),
        ("groundtruth.yaml", GROUNDTRUTH),
        ("groundtruth_v1.yaml", GROUNDTRUTH_V1),
    ):
        (source / name).write_text(text, encoding="utf-8")
    out = tmp_path / f"itbench-sre{len(options)}"
    result = cli("import", "itbench", str(source.parent), "-o", str(out), *options, db=False)
    assert result.exit_code == 0, result.output
    return out


def _one(audit: Any) -> tuple[int, int, float | None]:
    return audit["passed"], audit["passed_lenient"], audit["false_positive_rate"]


def test_itbench_8949d5b2_scenario_1_the_cause_alone_passes(tmp_path: Path, cli: Cli) -> None:
    audit = _audit(tmp_path, cli, _imported(tmp_path, cli), {"scenario-1": [CAUSE]})
    assert audit["accuracy_rule"] == "strict"
    assert _one(audit) == (1, 1, 0.0)


def test_itbench_8949d5b2_scenario_1_hedging_fails_strict_passes_lenient(
    tmp_path: Path, cli: Cli
) -> None:
    audit = _audit(tmp_path, cli, _imported(tmp_path, cli), {"scenario-1": [CAUSE, WRONG]})
    assert _one(audit) == (0, 1, 0.5)  # was: passed, the wrong entity only a false positive


def test_itbench_8949d5b2_scenario_1_the_victim_is_the_cause_only_with_v1_groups(
    tmp_path: Path, cli: Cli
) -> None:
    victim = {"scenario-1": [VICTIM]}
    audit = _audit(tmp_path, cli, _imported(tmp_path, cli), victim)
    assert _one(audit)[0] == 0 and audit["root_cause"]["false_positives"] == 1
    widened = _imported(tmp_path, cli, "--option", "v1_groups=true")
    audit = _audit(tmp_path, cli, widened, victim)
    assert _one(audit)[0] == 1  # the v1 alias set accepts frontend-proxy, as asked
    assert audit["root_cause"]["v1_group_attempts"] == 1
