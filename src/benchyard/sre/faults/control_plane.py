"""The control plane: a surge of requests to the API server."""

# ruff: noqa: E501  (log lines, event messages and fixtures are quoted whole)

from __future__ import annotations

from benchyard.sre.alerts import alert
from benchyard.sre.cluster import Cluster
from benchyard.sre.faults.common import (
    after_start,
    elapsed_min,
)
from benchyard.sre.incident import FaultSpec


def api_surge(cluster: Cluster, fault: FaultSpec) -> None:
    namespace = (
        fault.target.name if fault.target.kind.lower() == "namespace" else cluster.app.namespace
    )
    labels = {"namespace": "kube-system", "job": "apiserver"}
    cluster.extra_alerts.append(
        alert(
            "KubeAPILatencyHigh",
            after_start(cluster, 120),
            {**labels, "verb": "LIST"},
            severity="warning",
        )
    )
    cluster.extra_alerts.append(
        alert("KubeAPIErrorBudgetBurn", after_start(cluster, 240), labels, severity="critical")
    )
    cluster.extra_alerts.append(
        alert(
            "KubeClientErrors",
            after_start(cluster, 180),
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
        first=after_start(cluster, 30),
        last=cluster.now - 10,
        count=int(elapsed_min(cluster) * 60),
        namespace=namespace,
        source="kube-apiserver",
    )
    for service in ("flagd", "frontend"):
        if cluster.app.service(service) is not None:
            cluster.health_of(service).latency_ms += 60
