"""Scheduling: pods that cannot be placed (affinity, taints, resources, quotas) or are preempted."""

# ruff: noqa: E501  (log lines, event messages and fixtures are quoted whole)

from __future__ import annotations

from typing import Any

from benchyard.sre.cluster import Cluster, PodState, short_hash, stamp
from benchyard.sre.faults.common import (
    after_start,
    elapsed_min,
    fault_service,
    fault_workload,
    not_running,
    required_param,
    roll_out,
)
from benchyard.sre.incident import FaultSpec

SCHEDULING = {
    "node-selector": "0/4 nodes are available: 1 node(s) had untolerated taint {{node-role.kubernetes.io/control-plane: }}, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
    "anti-affinity": "0/4 nodes are available: 1 node(s) had untolerated taint {{node-role.kubernetes.io/control-plane: }}, 3 node(s) didn't match pod anti-affinity rules. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.",
    "cordoned": "0/4 nodes are available: 1 node(s) had untolerated taint {{node-role.kubernetes.io/control-plane: }}, 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
    "pvc": 'persistentvolumeclaim "{claim}" not found. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.',
    "preemption": "0/4 nodes are available: 1 node(s) had untolerated taint {{node-role.kubernetes.io/control-plane: }}, 3 Insufficient memory. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.",
}


def unschedulable(cluster: Cluster, fault: FaultSpec) -> None:
    reason = str(required_param(fault, "reason"))
    workload = fault_workload(cluster, fault)
    service = fault_service(cluster, fault)
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
        pods = roll_out(cluster, workload, change)
    else:
        deployment = cluster.get("Deployment", workload)
        assert deployment is not None
        change(deployment["spec"]["template"]["spec"])
        pods = cluster.pods_of(workload)
        for pod in pods:
            pod.created = after_start(cluster, 30)
    if reason == "cordoned":
        node_object = cluster.get("Node", node)
        assert node_object is not None
        node_object["spec"]["unschedulable"] = True
        node_object["spec"]["taints"] = [
            {
                "key": "node.kubernetes.io/unschedulable",
                "effect": "NoSchedule",
                "timeAdded": stamp(after_start(cluster)),
            }
        ]
        cluster.touch(node_object, after_start(cluster), "kubectl-cordon")
        cluster.event(
            "Node",
            node,
            "NodeNotSchedulable",
            f"Node {node} status is now: NodeNotSchedulable",
            "Normal",
            after_start(cluster),
            after_start(cluster),
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
                after_start(cluster, 20),
                after_start(cluster, 20),
            )
    if reason == "preemption":
        _preemptor(cluster, fault)
        for pod in pods:
            cluster.event(
                "Pod",
                pod.name,
                "Preempted",
                f"Preempted by pod {cluster.app.namespace}/{cluster.preemptor} on node {pod.node}",
                first=after_start(cluster, 10),
                last=after_start(cluster, 10),
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
            count=max(1, int(elapsed_min(cluster) / 5)),
        )
    not_running(cluster, service, "refused")


def _preemptor(cluster: Cluster, fault: FaultSpec) -> None:
    name = str(fault.params.get("preemptor", "eviction-pod"))
    cluster.add("PriorityClass", "high-priority", None, {}, created=after_start(cluster, -60))[
        "value"
    ] = 1_000_000
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
        created=after_start(cluster, -30),
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
            created=after_start(cluster, 5),
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
        created=after_start(cluster, -40),
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
            after_start(cluster, 5),
            after_start(cluster, 5),
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
        first=after_start(cluster, 6),
        last=cluster.now - 40,
        count=max(2, int(elapsed_min(cluster) * 1.5)),
    )
    not_running(cluster, service, "refused")
