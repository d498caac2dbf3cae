"""Workloads: what a deployment runs (its image, command, environment, autoscaling, init containers,
memory, limits) and the configuration it reads."""

# ruff: noqa: E501  (log lines, event messages and fixtures are quoted whole)

from __future__ import annotations

from typing import Any

from benchyard.sre.cluster import Cluster, stamp
from benchyard.sre.faults.common import (
    FaultError,
    after_start,
    crash_loop,
    elapsed_min,
    fault_service,
    fault_workload,
    not_running,
    required_param,
    restart_workload,
    roll_out,
)
from benchyard.sre.incident import FaultSpec


def bad_image(cluster: Cluster, fault: FaultSpec) -> None:
    workload = fault_workload(cluster, fault)
    service = fault_service(cluster, fault)
    container = cluster.container(workload)
    repository, _, tag = container["image"].rpartition(":")
    image = str(fault.params.get("image") or f"{repository}:{_bumped(tag)}")

    def change(spec: dict[str, Any]) -> None:
        spec["containers"][0]["image"] = image

    pods = roll_out(cluster, workload, change)
    for pod in pods:
        pod.ready, pod.phase, pod.waiting = False, "Pending", "ImagePullBackOff"
        pod.waiting_message = f'Back-off pulling image "{image}"'
        pulls = max(1, int(elapsed_min(cluster)))
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
    not_running(cluster, service, "refused")


def _bumped(tag: str) -> str:
    head, dash, rest = tag.partition("-")
    parts = head.split(".")
    if all(part.isdigit() for part in parts) and parts:
        parts[-1] = str(int(parts[-1]) + 7)
        return ".".join(parts) + dash + rest
    return tag + "-rc0"


def bad_arch_image(cluster: Cluster, fault: FaultSpec) -> None:
    workload = fault_workload(cluster, fault)
    service = fault_service(cluster, fault)
    container = cluster.container(workload)
    image = str(fault.params.get("image") or container["image"].replace(":", ":arm64-", 1))

    def change(spec: dict[str, Any]) -> None:
        spec["containers"][0]["image"] = image

    pods = roll_out(cluster, workload, change)
    binary = f"/usr/src/app/{service}"
    crash_loop(cluster, pods, "Error", 255, [f"exec {binary}: exec format error"])
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
    not_running(cluster, service, "refused")


def bad_command(cluster: Cluster, fault: FaultSpec) -> None:
    workload = fault_workload(cluster, fault)
    service = fault_service(cluster, fault)
    command = [str(part) for part in fault.params.get("command", [f"/app/{service}d"])]

    def change(spec: dict[str, Any]) -> None:
        spec["containers"][0]["command"] = command

    pods = roll_out(cluster, workload, change)
    message = f'failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "{command[0]}": stat {command[0]}: no such file or directory: unknown'
    crash_loop(cluster, pods, "StartError", 128, [], message=message)
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
    not_running(cluster, service, "refused")


def bad_env(cluster: Cluster, fault: FaultSpec) -> None:
    workload = fault_workload(cluster, fault)
    service = fault_service(cluster, fault)
    name = str(required_param(fault, "name"))
    value = str(required_param(fault, "value"))
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

    roll_out(cluster, workload, change)
    host = value.split("://")[-1].split(":")[0]
    kind = "dns" if host != str(callee) else "refused"
    cluster.health_of(service).blocked[str(callee)] = (kind, value)
    cluster.touched.update({service, str(callee)})


def _dependency_of(cluster: Cluster, address: str) -> str | None:
    host = address.split("://")[-1].split(":")[0].split("/")[0]
    return host if cluster.app.service(host) is not None else None


def bad_hpa(cluster: Cluster, fault: FaultSpec) -> None:
    workload = fault_workload(cluster, fault)
    service = fault_service(cluster, fault)
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
            created=after_start(cluster, -30),
        )
    else:
        hpa["spec"] = spec
        cluster.touch(hpa, after_start(cluster, -30))
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


def init_container(cluster: Cluster, fault: FaultSpec) -> None:
    workload = fault_workload(cluster, fault)
    service = fault_service(cluster, fault)
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

    pods = roll_out(cluster, workload, change)
    if configmap and cluster.get("ConfigMap", str(configmap)) is None:
        cluster.add(
            "ConfigMap",
            str(configmap),
            cluster.app.namespace,
            None,
            created=after_start(cluster, -20),
            data={"settings.yaml": "cacheSize: 256\n"},
        )
    for pod in pods:
        pod.ready, pod.phase = False, "Pending"
        if mode == "crash":
            pod.init = "Init:CrashLoopBackOff"
            pod.restarts = max(1, int(elapsed_min(cluster) / 2.5))
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
    not_running(cluster, service, "refused")


def oom(cluster: Cluster, fault: FaultSpec) -> None:
    workload = fault_workload(cluster, fault)
    service = fault_service(cluster, fault)
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

        pods = roll_out(cluster, workload, change)
    else:
        pods = cluster.pods_of(workload)
    restarts = max(2, int(elapsed_min(cluster) / 2))
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


def no_limits(cluster: Cluster, fault: FaultSpec) -> None:
    workload = fault_workload(cluster, fault)
    service = fault_service(cluster, fault)

    def change(spec: dict[str, Any]) -> None:
        spec["containers"][0]["resources"].pop("limits", None)

    pods = roll_out(cluster, workload, change)
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
                        "lastTransitionTime": stamp(after_start(cluster, 120)),
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
            first=after_start(cluster, 150),
            last=after_start(cluster, 150),
        )
        pod.restarts += 1
        pod.created = after_start(cluster, 160)
    cluster.event(
        "Node",
        node,
        "EvictionThresholdMet",
        "Attempting to reclaim memory",
        first=after_start(cluster, 140),
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
    key = str(required_param(fault, "key"))
    configmap.setdefault("data", {})[key] = str(required_param(fault, "value"))
    cluster.touch(configmap, after_start(cluster, -20))
    service = fault_service(cluster, fault)
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
            restart_workload(cluster, workload, after_start(cluster, 10))
    cluster.touched.add(service)
