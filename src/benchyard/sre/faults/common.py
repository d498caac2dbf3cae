"""What the faults share: the error a fault that does not fit its application raises, and the
steps many faults take (finding the service and workload a fault names, a crash loop, a rollout, a
restart)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchyard.sre.cluster import Cluster, PodState, stamp
from benchyard.sre.incident import FaultSpec

CHAOS_NAMESPACE = "chaos-mesh"


class FaultError(ValueError):
    """A fault that does not fit its application (an unknown workload, a missing parameter)."""


def fault_service(cluster: Cluster, fault: FaultSpec) -> str:
    if fault.service:
        return fault.service
    found = cluster.service_of(fault.target.name)
    if found is None:
        raise FaultError(
            f"{fault.mechanism}: cannot tell which service '{fault.target.name}' belongs to; "
            "give `service`"
        )
    return found.name


def fault_workload(cluster: Cluster, fault: FaultSpec) -> str:
    if fault.target.kind.lower() == "deployment":
        name = fault.target.name
    else:
        name = cluster.service_def(fault_service(cluster, fault)).workloads[0]
    if cluster.get("Deployment", name) is None:
        raise FaultError(f"{fault.mechanism}: no Deployment '{name}' in {cluster.app.name}")
    return name


def required_param(fault: FaultSpec, name: str, default: Any = None) -> Any:
    value = fault.params.get(name, default)
    if value is None:
        raise FaultError(f"{fault.mechanism}: params.{name} is required")
    return value


def after_start(cluster: Cluster, offset: float = 0.0) -> float:
    return cluster.start + offset


def elapsed_min(cluster: Cluster) -> float:
    return cluster.minutes_since_start()


def crash_loop(
    cluster: Cluster,
    pods: list[PodState],
    reason: str,
    exit_code: int,
    output: list[str],
    waiting: str = "CrashLoopBackOff",
    message: str = "",
) -> None:
    restarts = max(1, int(elapsed_min(cluster) / 2.5))
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


def not_running(cluster: Cluster, service: str, kind: str) -> None:
    health = cluster.health_of(service)
    health.down = kind
    health.quiet = True
    cluster.touched.add(service)


def roll_out(
    cluster: Cluster,
    workload: str,
    change: Callable[[dict[str, Any]], None],
    at: float | None = None,
) -> list[PodState]:
    deployment = cluster.get("Deployment", workload)
    assert deployment is not None
    change(deployment["spec"]["template"]["spec"])
    return cluster.rollout(workload, after_start(cluster) if at is None else at)


def restart_workload(cluster: Cluster, workload: str, at: float) -> None:
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
