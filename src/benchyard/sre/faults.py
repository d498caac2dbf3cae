"""The fault catalogue: what each mechanism changes in the cluster (objects, pods, events) and in
how services behave. Each fault leaves the evidence a real one leaves, and nothing more: no object
says it is the cause."""

# ruff: noqa: E501  (log lines, event messages and fixtures are quoted whole)

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from benchyard.sre.alerts import alert
from benchyard.sre.apps import flagd_document
from benchyard.sre.cluster import Cluster, PodState, short_hash, stamp
from benchyard.sre.incident import FaultSpec

CHAOS_NAMESPACE = "chaos-mesh"


class FaultError(ValueError):
    """A fault that does not fit its application (an unknown workload, a missing parameter)."""


def apply_fault(cluster: Cluster, fault: FaultSpec) -> None:
    handler = MECHANISMS.get(fault.mechanism)
    if handler is None:  # pragma: no cover - the model's Literal keeps this out
        raise FaultError(f"unknown mechanism '{fault.mechanism}'")
    handler(cluster, fault)


# ---- helpers ----------------------------------------------------------------------------------


def _service(cluster: Cluster, fault: FaultSpec) -> str:
    if fault.service:
        return fault.service
    found = cluster.service_of(fault.target.name)
    if found is None:
        raise FaultError(
            f"{fault.mechanism}: cannot tell which service '{fault.target.name}' belongs to; "
            "give `service`"
        )
    return found.name


def _workload(cluster: Cluster, fault: FaultSpec) -> str:
    if fault.target.kind.lower() == "deployment":
        name = fault.target.name
    else:
        name = cluster.service_def(_service(cluster, fault)).workloads[0]
    if cluster.get("Deployment", name) is None:
        raise FaultError(f"{fault.mechanism}: no Deployment '{name}' in {cluster.app.name}")
    return name


def _param(fault: FaultSpec, name: str, default: Any = None) -> Any:
    value = fault.params.get(name, default)
    if value is None:
        raise FaultError(f"{fault.mechanism}: params.{name} is required")
    return value


def _at(cluster: Cluster, offset: float = 0.0) -> float:
    return cluster.start + offset


def _since(cluster: Cluster) -> float:
    return cluster.minutes_since_start()


def _crash_loop(
    cluster: Cluster,
    pods: list[PodState],
    reason: str,
    exit_code: int,
    output: list[str],
    waiting: str = "CrashLoopBackOff",
    message: str = "",
) -> None:
    restarts = max(1, int(_since(cluster) / 2.5))
    for pod in pods:
        pod.ready = False
        pod.waiting = waiting
        pod.waiting_message = (
            message or f"back-off 5m0s restarting failed container={pod.service} pod={pod.name}"
        )
        pod.restarts = restarts
        pod.last_terminated = {
            "reason": reason,
            "exitCode": exit_code,
            "finishedAt": stamp(cluster.now - 40),
        }
        pod.crash_output = output
        cluster.event(
            "Pod",
            pod.name,
            "BackOff",
            f"Back-off restarting failed container {pod.service} in pod {pod.name}_{cluster.app.namespace}",
            first=pod.created + 30,
            last=cluster.now - 20,
            count=restarts * 3,
        )


def _not_running(cluster: Cluster, service: str, kind: str) -> None:
    health = cluster.health_of(service)
    health.down = kind
    health.quiet = True
    cluster.touched.add(service)


def _rollout(
    cluster: Cluster,
    workload: str,
    change: Callable[[dict[str, Any]], None],
    at: float | None = None,
) -> list[PodState]:
    deployment = cluster.get("Deployment", workload)
    assert deployment is not None
    change(deployment["spec"]["template"]["spec"])
    return cluster.rollout(workload, _at(cluster) if at is None else at)


def _restart(cluster: Cluster, workload: str, at: float) -> None:
    """`kubectl rollout restart`: a new ReplicaSet with the same template, healthy pods."""
    deployment = cluster.get("Deployment", workload)
    if deployment is None:
        return
    template = deployment["spec"]["template"]
    template["metadata"].setdefault("annotations", {})["kubectl.kubernetes.io/restartedAt"] = stamp(
        at
    )
    for pod in cluster.rollout(workload, at, "kubectl-rollout"):
        pod.created = at + 3
        cluster.event(
            "Pod", pod.name, "Started", f"Started container {pod.service}", "Normal", at + 8, at + 8
        )


# ---- feature flags (flagd) --------------------------------------------------------------------

FLAG_EFFECTS: dict[str, dict[str, Any]] = {
    "productCatalogFailure": {
        "service": "product-catalog",
        "error": 0.12,
        "text": "Error: Product Catalog Fail Feature Flag Enabled",
    },
    "recommendationCacheFailure": {
        "service": "recommendation",
        "latency_ms": 350,
        "memory": 3.2,
        "log": ("info", "cache miss: rebuilding product cache (entries={n})", 8),
    },
    "adManualGc": {
        "service": "ad",
        "latency_ms": 900,
        "log": ("info", "Triggering a manual garbage collection, next one in 10 seconds.", 6),
    },
    "adHighCpu": {
        "service": "ad",
        "latency_ms": 450,
        "cpu": 9.5,
        "once": ("warn", "High CPU-Load problempattern enabled"),
    },
    "adFailure": {
        "service": "ad",
        "error": 0.1,
        "text": "GetAds Failed with status Status{code=UNAVAILABLE, description=null, cause=null}",
    },
    "kafkaQueueProblems": {
        "service": "kafka",
        "latency_ms": 2500,
        "consumers_stall": True,
        "checkout_log": (
            "warn",
            "FeatureFlag 'kafkaQueueProblems' is activated, overloading queue now.",
            1,
        ),
    },
    "cartFailure": {
        "service": "cart",
        "error": 0.3,
        "text": "Can't access cart storage. System.ApplicationException: Wasn't able to connect to redis",
    },
    "paymentFailure": {
        "service": "payment",
        "error": 1.0,
        "text": "Payment request failed. Invalid token. app.loyalty.level=gold",
    },
    "paymentUnreachable": {
        "service": "checkout",
        "blocked": ("payment", "dns", "badAddress:50051"),
    },
    "loadGeneratorFloodHomepage": {
        "service": "frontend-proxy",
        "flood": 6.0,
        "latency_ms": 700,
        "error": 0.14,
        "text": "upstream overflow: circuit breaker tripped (503)",
    },
    "imageSlowLoad": {"service": "image-provider", "latency_ms": 10_000},
}


def feature_flag(cluster: Cluster, fault: FaultSpec) -> None:
    flag = str(_param(fault, "flag"))
    variant = str(fault.params.get("variant", "on"))
    configmap = cluster.get("ConfigMap", fault.target.name, fault.target.namespace)
    if configmap is None:
        raise FaultError(f"feature-flag: no ConfigMap '{fault.target.name}' in {cluster.app.name}")
    cluster.flags_on[flag] = "on"
    configmap["data"]["demo.flagd.json"] = flagd_document(cluster.flags_on)
    cluster.touch(configmap, _at(cluster), "kubectl-edit")
    effect = FLAG_EFFECTS.get(flag, {})
    service = fault.service or effect.get("service")
    if service is None:
        raise FaultError(
            f"feature-flag: flag '{flag}' is not one the simulator knows; give `service`"
        )
    health = cluster.health_of(service)
    cluster.touched.update({service, "flagd"})
    share = 1.0
    if variant.endswith("%"):
        share = max(0.01, min(1.0, float(variant.rstrip("%")) / 100))
    if "error" in effect:
        health.error = max(health.error, effect["error"] * share)
        health.error_text = effect["text"]
    health.latency_ms += effect.get("latency_ms", 0)
    health.cpu *= effect.get("cpu", 1.0)
    health.memory *= effect.get("memory", 1.0)
    if "flood" in effect:
        health.traffic *= effect["flood"]
        cluster.health_of("frontend").traffic *= effect["flood"] * 0.8
        cluster.health_of("frontend").cpu *= 3.0
        cluster.health_of("load-generator").cpu *= 4.0
    if "blocked" in effect:
        callee, kind, detail = effect["blocked"]
        health.blocked[callee] = (kind, detail)
    if "log" in effect:
        level, text, rate = effect["log"]
        cluster.log(service, level, text, per_minute=rate)
    if "once" in effect:
        cluster.log(service, effect["once"][0], effect["once"][1], at=_at(cluster, 20))
    if effect.get("consumers_stall"):
        for consumer in ("accounting", "fraud-detection"):
            cluster.health_of(consumer).stalled_consumer = True
        level, text, rate = effect["checkout_log"]
        cluster.log("checkout", level, text, per_minute=rate)
    for workload in fault.params.get("restart", []):
        _restart(cluster, str(workload), _at(cluster, 15))
    cluster.log(
        "flagd",
        "info",
        "configuration change (update) for flagSource file:/etc/flagd/demo.flagd.json",
        at=_at(cluster, 2),
    )
    users = [s.name for s in cluster.app.services if flag in s.flags] or [service]
    for user in users:
        cluster.log(
            user,
            "info",
            f"flagd provider: PROVIDER_CONFIGURATION_CHANGED (flags changed: {flag})",
            at=_at(cluster, 25),
        )


# ---- Chaos Mesh schedules ---------------------------------------------------------------------


def chaos(cluster: Cluster, fault: FaultSpec) -> None:
    kind = str(_param(fault, "type"))
    spec = copy.deepcopy(fault.params.get("spec") or {})
    action = str(fault.params.get("action") or spec.get("action") or "")
    selector_ns = str(fault.params.get("namespace", cluster.app.namespace))
    name, namespace = fault.target.name, fault.target.namespace or CHAOS_NAMESPACE
    first_run = _at(cluster, -5)
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
        service = _service(cluster, fault)
        targets = [pod.name for pod in cluster.pods_of_service(service)]
    records = [
        {
            "id": f"{selector_ns}/{pod}",
            "phase": "Injected",
            "injectedCount": max(1, int(_since(cluster))),
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
        count=max(1, int(_since(cluster))),
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
    service = _service(cluster, fault)
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
                pod.restarts += max(1, int(_since(cluster)))
                pod.created = cluster.now - cluster.rng.randint(5, 50)
        else:
            health.down = "refused"
            health.quiet = True
            for pod in cluster.pods_of_service(service):
                pod.ready = False
                pod.restarts += max(1, int(_since(cluster) / 1.5))
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
                    first=_at(cluster, 20),
                    last=cluster.now - 5,
                    count=int(_since(cluster) * 6),
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
                    pod.restarts += max(1, int(_since(cluster) / 4))
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
            alert("etcdHighFsyncDurations", _at(cluster, 90), labels, severity="warning")
        )
    cluster.extra_alerts.append(
        alert(
            "KubeAPIErrorBudgetBurn",
            _at(cluster, 200),
            {**labels, "job": "apiserver"},
            severity="warning",
        )
    )
    cluster.extra_alerts.append(
        alert(
            "KubeAPILatencyHigh",
            _at(cluster, 140),
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
        first=_at(cluster, 60),
        last=cluster.now - 30,
        count=int(_since(cluster) * 2),
        namespace=namespace,
    )


def _lower_first(kind: str) -> str:
    return {"HTTPChaos": "httpChaos", "JVMChaos": "jvmChaos", "IOChaos": "ioChaos"}.get(
        kind, kind[:1].lower() + kind[1:]
    )


# ---- workloads -------------------------------------------------------------------------------


def bad_image(cluster: Cluster, fault: FaultSpec) -> None:
    workload = _workload(cluster, fault)
    service = _service(cluster, fault)
    container = cluster.container(workload)
    repository, _, tag = container["image"].rpartition(":")
    image = str(fault.params.get("image") or f"{repository}:{_bumped(tag)}")

    def change(spec: dict[str, Any]) -> None:
        spec["containers"][0]["image"] = image

    pods = _rollout(cluster, workload, change)
    for pod in pods:
        pod.ready, pod.phase, pod.waiting = False, "Pending", "ImagePullBackOff"
        pod.waiting_message = f'Back-off pulling image "{image}"'
        pulls = max(1, int(_since(cluster)))
        cluster.event(
            "Pod",
            pod.name,
            "Failed",
            f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and unpack image "{image}": failed to resolve reference "{image}": {image}: not found',
            first=pod.created + 5,
            last=cluster.now - 30,
            count=pulls,
        )
        cluster.event(
            "Pod",
            pod.name,
            "Failed",
            "Error: ErrImagePull",
            first=pod.created + 5,
            last=cluster.now - 30,
            count=pulls,
        )
        cluster.event(
            "Pod",
            pod.name,
            "BackOff",
            f'Back-off pulling image "{image}"',
            "Normal",
            pod.created + 20,
            cluster.now - 10,
            count=pulls * 4,
        )
    _not_running(cluster, service, "refused")


def _bumped(tag: str) -> str:
    head, dash, rest = tag.partition("-")
    parts = head.split(".")
    if all(part.isdigit() for part in parts) and parts:
        parts[-1] = str(int(parts[-1]) + 7)
        return ".".join(parts) + dash + rest
    return tag + "-rc0"


def bad_arch_image(cluster: Cluster, fault: FaultSpec) -> None:
    workload = _workload(cluster, fault)
    service = _service(cluster, fault)
    container = cluster.container(workload)
    image = str(fault.params.get("image") or container["image"].replace(":", ":arm64-", 1))

    def change(spec: dict[str, Any]) -> None:
        spec["containers"][0]["image"] = image

    pods = _rollout(cluster, workload, change)
    binary = f"/usr/src/app/{service}"
    _crash_loop(cluster, pods, "Error", 255, [f"exec {binary}: exec format error"])
    for pod in pods:
        cluster.event(
            "Pod",
            pod.name,
            "Pulled",
            f'Successfully pulled image "{image}" in 1.2s',
            "Normal",
            pod.created + 4,
            pod.created + 4,
        )
    _not_running(cluster, service, "refused")


def bad_command(cluster: Cluster, fault: FaultSpec) -> None:
    workload = _workload(cluster, fault)
    service = _service(cluster, fault)
    command = [str(part) for part in fault.params.get("command", [f"/app/{service}d"])]

    def change(spec: dict[str, Any]) -> None:
        spec["containers"][0]["command"] = command

    pods = _rollout(cluster, workload, change)
    message = f'failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "{command[0]}": stat {command[0]}: no such file or directory: unknown'
    _crash_loop(cluster, pods, "StartError", 128, [], message=message)
    for pod in pods:
        pod.last_terminated = {
            "reason": "StartError",
            "exitCode": 128,
            "message": message,
            "finishedAt": stamp(cluster.now - 40),
        }
        cluster.event(
            "Pod",
            pod.name,
            "Failed",
            f"Error: {message}",
            first=pod.created + 5,
            last=cluster.now - 30,
            count=pod.restarts + 1,
        )
    _not_running(cluster, service, "refused")


def bad_env(cluster: Cluster, fault: FaultSpec) -> None:
    workload = _workload(cluster, fault)
    service = _service(cluster, fault)
    name = str(_param(fault, "name"))
    value = str(_param(fault, "value"))
    definition = cluster.service_def(service)
    old = dict(definition.env).get(name)
    callee = fault.params.get("dependency") or _dependency_of(cluster, old or value)
    if callee is None:
        raise FaultError(
            f"bad-env: cannot tell which dependency {name} points at; give params.dependency"
        )

    def change(spec: dict[str, Any]) -> None:
        env = spec["containers"][0].setdefault("env", [])
        for entry in env:
            if entry["name"] == name:
                entry["value"] = value
                break
        else:
            env.append({"name": name, "value": value})

    _rollout(cluster, workload, change)
    host = value.split("://")[-1].split(":")[0]
    kind = "dns" if host != str(callee) else "refused"
    cluster.health_of(service).blocked[str(callee)] = (kind, value)
    cluster.touched.update({service, str(callee)})


def _dependency_of(cluster: Cluster, address: str) -> str | None:
    host = address.split("://")[-1].split(":")[0].split("/")[0]
    return host if cluster.app.service(host) is not None else None


def bad_hpa(cluster: Cluster, fault: FaultSpec) -> None:
    workload = _workload(cluster, fault)
    service = _service(cluster, fault)
    maximum = int(fault.params.get("max_replicas", 1))
    target = int(fault.params.get("cpu_utilization", 1000))
    hpa = cluster.get("HorizontalPodAutoscaler", workload)
    spec = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": workload},
        "minReplicas": 1,
        "maxReplicas": maximum,
        "metrics": [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": target},
                },
            }
        ],
    }
    if hpa is None:
        hpa = cluster.add(
            "HorizontalPodAutoscaler",
            workload,
            cluster.app.namespace,
            spec,
            created=_at(cluster, -30),
        )
    else:
        hpa["spec"] = spec
        cluster.touch(hpa, _at(cluster, -30))
    hpa["status"] = {
        "currentReplicas": 1,
        "desiredReplicas": 1,
        "currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 97}}}
        ],
        "conditions": [
            {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"},
            {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound"},
            {
                "type": "ScalingLimited",
                "status": "True" if maximum <= 1 else "False",
                "reason": "TooManyReplicas" if maximum <= 1 else "DesiredWithinRange",
                "message": "the desired replica count is more than the maximum replica count"
                if maximum <= 1
                else "",
            },
        ],
    }
    definition = cluster.service_def(service)
    health = cluster.health_of(service)
    health.cpu = max(health.cpu, definition.cpu_limit / max(definition.cpu_rest, 0.01) * 0.97)
    health.latency_ms += definition.latency_ms * 8 + 150
    health.error = max(health.error, 0.06)
    health.error_text = health.error_text or "request queue full, rejecting request (503)"
    cluster.touched.add(service)


SCHEDULING = {
    "node-selector": "0/4 nodes are available: 1 node(s) had untolerated taint {{node-role.kubernetes.io/control-plane: }}, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
    "anti-affinity": "0/4 nodes are available: 1 node(s) had untolerated taint {{node-role.kubernetes.io/control-plane: }}, 3 node(s) didn't match pod anti-affinity rules. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.",
    "cordoned": "0/4 nodes are available: 1 node(s) had untolerated taint {{node-role.kubernetes.io/control-plane: }}, 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
    "pvc": 'persistentvolumeclaim "{claim}" not found. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.',
    "preemption": "0/4 nodes are available: 1 node(s) had untolerated taint {{node-role.kubernetes.io/control-plane: }}, 3 Insufficient memory. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.",
}


def unschedulable(cluster: Cluster, fault: FaultSpec) -> None:
    reason = str(_param(fault, "reason"))
    workload = _workload(cluster, fault)
    service = _service(cluster, fault)
    if reason == "quota":
        _quota(cluster, fault, workload, service)
        return
    claim = str(fault.params.get("claim", f"{workload}-data"))
    node = cluster.node_names[1]

    def change(spec: dict[str, Any]) -> None:
        if reason == "node-selector":
            spec["nodeSelector"] = {
                "kubernetes.io/hostname": str(fault.params.get("node", "worker-node-99"))
            }
        elif reason == "anti-affinity":
            labels = {"app.kubernetes.io/component": service}
            spec["affinity"] = {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {"matchLabels": labels},
                            "topologyKey": "kubernetes.io/os",
                        }
                    ]
                }
            }
        elif reason == "cordoned":
            spec["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "kubernetes.io/hostname",
                                        "operator": "In",
                                        "values": [node],
                                    }
                                ]
                            }
                        ]
                    }
                }
            }
        elif reason == "pvc":
            spec.setdefault("volumes", []).append(
                {"name": "data", "persistentVolumeClaim": {"claimName": claim}}
            )

    if reason in ("node-selector", "anti-affinity", "pvc"):
        pods = _rollout(cluster, workload, change)
    else:
        deployment = cluster.get("Deployment", workload)
        assert deployment is not None
        change(deployment["spec"]["template"]["spec"])
        pods = cluster.pods_of(workload)
        for pod in pods:
            pod.created = _at(cluster, 30)
    if reason == "cordoned":
        node_object = cluster.get("Node", node)
        assert node_object is not None
        node_object["spec"]["unschedulable"] = True
        node_object["spec"]["taints"] = [
            {
                "key": "node.kubernetes.io/unschedulable",
                "effect": "NoSchedule",
                "timeAdded": stamp(_at(cluster)),
            }
        ]
        cluster.touch(node_object, _at(cluster), "kubectl-cordon")
        cluster.event(
            "Node",
            node,
            "NodeNotSchedulable",
            f"Node {node} status is now: NodeNotSchedulable",
            "Normal",
            _at(cluster),
            _at(cluster),
            namespace="default",
        )
        if fault.params.get("pdb"):
            cluster.add(
                "PodDisruptionBudget",
                str(fault.params["pdb"]),
                cluster.app.namespace,
                {
                    "minAvailable": 1,
                    "selector": {"matchLabels": {"app.kubernetes.io/component": service}},
                },
                created=cluster.now - 5 * 86400,
                status={"currentHealthy": 0, "desiredHealthy": 1, "disruptionsAllowed": 0},
            )
        for pod in pods:
            cluster.event(
                "Pod",
                pod.name,
                "Killing",
                f"Stopping container {service}",
                "Normal",
                _at(cluster, 20),
                _at(cluster, 20),
            )
    if reason == "preemption":
        _preemptor(cluster, fault)
        for pod in pods:
            cluster.event(
                "Pod",
                pod.name,
                "Preempted",
                f"Preempted by pod {cluster.app.namespace}/{cluster.preemptor} on node {pod.node}",
                first=_at(cluster, 10),
                last=_at(cluster, 10),
            )
    message = SCHEDULING[reason].format(claim=claim).replace("{{", "{").replace("}}", "}")
    for pod in pods:
        pod.phase, pod.ready, pod.node = "Pending", False, ""
        pod.waiting = None
        pod.waiting_message = message
        cluster.event(
            "Pod",
            pod.name,
            "FailedScheduling",
            message,
            first=pod.created + 1,
            last=cluster.now - 60,
            count=max(1, int(_since(cluster) / 5)),
        )
    _not_running(cluster, service, "refused")


def _preemptor(cluster: Cluster, fault: FaultSpec) -> None:
    name = str(fault.params.get("preemptor", "eviction-pod"))
    cluster.add("PriorityClass", "high-priority", None, {}, created=_at(cluster, -60))["value"] = (
        1_000_000
    )
    labels = {"app": name}
    cluster.add(
        "Deployment",
        name,
        cluster.app.namespace,
        {
            "replicas": 3,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "priorityClassName": "high-priority",
                    "containers": [
                        {
                            "name": "stress",
                            "image": "polinux/stress",
                            "resources": {"requests": {"memory": "6Gi"}},
                        }
                    ],
                },
            },
        },
        created=_at(cluster, -30),
        labels=labels,
        annotations={"deployment.kubernetes.io/revision": "1"},
    )
    replica_set = f"{name}-{short_hash(cluster.seed, name)}"
    for index in range(3):
        pod = PodState(
            name=f"{replica_set}-{short_hash(cluster.seed, name, index, length=5)}",
            service=name,
            workload=name,
            node=cluster.node_names[index],
            created=_at(cluster, 5),
            replica_set=replica_set,
            ip=cluster.pod_ip(),
        )
        cluster.pods[pod.name] = pod
    cluster.preemptor = next(pod for pod in cluster.pods if pod.startswith(replica_set))


def _quota(cluster: Cluster, fault: FaultSpec, workload: str, service: str) -> None:
    quota = str(fault.params.get("quota", "strict-resource-quota"))
    definition = cluster.service_def(service)
    cluster.add(
        "ResourceQuota",
        quota,
        cluster.app.namespace,
        {"hard": {"limits.cpu": "2", "limits.memory": "2Gi", "pods": "30"}},
        created=_at(cluster, -40),
        status={
            "hard": {"limits.cpu": "2", "limits.memory": "2Gi", "pods": "30"},
            "used": {"limits.cpu": "1950m", "limits.memory": "1990Mi", "pods": "21"},
        },
    )
    pods = cluster.pods_of(workload)
    for pod in pods:
        del cluster.pods[pod.name]
        cluster.event(
            "Pod",
            pod.name,
            "Killing",
            f"Stopping container {service}",
            "Normal",
            _at(cluster, 5),
            _at(cluster, 5),
        )
    replica_set = (
        pods[0].replica_set if pods else f"{workload}-{short_hash(cluster.seed, workload)}"
    )
    message = (
        f'Error creating: pods "{replica_set}-{short_hash(cluster.seed, quota, length=5)}" is forbidden: exceeded quota: {quota}, '
        f"requested: limits.memory={definition.memory_limit_mb}Mi, used: limits.memory=1990Mi, limited: limits.memory=2Gi"
    )
    cluster.event(
        "ReplicaSet",
        replica_set,
        "FailedCreate",
        message,
        first=_at(cluster, 6),
        last=cluster.now - 40,
        count=max(2, int(_since(cluster) * 1.5)),
    )
    _not_running(cluster, service, "refused")


def init_container(cluster: Cluster, fault: FaultSpec) -> None:
    workload = _workload(cluster, fault)
    service = _service(cluster, fault)
    mode = str(fault.params.get("mode", "crash"))
    configmap = fault.params.get("configmap")
    mount = f"/etc/{configmap}" if configmap else "/config"

    def change(spec: dict[str, Any]) -> None:
        command = (
            ["sh", "-c", f"cat {mount}/features.yaml"]
            if mode == "crash"
            else [
                "sh",
                "-c",
                f"until nslookup {service}-db; do echo waiting for {service}-db; sleep 2; done",
            ]
        )
        init: dict[str, Any] = {"name": "init-config", "image": "busybox:1.36", "command": command}
        if configmap:
            init["volumeMounts"] = [{"name": str(configmap), "mountPath": mount}]
            spec.setdefault("volumes", []).append(
                {"name": str(configmap), "configMap": {"name": str(configmap)}}
            )
        spec["initContainers"] = [init]

    pods = _rollout(cluster, workload, change)
    if configmap and cluster.get("ConfigMap", str(configmap)) is None:
        cluster.add(
            "ConfigMap",
            str(configmap),
            cluster.app.namespace,
            None,
            created=_at(cluster, -20),
            data={"settings.yaml": "cacheSize: 256\n"},
        )
    for pod in pods:
        pod.ready, pod.phase = False, "Pending"
        if mode == "crash":
            pod.init = "Init:CrashLoopBackOff"
            pod.restarts = max(1, int(_since(cluster) / 2.5))
            pod.crash_output = [
                f"cat: can't open '{mount}/features.yaml': No such file or directory"
            ]
            pod.last_terminated = {
                "reason": "Error",
                "exitCode": 1,
                "finishedAt": stamp(cluster.now - 50),
            }
            cluster.event(
                "Pod",
                pod.name,
                "BackOff",
                f"Back-off restarting failed container init-config in pod {pod.name}_{cluster.app.namespace}",
                first=pod.created + 20,
                last=cluster.now - 15,
                count=pod.restarts * 3,
            )
        else:
            pod.init = "Init:0/1"
            pod.crash_output = [
                f"waiting for {service}-db",
                f"nslookup: can't resolve '{service}-db'",
            ]
        pod.waiting_message = "PodInitializing"
    _not_running(cluster, service, "refused")


def oom(cluster: Cluster, fault: FaultSpec) -> None:
    workload = _workload(cluster, fault)
    service = _service(cluster, fault)
    definition = cluster.service_def(service)
    memory = int(fault.params.get("memory_mb", max(4, definition.memory_rest_mb // 3)))
    if fault.params.get("rollout", True):

        def change(spec: dict[str, Any]) -> None:
            resources = spec["containers"][0]["resources"]
            resources["limits"]["memory"] = f"{memory}Mi"
            resources["requests"]["memory"] = f"{memory}Mi"
            if "cpu" in fault.params:
                resources["limits"]["cpu"] = str(fault.params["cpu"])
                resources["requests"]["cpu"] = str(fault.params["cpu"])

        pods = _rollout(cluster, workload, change)
    else:
        pods = cluster.pods_of(workload)
    restarts = max(2, int(_since(cluster) / 2))
    for index, pod in enumerate(pods):
        pod.restarts = restarts
        pod.last_terminated = {
            "reason": "OOMKilled",
            "exitCode": 137,
            "finishedAt": stamp(cluster.now - 25 - index * 7),
        }
        pod.waiting = "CrashLoopBackOff" if index % 2 == 0 else None
        pod.ready = pod.waiting is None
        cluster.event(
            "Pod",
            pod.name,
            "BackOff",
            f"Back-off restarting failed container {service} in pod {pod.name}_{cluster.app.namespace}",
            first=pod.created + 60,
            last=cluster.now - 20,
            count=restarts * 2,
        )
        cluster.event(
            "Node",
            pod.node,
            "OOMKilling",
            f"Memory cgroup out of memory: Killed process {cluster.rng.randint(2000, 9000)} ({service}) total-vm:{cluster.rng.randint(200000, 900000)}kB, anon-rss:{memory * 1024}kB",
            first=pod.created + 55,
            last=cluster.now - 30,
            count=restarts,
            namespace="default",
        )
    health = cluster.health_of(service)
    health.memory = max(health.memory, memory / max(definition.memory_rest_mb, 1))
    health.down = "refused" if all(not pod.ready for pod in pods) else None
    health.error = max(health.error, 0.45)
    health.error_text = health.error_text or "connection reset by peer"
    cluster.touched.add(service)


# ---- services and the network ------------------------------------------------------------------


def _service_object(cluster: Cluster, fault: FaultSpec) -> tuple[dict[str, Any], str]:
    service = _service(cluster, fault)
    obj = cluster.get("Service", service)
    if obj is None:
        raise FaultError(f"{fault.mechanism}: no Service '{service}'")
    return obj, service


def service_port(cluster: Cluster, fault: FaultSpec) -> None:
    obj, service = _service_object(cluster, fault)
    port = int(fault.params.get("target_port", cluster.service_def(service).port + 1))
    obj["spec"]["ports"][0]["targetPort"] = port
    cluster.touch(obj, _at(cluster))
    _not_running(cluster, service, "refused")
    cluster.health_of(service).quiet = False


def service_selector(cluster: Cluster, fault: FaultSpec) -> None:
    obj, service = _service_object(cluster, fault)
    selector = fault.params.get("selector") or {"app.kubernetes.io/component": f"{service}-v2"}
    obj["spec"]["selector"] = dict(selector)
    cluster.touch(obj, _at(cluster))
    _not_running(cluster, service, "refused")
    cluster.health_of(service).quiet = False


def service_deleted(cluster: Cluster, fault: FaultSpec) -> None:
    service = _service(cluster, fault)
    cluster.remove("Service", service, cluster.app.namespace)
    cluster.deleted_services.append(service)
    _not_running(cluster, service, "dns")
    cluster.health_of(service).quiet = False


def network_policy(cluster: Cluster, fault: FaultSpec) -> None:
    service = _service(cluster, fault)
    name = str(
        fault.params.get("name")
        or (
            fault.target.name
            if fault.target.kind.lower() == "networkpolicy"
            else f"{service}-ingress"
        )
    )
    ports = fault.params.get("ports")
    ingress: list[dict[str, Any]] = [{"ports": [{"port": port} for port in ports]}] if ports else []
    cluster.add(
        "NetworkPolicy",
        name,
        cluster.app.namespace,
        {
            "podSelector": {"matchLabels": {"app.kubernetes.io/component": service}},
            "policyTypes": ["Ingress"],
            "ingress": ingress,
        },
        created=_at(cluster),
    )
    _not_running(cluster, service, "timeout")
    cluster.health_of(service).quiet = False


def readiness_probe(cluster: Cluster, fault: FaultSpec) -> None:
    workload = _workload(cluster, fault)
    service = _service(cluster, fault)
    port = int(fault.params.get("port", cluster.service_def(service).port + 1))

    def change(spec: dict[str, Any]) -> None:
        spec["containers"][0]["readinessProbe"] = {
            "httpGet": {"path": "/", "port": port},
            "periodSeconds": 5,
            "failureThreshold": 3,
        }

    for pod in _rollout(cluster, workload, change):
        pod.ready = False
        cluster.event(
            "Pod",
            pod.name,
            "Unhealthy",
            f'Readiness probe failed: Get "http://{pod.ip}:{port}/": dial tcp {pod.ip}:{port}: connect: connection refused',
            first=pod.created + 10,
            last=cluster.now - 3,
            count=int(_since(cluster) * 12),
        )
    _not_running(cluster, service, "refused")
    cluster.health_of(service).quiet = False


def dns_policy(cluster: Cluster, fault: FaultSpec) -> None:
    workload = _workload(cluster, fault)
    service = _service(cluster, fault)

    def change(spec: dict[str, Any]) -> None:
        spec["dnsPolicy"] = "None"
        spec["dnsConfig"] = {
            "nameservers": [str(fault.params.get("nameserver", "192.0.2.53"))],
            "searches": [f"{cluster.app.namespace}.svc.cluster.local"],
        }

    _rollout(cluster, workload, change)
    health = cluster.health_of(service)
    for call in cluster.service_def(service).calls:
        health.blocked[call.service] = ("dns", "")
    cluster.touched.add(service)


def credentials(cluster: Cluster, fault: FaultSpec) -> None:
    mode = str(fault.params.get("mode", "password"))
    if mode == "password":
        server = _service(cluster, fault)
        workload = _workload(cluster, fault)

        def change(spec: dict[str, Any]) -> None:
            spec["containers"][0]["args"] = ["--requirepass", "$(VALKEY_PASSWORD)"]
            spec["containers"][0].setdefault("env", []).append(
                {
                    "name": "VALKEY_PASSWORD",
                    "valueFrom": {"secretKeyRef": {"name": f"{server}-auth", "key": "password"}},
                }
            )

        _rollout(cluster, workload, change)
        for client in cluster.app.callers_of(server):
            cluster.health_of(client.name).blocked[server] = (
                "auth",
                "NOAUTH Authentication required.",
            )
            cluster.touched.add(client.name)
        cluster.touched.add(server)
        return
    secret = cluster.get("Secret", fault.target.name)
    if secret is None:
        raise FaultError(f"credentials: no Secret '{fault.target.name}'")
    cluster.touch(secret, _at(cluster))
    user = str(
        fault.params.get("service")
        or next((s.name for s in cluster.app.services if fault.target.name in s.secrets), "")
    )
    if not user:
        raise FaultError("credentials: no service mounts the secret; give `service`")
    health = cluster.health_of(user)
    health.error = 1.0
    health.error_text = str(
        fault.params.get(
            "error_text",
            "Net::SMTPAuthenticationError: 535 5.7.8 Username and Password not accepted",
        )
    )
    cluster.log(user, "error", health.error_text, per_minute=3)
    cluster.touched.add(user)


def scaled_to_zero(cluster: Cluster, fault: FaultSpec) -> None:
    workload = _workload(cluster, fault)
    service = _service(cluster, fault)
    deployment = cluster.get("Deployment", workload)
    assert deployment is not None
    deployment["spec"]["replicas"] = 0
    cluster.touch(deployment, _at(cluster), "kubectl-scale")
    replica_set = f"{workload}-{short_hash(cluster.seed, workload)}"
    for pod in cluster.pods_of(workload):
        del cluster.pods[pod.name]
        replica_set = pod.replica_set
        cluster.event(
            "Pod",
            pod.name,
            "Killing",
            f"Stopping container {service}",
            "Normal",
            _at(cluster, 2),
            _at(cluster, 2),
        )
    cluster.event(
        "Deployment",
        workload,
        "ScalingReplicaSet",
        f"Scaled down replica set {replica_set} to 0 from 1",
        "Normal",
        _at(cluster),
        _at(cluster),
    )
    _not_running(cluster, service, "refused")
    cluster.health_of(service).stalled_consumer = True


def mesh_policy(cluster: Cluster, fault: FaultSpec) -> None:
    mode = str(_param(fault, "mode"))
    ns = cluster.app.namespace
    if mode == "deny":
        service = _service(cluster, fault)
        name = str(fault.params.get("policy", f"{fault.target.name}-deny"))
        cluster.add(
            "AuthorizationPolicy",
            name,
            ns,
            {
                "targetRefs": [
                    {
                        "kind": "Gateway",
                        "group": "gateway.networking.k8s.io",
                        "name": fault.target.name,
                    }
                ],
                "action": "DENY",
                "rules": [
                    {"to": [{"operation": {"methods": list(fault.params.get("methods", ["GET"]))}}]}
                ],
            },
            created=_at(cluster),
        )
        health = cluster.health_of(service)
        health.error, health.error_text = 1.0, "RBAC: access denied"
        cluster.touched.add(service)
    elif mode == "strict-mtls":
        workload = _workload(cluster, fault)
        service = _service(cluster, fault)
        name = str(fault.params.get("policy", "strict-mtls-mode"))
        cluster.add(
            "PeerAuthentication", name, ns, {"mtls": {"mode": "STRICT"}}, created=_at(cluster)
        )

        def change(spec: dict[str, Any]) -> None:
            pass

        deployment = cluster.get("Deployment", workload)
        assert deployment is not None
        deployment["spec"]["template"]["metadata"]["labels"]["istio.io/dataplane-mode"] = "none"
        _rollout(cluster, workload, change)
        _not_running(cluster, service, "reset")
        cluster.health_of(service).quiet = False
    elif mode == "ambient-off":
        namespace = cluster.get("Namespace", ns)
        assert namespace is not None
        namespace["metadata"]["labels"].pop("istio.io/dataplane-mode", None)
        cluster.touch(namespace, _at(cluster))
        service = fault.service or "productpage"
        _not_running(cluster, service, "reset")
        cluster.health_of(service).quiet = False
    else:
        raise FaultError(f"mesh-policy: unknown mode '{mode}' (deny, strict-mtls, ambient-off)")


def api_surge(cluster: Cluster, fault: FaultSpec) -> None:
    namespace = (
        fault.target.name if fault.target.kind.lower() == "namespace" else cluster.app.namespace
    )
    labels = {"namespace": "kube-system", "job": "apiserver"}
    cluster.extra_alerts.append(
        alert(
            "KubeAPILatencyHigh", _at(cluster, 120), {**labels, "verb": "LIST"}, severity="warning"
        )
    )
    cluster.extra_alerts.append(
        alert("KubeAPIErrorBudgetBurn", _at(cluster, 240), labels, severity="critical")
    )
    cluster.extra_alerts.append(
        alert(
            "KubeClientErrors",
            _at(cluster, 180),
            {"namespace": namespace, "job": "kubelet"},
            severity="warning",
        )
    )
    rate = int(fault.params.get("requests_per_second", 1000))
    cluster.event(
        "Namespace",
        namespace,
        "TooManyRequests",
        f"API priority and fairness: requests from service accounts in namespace {namespace} rejected (429) at {rate} requests/s",
        first=_at(cluster, 30),
        last=cluster.now - 10,
        count=int(_since(cluster) * 60),
        namespace=namespace,
        source="kube-apiserver",
    )
    for service in ("flagd", "frontend"):
        if cluster.app.service(service) is not None:
            cluster.health_of(service).latency_ms += 60


def no_limits(cluster: Cluster, fault: FaultSpec) -> None:
    workload = _workload(cluster, fault)
    service = _service(cluster, fault)

    def change(spec: dict[str, Any]) -> None:
        spec["containers"][0]["resources"].pop("limits", None)

    pods = _rollout(cluster, workload, change)
    definition = cluster.service_def(service)
    health = cluster.health_of(service)
    health.memory = max(health.memory, 18.0)
    health.latency_ms += definition.latency_ms * 2
    node = pods[0].node if pods else cluster.node_names[0]
    node_object = cluster.get("Node", node)
    if node_object is not None:
        for condition in node_object["status"]["conditions"]:
            if condition["type"] == "MemoryPressure":
                condition.update(
                    {
                        "status": "True",
                        "reason": "KubeletHasInsufficientMemory",
                        "lastTransitionTime": stamp(_at(cluster, 120)),
                    }
                )
    victims = [
        pod
        for pod in cluster.pods.values()
        if pod.node == node and pod.service != service and not pod.namespace
    ][:2]
    for pod in victims:
        cluster.event(
            "Pod",
            pod.name,
            "Evicted",
            f"The node was low on resource: memory. Threshold quantity: 100Mi, available: 61232Ki. Container {service} was using {int(definition.memory_rest_mb * 18)}Mi, request is {max(8, definition.memory_limit_mb // 2)}Mi, has larger consumption of memory.",
            first=_at(cluster, 150),
            last=_at(cluster, 150),
        )
        pod.restarts += 1
        pod.created = _at(cluster, 160)
    cluster.event(
        "Node",
        node,
        "EvictionThresholdMet",
        "Attempting to reclaim memory",
        first=_at(cluster, 140),
        last=cluster.now - 60,
        count=3,
        namespace="default",
    )
    cluster.touched.add(service)


def config_change(cluster: Cluster, fault: FaultSpec) -> None:
    """A ConfigMap edited by hand; the service that reads it misbehaves (starter incidents)."""
    configmap = cluster.get("ConfigMap", fault.target.name)
    if configmap is None:
        raise FaultError(f"config-change: no ConfigMap '{fault.target.name}'")
    key = str(_param(fault, "key"))
    configmap.setdefault("data", {})[key] = str(_param(fault, "value"))
    cluster.touch(configmap, _at(cluster, -20))
    service = _service(cluster, fault)
    health = cluster.health_of(service)
    health.error = max(health.error, float(fault.params.get("error", 0.0)))
    health.error_text = str(fault.params.get("error_text", ""))
    health.latency_ms += float(fault.params.get("latency_ms", 0))
    health.cpu *= float(fault.params.get("cpu", 1.0))
    if fault.params.get("log"):
        cluster.log(
            service,
            str(fault.params.get("log_level", "error")),
            str(fault.params["log"]),
            per_minute=float(fault.params.get("log_per_minute", 4)),
        )
    if fault.params.get("restart", True):
        for workload in cluster.service_def(service).workloads:
            _restart(cluster, workload, _at(cluster, 10))
    cluster.touched.add(service)


MECHANISMS: dict[str, Callable[[Cluster, FaultSpec], None]] = {
    "feature-flag": feature_flag,
    "chaos": chaos,
    "bad-image": bad_image,
    "bad-arch-image": bad_arch_image,
    "bad-command": bad_command,
    "bad-env": bad_env,
    "bad-hpa": bad_hpa,
    "unschedulable": unschedulable,
    "init-container": init_container,
    "oom": oom,
    "service-port": service_port,
    "service-selector": service_selector,
    "service-deleted": service_deleted,
    "network-policy": network_policy,
    "readiness-probe": readiness_probe,
    "dns-policy": dns_policy,
    "credentials": credentials,
    "scaled-to-zero": scaled_to_zero,
    "mesh-policy": mesh_policy,
    "api-surge": api_surge,
    "no-limits": no_limits,
    "config-change": config_change,
}
