"""The alerts a world raises, as Alertmanager shows them: each alert's summary, description and
severity, and one alert written from its name, start and labels. The world raises those of the
incident's propagation; faults and noise add their own (`cluster.extra_alerts`)."""

from __future__ import annotations

from typing import Any

from benchyard.sre.cluster import stamp

ALERT_TEXT = {
    "HighRequestErrorRate": (
        "Error rate is above threshold",
        "{service}: {value:.0%} of requests failed over the last 5 minutes (threshold 5%).",
    ),
    "HighRequestLatency": (
        "Latency is above threshold",
        "{service}: p95 latency is {value:.0f} ms over the last 5 minutes.",
    ),
    "KubePodCrashLooping": (
        "Pod is crash looping",
        "Pod {namespace}/{pod} ({container}) is in waiting state (reason: CrashLoopBackOff).",
    ),
    "KubePodNotReady": (
        "Pod has been in a non-ready state for more than 5 minutes",
        "Pod {namespace}/{pod} has been in a non-ready state for longer than 5 minutes.",
    ),
    "KubeDeploymentReplicasMismatch": (
        "Deployment has not matched the expected number of replicas",
        "Deployment {namespace}/{workload} has not matched the expected number of replicas for longer than 5 minutes.",
    ),
    "KubeContainerOOMKilled": (
        "Container was OOM killed",
        "Container {container} in pod {namespace}/{pod} was OOMKilled {value:.0f} times in the last 15 minutes.",
    ),
    "CPUThrottlingHigh": (
        "Processes experience elevated CPU throttling",
        "{value:.0%} throttling of CPU in namespace {namespace} for container {container} in pod {pod}.",
    ),
    "KafkaConsumerGroupLag": (
        "Consumer group lag is growing",
        "Consumer group {service} lags {value:.0f} messages behind on topic orders.",
    ),
    "RabbitMQQueueBacklog": (
        "Queue backlog is growing",
        "Consumer group {service} has {value:.0f} messages waiting on its queue.",
    ),
}
SEVERITY = {
    "HighRequestErrorRate": "critical",
    "KubePodCrashLooping": "warning",
    "KubePodNotReady": "warning",
    "KubeDeploymentReplicasMismatch": "warning",
    "HighRequestLatency": "warning",
    "CPUThrottlingHigh": "info",
}


def alert(
    name: str,
    starts: float,
    labels: dict[str, str],
    value: float = 0.0,
    severity: str | None = None,
) -> dict[str, Any]:
    summary, description = ALERT_TEXT.get(name, (name, "{name} is firing."))
    values = {
        "service": labels.get("service", ""),
        "namespace": labels.get("namespace", ""),
        "pod": labels.get("pod", ""),
        "container": labels.get("container", ""),
        "workload": labels.get("deployment", ""),
        "value": value,
        "name": name,
    }
    return {
        "alertname": name,
        "state": "firing",
        "severity": severity or SEVERITY.get(name, "warning"),
        "startsAt": stamp(starts),
        "labels": {key: value for key, value in labels.items() if value},
        "summary": summary,
        "description": description.format(**values),
    }
