"""Chaos Mesh schedules: experiments left running against pods, the network, I/O and the control plane."""

# ruff: noqa: E501  (log lines, event messages and fixtures are quoted whole)

from __future__ import annotations

import copy

from benchyard.sre.alerts import alert
from benchyard.sre.cluster import Cluster, short_hash, stamp
from benchyard.sre.faults.common import (
    CHAOS_NAMESPACE,
    FaultError,
    after_start,
    elapsed_min,
    fault_service,
    required_param,
)
from benchyard.sre.incident import FaultSpec


def chaos(cluster: Cluster, fault: FaultSpec) -> None:
    kind = str(required_param(fault, "type"))
    spec = copy.deepcopy(fault.params.get("spec") or {})
    action = str(fault.params.get("action") or spec.get("action") or "")
    selector_ns = str(fault.params.get("namespace", cluster.app.namespace))
    name, namespace = fault.target.name, fault.target.namespace or CHAOS_NAMESPACE
    first_run = after_start(cluster, -5)
    schedule = cluster.add(
        "Schedule",
        name,
        namespace,
        {
            "schedule": "@every 1m",
            "historyLimit": 1,
            "concurrencyPolicy": "Forbid",
            "type": kind,
            _lower_first(kind): spec,
        },
        created=first_run - 20,
        status={"lastScheduleTime": stamp(cluster.now - cluster.rng.randint(5, 55))},
    )
    experiment = f"{name}-{short_hash(cluster.seed, name, length=5)}"
    schedule["status"]["active"] = [{"kind": kind, "name": experiment, "namespace": namespace}]
    targets: list[str] = []
    if selector_ns == cluster.app.namespace:
        service = fault_service(cluster, fault)
        targets = [pod.name for pod in cluster.pods_of_service(service)]
    records = [
        {
            "id": f"{selector_ns}/{pod}",
            "phase": "Injected",
            "injectedCount": max(1, int(elapsed_min(cluster))),
        }
        for pod in targets
    ]
    cluster.add(
        kind,
        experiment,
        namespace,
        spec,
        created=cluster.now - cluster.rng.randint(5, 55),
        labels={"managed-by": name},
        owner=("Schedule", name),
        status={
            "conditions": [
                {"type": "AllInjected", "status": "True"},
                {"type": "AllRecovered", "status": "False"},
            ],
            "experiment": {"desiredPhase": "Run", "containerRecords": records},
        },
    )
    cluster.event(
        "Schedule",
        name,
        "Spawned",
        f"Create new object: {experiment}",
        "Normal",
        first_run,
        cluster.now - 30,
        count=max(1, int(elapsed_min(cluster))),
        namespace=namespace,
    )
    cluster.event(
        kind,
        experiment,
        "Started",
        "Experiment has started",
        "Normal",
        cluster.now - 50,
        cluster.now - 50,
        namespace=namespace,
    )
    for target_pod in targets:
        cluster.event(
            kind,
            experiment,
            "Applied",
            f"Successfully apply chaos for {selector_ns}/{target_pod}",
            "Normal",
            cluster.now - 48,
            cluster.now - 48,
            namespace=namespace,
        )
    if selector_ns != cluster.app.namespace:
        _platform_chaos(cluster, fault, kind, selector_ns)
        return
    service = fault_service(cluster, fault)
    health = cluster.health_of(service)
    cluster.touched.add(service)
    peer = fault.params.get("peer")
    if kind == "NetworkChaos":
        if action == "delay":
            health.latency_ms += float(fault.params.get("latency_ms", 2000))
        elif peer:
            definition = cluster.service_def(service)
            if any(call.service == peer for call in definition.calls):
                health.blocked[str(peer)] = ("timeout", "")
            elif definition.consumes:
                health.stalled_consumer = True  # cannot fetch from the broker
                cluster.log(
                    service,
                    "warn",
                    f"[Consumer clientId=consumer-{service}-1, groupId={service}] Disconnecting from node 1 due to request timeout.",
                    per_minute=2,
                )
            else:
                cluster.health_of(str(peer)).blocked[service] = ("timeout", "")
            cluster.touched.add(str(peer))
        else:
            health.down = "timeout"
    elif kind == "PodChaos":
        if action == "pod-kill":
            health.error = max(health.error, 0.3)
            health.error_text = "connection reset"
            for pod in cluster.pods_of_service(service):
                pod.restarts += max(1, int(elapsed_min(cluster)))
                pod.created = cluster.now - cluster.rng.randint(5, 50)
        else:
            health.down = "refused"
            health.quiet = True
            for pod in cluster.pods_of_service(service):
                pod.ready = False
                pod.restarts += max(1, int(elapsed_min(cluster) / 1.5))
                pod.last_terminated = {
                    "reason": "Error",
                    "exitCode": 137,
                    "finishedAt": stamp(cluster.now - 50),
                }
                cluster.event(
                    "Pod",
                    pod.name,
                    "Unhealthy",
                    f"Readiness probe failed: dial tcp {pod.ip}:{cluster.service_def(service).port}: connect: connection refused",
                    first=after_start(cluster, 20),
                    last=cluster.now - 5,
                    count=int(elapsed_min(cluster) * 6),
                )
    elif kind == "StressChaos":
        stressors = spec.get("stressors", {})
        if "cpu" in stressors or fault.params.get("cpu"):
            definition = cluster.service_def(service)
            health.cpu = max(health.cpu, definition.cpu_limit / max(definition.cpu_rest, 0.01))
            health.latency_ms += definition.latency_ms * 6 + 80
        if "memory" in stressors or fault.params.get("memory"):
            definition = cluster.service_def(service)
            health.memory = max(
                health.memory, definition.memory_limit_mb / max(definition.memory_rest_mb, 1) * 0.97
            )
            health.latency_ms += definition.latency_ms * 3 + 40
            if fault.params.get("oom", True):
                for pod in cluster.pods_of_service(service):
                    pod.restarts += max(1, int(elapsed_min(cluster) / 4))
                    pod.last_terminated = {
                        "reason": "OOMKilled",
                        "exitCode": 137,
                        "finishedAt": stamp(cluster.now - cluster.rng.randint(30, 200)),
                    }
                health.error = max(health.error, 0.08)
                health.error_text = health.error_text or "connection reset by peer"
    elif kind == "HTTPChaos":
        if spec.get("abort") or action == "abort":
            health.down = "reset"
        else:
            health.error = 1.0
            health.error_text = str(
                fault.params.get(
                    "error_text", "JSON::ParserError: unexpected token at the request body"
                )
            )
            cluster.log(service, "error", health.error_text, per_minute=4)
    elif kind == "JVMChaos":
        if action == "stress" or fault.params.get("heap"):
            definition = cluster.service_def(service)
            health.memory = max(
                health.memory, definition.memory_limit_mb / max(definition.memory_rest_mb, 1) * 0.95
            )
            health.latency_ms += 1200
            cluster.log(
                service, "warn", "GC overhead: pause of {n} ms (G1 Evacuation Pause)", per_minute=5
            )
        else:
            health.error = 1.0
            health.error_text = str(
                fault.params.get(
                    "error_text",
                    'java.lang.NullPointerException: Cannot invoke "oteldemo.AdService.getAds()" because the return value of "oteldemo.AdService.getInstance()" is null',
                )
            )
            cluster.log(
                service,
                "error",
                "Exception while executing runnable io.grpc.internal.ServerImpl$JumpToApplicationThreadServerStreamListener$1HalfClosed: "
                + health.error_text,
                per_minute=6,
            )
    elif kind == "IOChaos":
        health.latency_ms += float(fault.params.get("latency_ms", 200)) * 5
    else:
        raise FaultError(f"chaos: unknown experiment type '{kind}'")


def _platform_chaos(cluster: Cluster, fault: FaultSpec, kind: str, namespace: str) -> None:
    """Chaos on the control plane (the API server, etcd): the platform's alerts, slow controllers."""
    component = str(fault.params.get("component", "kube-apiserver"))
    labels = {"namespace": namespace, "job": "apiserver" if "api" in component else "etcd"}
    if component == "etcd":
        cluster.extra_alerts.append(
            alert("etcdHighFsyncDurations", after_start(cluster, 90), labels, severity="warning")
        )
    cluster.extra_alerts.append(
        alert(
            "KubeAPIErrorBudgetBurn",
            after_start(cluster, 200),
            {**labels, "job": "apiserver"},
            severity="warning",
        )
    )
    cluster.extra_alerts.append(
        alert(
            "KubeAPILatencyHigh",
            after_start(cluster, 140),
            {**labels, "job": "apiserver", "verb": "LIST"},
            severity="warning",
        )
    )
    for service in ("flagd", "frontend", "web-api", "productpage"):
        if cluster.app.service(service) is not None:
            cluster.health_of(service).latency_ms += 40
    cluster.event(
        "Pod",
        f"{component}-{cluster.node_names[0]}",
        "Unhealthy",
        "Liveness probe failed: HTTP probe failed with statuscode: 500",
        first=after_start(cluster, 60),
        last=cluster.now - 30,
        count=int(elapsed_min(cluster) * 2),
        namespace=namespace,
    )


def _lower_first(kind: str) -> str:
    return {"HTTPChaos": "httpChaos", "JVMChaos": "jvmChaos", "IOChaos": "ioChaos"}.get(
        kind, kind[:1].lower() + kind[1:]
    )
