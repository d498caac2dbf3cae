"""What every real cluster also shows: a busy service that is not at fault, warnings that mean
nothing, recent changes that broke nothing, an old restart, a paused experiment. Chosen by the
seed among services the faults do not involve, so they mislead without contradicting the fault."""

# ruff: noqa: E501  (tool descriptions, messages and prompts are quoted whole)

from __future__ import annotations

from benchyard.sre.alerts import alert
from benchyard.sre.cluster import Cluster, stamp
from benchyard.sre.incident import NoiseSpec

CHAOS_NAMESPACE = "chaos-mesh"


def add_noise(cluster: Cluster, noise: NoiseSpec) -> None:
    rng = cluster.rng
    involved = set(cluster.reached)
    for name in list(involved):
        service = cluster.app.service(name)
        if service is not None:
            involved.update(call.service for call in service.calls if call.critical)
    bystanders = [
        s.name
        for s in cluster.app.services
        if s.name not in involved
        and s.style != "locust"
        and not s.infra
        and cluster.pods_of_service(s.name)
    ]
    if noise.noisy_neighbour and bystanders:
        _noisy_neighbour(cluster, rng.choice(bystanders))
    herrings = [
        _old_restart,
        _stale_config_change,
        _harmless_warnings,
        _paused_experiment,
        _disk_alert,
        _probe_blip,
        _scaled_deployment,
    ]
    rng.shuffle(herrings)
    for herring in herrings[: noise.red_herrings]:
        if bystanders:
            herring(cluster, rng.choice(bystanders))


def _noisy_neighbour(cluster: Cluster, service: str) -> None:
    """Busy but healthy: CPU near its limit (a throttling alert), slow-handler warnings."""
    definition = cluster.service_def(service)
    health = cluster.health_of(service)
    health.cpu = max(health.cpu, definition.cpu_limit / max(definition.cpu_rest, 0.01) * 0.9)
    health.latency_ms += definition.latency_ms * 0.4
    cluster.log(
        service, "warn", "slow request: handler took {n} ms (budget 250 ms)", per_minute=1.5
    )
    cluster.noisy = service


def _old_restart(cluster: Cluster, service: str) -> None:
    pods = cluster.pods_of_service(service)
    if pods:
        pod = pods[0]
        pod.restarts = cluster.rng.randint(1, 3)
        pod.last_terminated = {
            "reason": cluster.rng.choice(["OOMKilled", "Error"]),
            "exitCode": 137,
            "finishedAt": stamp(cluster.now - cluster.rng.randint(2, 5) * 86400),
        }


def _stale_config_change(cluster: Cluster, service: str) -> None:
    """A ConfigMap edited a day or two ago (nothing to do with today)."""
    candidates = [
        obj
        for obj in cluster.objects_of("ConfigMap")
        if len(obj["metadata"]["managedFields"]) == 1  # never changed by a fault
    ]
    if candidates:
        obj = cluster.rng.choice(candidates)
        cluster.touch(obj, cluster.now - cluster.rng.randint(26, 60) * 3600)


def _harmless_warnings(cluster: Cluster, service: str) -> None:
    text = cluster.rng.choice(
        [
            "retrying export to otel-collector:4317 (attempt 1/5): context deadline exceeded; succeeded on retry",
            "configuration key 'tracing.sampler' is deprecated; use 'otel.traces.sampler'",
            "connection pool exhausted briefly, waited 120ms for a connection",
            "certificate for metrics endpoint expires in 21 days",
        ]
    )
    cluster.log(service, "warn", text, per_minute=0.6)


def _paused_experiment(cluster: Cluster, service: str) -> None:
    """A Chaos Mesh schedule from an old game day, paused for days."""
    name = f"{service}-pod-kill-gameday"
    days = cluster.rng.randint(6, 20)
    schedule = cluster.add(
        "Schedule",
        name,
        CHAOS_NAMESPACE,
        {
            "schedule": "0 10 * * 3",
            "historyLimit": 1,
            "concurrencyPolicy": "Forbid",
            "type": "PodChaos",
            "podChaos": {
                "action": "pod-kill",
                "mode": "one",
                "selector": {
                    "namespaces": [cluster.app.namespace],
                    "labelSelectors": {"app.kubernetes.io/component": service},
                },
            },
        },
        created=cluster.now - (days + 14) * 86400,
        annotations={"experiment.chaos-mesh.org/pause": "true"},
        status={"lastScheduleTime": stamp(cluster.now - days * 86400)},
    )
    schedule["status"]["active"] = []


def _disk_alert(cluster: Cluster, service: str) -> None:
    node = cluster.rng.choice(cluster.node_names)
    cluster.extra_alerts.append(
        alert(
            "NodeFilesystemSpaceFillingUp",
            cluster.now - cluster.rng.randint(40, 55) * 60,
            {"namespace": "monitoring", "instance": node, "mountpoint": "/var/lib/containerd"},
            severity="warning",
        )
    )
    cluster.extra_alerts[-1]["description"] = (
        f"Filesystem /var/lib/containerd on {node} is 81% full and predicted to fill within 24 hours."
    )


def _probe_blip(cluster: Cluster, service: str) -> None:
    pods = cluster.pods_of_service(service)
    if pods:
        at = cluster.now - cluster.rng.randint(45, 58) * 60
        cluster.event(
            "Pod",
            pods[0].name,
            "Unhealthy",
            f'Liveness probe failed: Get "http://{pods[0].ip}:{cluster.service_def(service).port}/healthz": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
            first=at,
            last=at,
        )


def _scaled_deployment(cluster: Cluster, service: str) -> None:
    workload = cluster.service_def(service).workloads[0]
    at = cluster.now - cluster.rng.randint(35, 55) * 60
    pods = cluster.pods_of(workload)
    if pods:
        cluster.event(
            "Deployment",
            workload,
            "ScalingReplicaSet",
            f"Scaled up replica set {pods[0].replica_set} to 1",
            "Normal",
            at,
            at,
        )
