"""Feature flags (flagd): a flag turned on that makes a service fail, slow down or misbehave."""

from __future__ import annotations

from typing import Any

from benchyard.sre.apps import flagd_document
from benchyard.sre.cluster import Cluster
from benchyard.sre.faults.common import (
    FaultError,
    after_start,
    required_param,
    restart_workload,
)
from benchyard.sre.incident import FaultSpec

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
    flag = str(required_param(fault, "flag"))
    variant = str(fault.params.get("variant", "on"))
    configmap = cluster.get("ConfigMap", fault.target.name, fault.target.namespace)
    if configmap is None:
        raise FaultError(f"feature-flag: no ConfigMap '{fault.target.name}' in {cluster.app.name}")
    cluster.flags_on[flag] = "on"
    configmap["data"]["demo.flagd.json"] = flagd_document(cluster.flags_on)
    cluster.touch(configmap, after_start(cluster), "kubectl-edit")
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
        cluster.log(service, effect["once"][0], effect["once"][1], at=after_start(cluster, 20))
    if effect.get("consumers_stall"):
        for consumer in ("accounting", "fraud-detection"):
            cluster.health_of(consumer).stalled_consumer = True
        level, text, rate = effect["checkout_log"]
        cluster.log("checkout", level, text, per_minute=rate)
    for workload in fault.params.get("restart", []):
        restart_workload(cluster, str(workload), after_start(cluster, 15))
    cluster.log(
        "flagd",
        "info",
        "configuration change (update) for flagSource file:/etc/flagd/demo.flagd.json",
        at=after_start(cluster, 2),
    )
    users = [s.name for s in cluster.app.services if flag in s.flags] or [service]
    for user in users:
        cluster.log(
            user,
            "info",
            f"flagd provider: PROVIDER_CONFIGURATION_CHANGED (flags changed: {flag})",
            at=after_start(cluster, 25),
        )
