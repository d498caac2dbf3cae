"""The fault catalogue: what each mechanism changes in the cluster (objects, pods, events) and in
how services behave, one module per family of faults. Each fault leaves the evidence a real one
leaves, and nothing more: no object says it is the cause. The world applies them (world.py)."""

from __future__ import annotations

from collections.abc import Callable

from benchyard.sre.cluster import Cluster
from benchyard.sre.faults.chaos import chaos
from benchyard.sre.faults.common import FaultError
from benchyard.sre.faults.control_plane import api_surge
from benchyard.sre.faults.flags import feature_flag
from benchyard.sre.faults.network import (
    credentials,
    dns_policy,
    mesh_policy,
    network_policy,
    readiness_probe,
    scaled_to_zero,
    service_deleted,
    service_port,
    service_selector,
)
from benchyard.sre.faults.scheduling import unschedulable
from benchyard.sre.faults.workloads import (
    bad_arch_image,
    bad_command,
    bad_env,
    bad_hpa,
    bad_image,
    config_change,
    init_container,
    no_limits,
    oom,
)
from benchyard.sre.incident import FaultSpec

__all__ = ["MECHANISMS", "FaultError", "apply_fault"]

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


def apply_fault(cluster: Cluster, fault: FaultSpec) -> None:
    handler = MECHANISMS.get(fault.mechanism)
    if handler is None:  # pragma: no cover - the model's Literal keeps this out
        raise FaultError(f"unknown mechanism '{fault.mechanism}'")
    handler(cluster, fault)
