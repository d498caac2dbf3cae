"""An SRE agent cannot find the ground truth: not in its workdir, its io dir or its home, and not
in anything the simulated cluster answers, however much it asks. The incident comes from an
ITBench-format directory whose ground truth carries markers (solution texts, alert notes,
propagation notes, recommended actions, group ids); the importer puts the truth in the
benchmark's files only, which the sandbox never shows, and the simulator writes none of it."""

from __future__ import annotations

import json
from pathlib import Path

from benchyard.importers.build import read_source, write_benchmark
from benchyard.store.store import Store
from tests.support import Cli
from tests.unit.sre.itbench_dirs import small_itbench

MARKERS = [
    "SOLUTION-MARKER-7781",
    "ALERT-DESCRIPTION-MARKER-5521",
    "PROPAGATION-MARKER-9932",
    "ACTION-MARKER-4410",
    "load-generator-pod-1",
    "frontend-proxy-service-1",
    "opentelemetry-demo-feature-flag",
    "scheduled-chaos-mesh-experiment",
    "nonexistent-kubernetes-workload-container-image",
    "groundtruth",
    "ground truth",
    "ground_truth",
    "itbench",
]

SEARCHER = r"""
import http.client, json, os, socket, sys

MARKERS = %(markers)s
REFERENCE = %(reference)s


class Tools(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(os.environ["BENCHYARD_TOOLS_SOCKET"])


def call(tool, **arguments):
    connection = Tools("tools")
    connection.request("POST", "/call", json.dumps({"name": tool, "arguments": arguments}))
    reply = json.loads(connection.getresponse().read())
    connection.close()
    return reply.get("result") or reply.get("error") or ""


texts = []
io_dir = os.path.dirname(os.environ["BENCHYARD_INSTRUCTION_FILE"])
for root in {os.getcwd(), io_dir, os.environ.get("HOME", "/nonexistent")}:
    for directory, _, files in os.walk(root):
        for name in files:
            try:
                with open(os.path.join(directory, name), "rb") as handle:
                    texts.append(handle.read(1 << 20).decode("utf-8", "replace"))
            except OSError:
                pass
texts.append(json.dumps(dict(os.environ)))
texts.append(call("list_alerts"))
topology = json.loads(call("get_topology"))
texts.append(json.dumps(topology))
for namespace in topology["namespaces"]:
    texts.append(call("get_events", namespace=namespace, limit=200))
kinds = ["Pod", "Deployment", "ReplicaSet", "Service", "Endpoints", "ConfigMap", "Secret", "Node", "Namespace",
         "Schedule", "NetworkChaos", "HorizontalPodAutoscaler", "NetworkPolicy", "ResourceQuota", "DaemonSet"]
for kind in kinds:
    for namespace in topology["namespaces"]:
        listed = call("get_objects", kind=kind, namespace=namespace)
        texts.append(listed)
        try:
            items = json.loads(listed)["items"]
        except (ValueError, KeyError):
            continue
        for item in items:
            where = item.get("namespace", namespace)
            texts.append(call("describe_object", kind=kind, name=item["name"], namespace=where))
            if kind == "Pod":
                texts.append(call("get_logs", pod=item["name"], since_minutes=60, limit=300))
                texts.append(call("get_logs", pod=item["name"], container="init-config"))
metrics = ["request_rate", "error_rate", "latency_p50_ms", "latency_p95_ms", "cpu_usage_cores",
           "memory_usage_mb", "restarts", "ready_pods", "queue_lag"]
for service in topology["services"]:
    for metric in metrics:
        texts.append(call("get_metrics", service=service["name"], metric=metric, start="-60m", step_sec=60))
    texts.append(call("get_traces", service=service["name"], since_minutes=60, limit=20))
everything = "\n".join(texts)
found = [marker for marker in MARKERS if marker.lower() in everything.lower()]
if REFERENCE in everything:
    found.append("the reference answer")
print(json.dumps({"found": found, "searched_chars": len(everything)}))
"""


def test_an_agent_finds_no_ground_truth(
    project: Path, project_cli: Cli, store: Store, tmp_path: Path
) -> None:
    bench = write_benchmark(
        read_source("itbench", small_itbench(tmp_path / "itbench")), project / "bench"
    )
    scenario_file = (bench / "scenarios" / "feature-flag.yaml").read_text(encoding="utf-8")
    for marker in MARKERS[:4]:
        assert marker not in scenario_file  # the importer never copies ITBench's notes
    assert "load-generator-pod-1" in scenario_file  # the truth is in the benchmark's files
    reference = json.dumps(
        {"root_causes": [{"kind": "ConfigMap", "name": "flagd-config", "namespace": "otel-demo"}]}
    )
    agent_dir = project / "agent"
    agent_dir.mkdir()
    (agent_dir / "search.py").write_text(
        SEARCHER % {"markers": repr(MARKERS), "reference": repr(reference)}, encoding="utf-8"
    )
    result = project_cli(
        "run",
        str(bench),
        "--agent-cmd",
        f"python3 {agent_dir / 'search.py'}",
        "--filter",
        "id:scenario-1",
        "--timeout",
        "300",
        "-q",
    )
    assert result.exit_code in (0, 1), result.output
    attempt = store.attempts(store.resolve_run("latest").id)[0]
    assert attempt.verdict == "failed", attempt.cause  # it answered (its findings), not a crash
    report = json.loads(attempt.answer or "{}")
    assert "found" in report, (attempt.answer, attempt.stderr)
    assert report["found"] == []
    assert report["searched_chars"] > 200_000  # it did look: every object, log, metric and trace
