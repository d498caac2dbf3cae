"""Building a simulated cluster from an incident: the application deployed at rest, the faults
applied, noise added, then the incident's propagation through the call graph and the alerts it
raises. The same incident and seed always give the same world, byte for byte.

The world is a snapshot "now" with an hour of history: objects and events as the Kubernetes API
would show them, alerts as Alertmanager would, and telemetry (logs, metrics, traces) computed on
demand from each service's behaviour (`telemetry.py`)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from benchyard.sre.alerts import alert
from benchyard.sre.apps import APPS, AppDef, ServiceDef
from benchyard.sre.cluster import EPOCH, Cluster, Health, PodState, short_hash, stamp
from benchyard.sre.faults import apply_fault
from benchyard.sre.incident import IncidentSpec
from benchyard.sre.noise import add_noise

HISTORY_SEC = 3600  # how far back telemetry and events go
CALL_TIMEOUT_MS = 5000.0  # a call slower than this fails with a deadline error
PLATFORM_NAMESPACES = ("kube-system", "chaos-mesh")


@dataclass(frozen=True)
class Effective:
    """A service's behaviour during the incident, its dependencies' failures included."""

    error: float  # share of its requests that fail
    latency_ms: float  # p50 while the incident lasts
    down: str | None  # nothing answers: how callers see it
    error_text: str  # what a failed request of it says
    failing_calls: dict[str, tuple[str, str, float]] = field(default_factory=dict)
    """callee -> (kind, detail, share of those calls that fail)."""


@dataclass
class World:
    app: AppDef
    seed: int
    now: float
    start: float
    cluster: Cluster
    effective: dict[str, Effective]
    alerts: list[dict[str, Any]]

    @property
    def namespace(self) -> str:
        return self.app.namespace

    def service(self, name: str) -> ServiceDef | None:
        return self.app.service(name)

    def health(self, service: str) -> Health:
        return self.cluster.health.get(service) or Health()

    def after_start(self, ts: float) -> bool:
        return ts >= self.start


def build_world(spec: IncidentSpec) -> World:
    return _build_cached(spec.model_dump_json())


@lru_cache(maxsize=32)
def _build_cached(spec_json: str) -> World:
    spec = IncidentSpec.model_validate_json(spec_json)
    rng = random.Random(f"benchyard-sre:{spec.seed}")
    app = APPS[spec.app]
    now = float(int(EPOCH + (spec.seed % 997) * 7919 + rng.randint(0, 3600)))
    offsets = [fault.started_min_ago for fault in spec.faults if fault.started_min_ago]
    minutes_ago = max(offsets) if offsets else rng.uniform(9, 22)
    start = float(int(now - minutes_ago * 60))
    cluster = Cluster(app=app, seed=spec.seed, now=now, start=start, rng=rng)
    _deploy(cluster, spec)
    for fault in spec.faults:
        apply_fault(cluster, fault)
    cluster.reached = affected(cluster, propagate(cluster))
    add_noise(cluster, spec.noise)
    _finish_objects(cluster)
    effective = propagate(cluster)
    alerts = _alerts(cluster, effective, spec)
    cluster.events = [
        event for event in cluster.events if event["lastTimestamp"] >= stamp(now - HISTORY_SEC)
    ]
    cluster.events.sort(key=lambda e: (e["lastTimestamp"], e["object"], e["reason"]))
    return World(app, spec.seed, now, start, cluster, effective, alerts)


# ---- the application at rest ------------------------------------------------------------------


def _deploy(cluster: Cluster, spec: IncidentSpec) -> None:
    app, rng, now = cluster.app, cluster.rng, cluster.now
    born = now - rng.randint(4, 12) * 86400
    cluster.node_names = _nodes(cluster, born)
    for name, labels in (
        (app.namespace, app.labels),
        ("kube-system", {"kubernetes.io/metadata.name": "kube-system"}),
        ("chaos-mesh", {"kubernetes.io/metadata.name": "chaos-mesh"}),
        ("default", {"kubernetes.io/metadata.name": "default"}),
    ):
        cluster.add(
            "Namespace",
            name,
            None,
            {"finalizers": ["kubernetes"]},
            created=born - 3600,
            labels=labels,
            status={"phase": "Active"},
        )
    for service in app.services:
        _deploy_service(cluster, service, born + rng.randint(60, 600), spec.autoscaling)
    for name, data in app.configmaps.items():
        cluster.add("ConfigMap", name, app.namespace, None, created=born + 30, data=dict(data))
    for name, keys in app.secrets.items():
        secret = cluster.add(
            "Secret",
            name,
            app.namespace,
            None,
            created=born + 30,
            data={key: "<redacted>" for key in keys},
        )
        secret["type"] = "Opaque"
    if app.mesh:
        _deploy_mesh(cluster, born)
    _deploy_platform(cluster, born)


def _nodes(cluster: Cluster, born: float) -> list[str]:
    rng = cluster.rng
    zone = rng.choice(["a", "b", "c"])
    names = [f"ip-10-0-{rng.randint(1, 200)}-{rng.randint(2, 250)}.ec2.internal" for _ in range(3)]
    for name in names:
        cluster.add(
            "Node",
            name,
            None,
            {
                "providerID": f"aws:///us-east-1{zone}/i-0{short_hash(cluster.seed, name, length=16)}"
            },
            created=born - 7200,
            labels={
                "kubernetes.io/hostname": name,
                "node.kubernetes.io/instance-type": "m5.xlarge",
                "topology.kubernetes.io/zone": f"us-east-1{zone}",
            },
            status={
                "capacity": {"cpu": "4", "memory": "16101704Ki", "pods": "58"},
                "allocatable": {"cpu": "3920m", "memory": "15084872Ki", "pods": "58"},
                "conditions": [
                    {
                        "type": "MemoryPressure",
                        "status": "False",
                        "reason": "KubeletHasSufficientMemory",
                    },
                    {
                        "type": "DiskPressure",
                        "status": "False",
                        "reason": "KubeletHasNoDiskPressure",
                    },
                    {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID"},
                    {"type": "Ready", "status": "True", "reason": "KubeletReady"},
                ],
                "nodeInfo": {
                    "kubeletVersion": "v1.31.4",
                    "containerRuntimeVersion": "containerd://1.7.23",
                    "architecture": "amd64",
                },
            },
        )
    return names


def _labels(service: ServiceDef, workload: str) -> dict[str, str]:
    labels = {"app.kubernetes.io/component": service.name, "app.kubernetes.io/name": service.name}
    if workload != service.name:
        labels["version"] = workload.rsplit("-", 1)[-1]
        labels["app"] = service.name
    return labels


def _deploy_service(cluster: Cluster, service: ServiceDef, born: float, autoscaling: bool) -> None:
    app, rng = cluster.app, cluster.rng
    for index, workload in enumerate(service.workloads):
        labels = _labels(service, workload)
        volumes = [{"name": name, "configMap": {"name": name}} for name in service.configmaps]
        volumes += [{"name": name, "secret": {"secretName": name}} for name in service.secrets]
        container: dict[str, Any] = {
            "name": service.name,
            "image": service.image,
            "ports": [{"containerPort": service.port, "name": "service", "protocol": "TCP"}],
            "env": [{"name": key, "value": value} for key, value in service.env],
            "resources": {
                "limits": {
                    "cpu": f"{int(service.cpu_limit * 1000)}m",
                    "memory": f"{service.memory_limit_mb}Mi",
                },
                "requests": {
                    "cpu": f"{int(service.cpu_limit * 400)}m",
                    "memory": f"{max(8, service.memory_limit_mb // 2)}Mi",
                },
            },
        }
        if volumes:
            container["volumeMounts"] = [
                {"name": v["name"], "mountPath": f"/etc/{v['name']}"} for v in volumes
            ]
        if service.style not in ("locust", "kafka", "postgres", "redis", "rabbitmq"):
            container["readinessProbe"] = {"tcpSocket": {"port": service.port}, "periodSeconds": 10}
        revision = rng.randint(1, 4)
        created = born + index * 5
        template = {
            "metadata": {"labels": dict(labels)},
            "spec": {"serviceAccountName": app.name, "containers": [container], "volumes": volumes},
        }
        deployment = cluster.add(
            "Deployment",
            workload,
            app.namespace,
            {
                "replicas": service.replicas,
                "selector": {"matchLabels": dict(labels)},
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                },
                "template": template,
            },
            created=created,
            labels=labels,
            annotations={
                "deployment.kubernetes.io/revision": str(revision),
                "meta.helm.sh/release-name": app.name,
            },
        )
        deployment["metadata"]["generation"] = revision
        replica_set = f"{workload}-{short_hash(cluster.seed, workload, revision)}"
        cluster.add(
            "ReplicaSet",
            replica_set,
            app.namespace,
            {"replicas": service.replicas, "template": template},
            created=created + 1,
            labels=dict(labels),
            annotations={"deployment.kubernetes.io/revision": str(revision)},
            owner=("Deployment", workload),
        )
        for replica in range(service.replicas):
            pod = PodState(
                name=f"{replica_set}-{short_hash(cluster.seed, replica_set, replica, length=5)}",
                service=service.name,
                workload=workload,
                node=cluster.node_names[
                    (replica + len(workload) + index) % len(cluster.node_names)
                ],
                created=created + 5 + rng.randint(0, 3000),
                replica_set=replica_set,
                ip=cluster.pod_ip(),
            )
            cluster.pods[pod.name] = pod
        if autoscaling and not service.infra and service.style != "locust":
            cluster.add(
                "HorizontalPodAutoscaler",
                workload,
                app.namespace,
                {
                    "scaleTargetRef": {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": workload,
                    },
                    "minReplicas": 1,
                    "maxReplicas": 4,
                    "metrics": [
                        {
                            "type": "Resource",
                            "resource": {
                                "name": "cpu",
                                "target": {"type": "Utilization", "averageUtilization": 80},
                            },
                        }
                    ],
                },
                created=created + 2,
                status={"currentReplicas": service.replicas, "desiredReplicas": service.replicas},
            )
    cluster.add(
        "Service",
        service.name,
        app.namespace,
        {
            "type": "ClusterIP",
            "clusterIP": f"10.96.{rng.randint(0, 255)}.{rng.randint(2, 254)}",
            "selector": {"app.kubernetes.io/component": service.name}
            if not service.deployments or len(service.deployments) == 1
            else {"app": service.name},
            "ports": [
                {
                    "name": "tcp-service",
                    "port": service.port,
                    "targetPort": service.port,
                    "protocol": "TCP",
                }
            ],
        },
        created=born,
        labels={"app.kubernetes.io/component": service.name},
    )


def _deploy_mesh(cluster: Cluster, born: float) -> None:
    ns = cluster.app.namespace
    cluster.add(
        "Gateway",
        "bookinfo-gateway",
        ns,
        {
            "gatewayClassName": "istio",
            "listeners": [
                {
                    "name": "http",
                    "port": 80,
                    "protocol": "HTTP",
                    "allowedRoutes": {"namespaces": {"from": "Same"}},
                }
            ],
        },
        created=born + 100,
        status={"conditions": [{"type": "Programmed", "status": "True"}]},
    )
    cluster.add(
        "HTTPRoute",
        "bookinfo",
        ns,
        {
            "parentRefs": [{"name": "bookinfo-gateway"}],
            "rules": [
                {
                    "matches": [{"path": {"type": "Exact", "value": "/productpage"}}],
                    "backendRefs": [{"name": "productpage", "port": 9080}],
                }
            ],
        },
        created=born + 100,
    )


def _deploy_platform(cluster: Cluster, born: float) -> None:
    """The cluster around the application: DNS, the API server, Chaos Mesh."""
    for namespace, workload, image in (
        ("kube-system", "coredns", "registry.k8s.io/coredns/coredns:v1.11.3"),
        ("chaos-mesh", "chaos-controller-manager", "ghcr.io/chaos-mesh/chaos-mesh:v2.7.0"),
        ("chaos-mesh", "chaos-dashboard", "ghcr.io/chaos-mesh/chaos-dashboard:v2.7.0"),
    ):
        labels = {"app.kubernetes.io/name": workload}
        cluster.add(
            "Deployment",
            workload,
            namespace,
            {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": workload, "image": image}]},
                },
            },
            created=born - 1800,
            labels=labels,
            annotations={"deployment.kubernetes.io/revision": "1"},
        )
        replica_set = f"{workload}-{short_hash(cluster.seed, workload)}"
        pod = PodState(
            name=f"{replica_set}-{short_hash(cluster.seed, replica_set, length=5)}",
            service=workload,
            workload=workload,
            node=cluster.node_names[0],
            created=born - 1700,
            replica_set=replica_set,
            ip=cluster.pod_ip(),
        )
        pod.namespace = namespace
        cluster.pods[pod.name] = pod
    cluster.add(
        "DaemonSet",
        "chaos-daemon",
        "chaos-mesh",
        {"selector": {"matchLabels": {"app.kubernetes.io/component": "chaos-daemon"}}},
        created=born - 1800,
        status={"desiredNumberScheduled": 3, "numberReady": 3},
    )
    cluster.add(
        "Service",
        "kubernetes",
        "default",
        {
            "type": "ClusterIP",
            "clusterIP": "10.96.0.1",
            "ports": [{"name": "https", "port": 443, "targetPort": 6443}],
        },
        created=born - 7200,
    )
    cluster.add(
        "Service",
        "kube-dns",
        "kube-system",
        {
            "type": "ClusterIP",
            "clusterIP": "10.96.0.10",
            "ports": [{"name": "dns", "port": 53, "protocol": "UDP"}],
        },
        created=born - 7200,
    )


def pod_namespace(cluster: Cluster, pod: PodState) -> str:
    return pod.namespace or cluster.app.namespace


# ---- after the faults: status fields, endpoints --------------------------------------------------


def _finish_objects(cluster: Cluster) -> None:
    ns = cluster.app.namespace
    for deployment in cluster.objects_of("Deployment"):
        name = deployment["metadata"]["name"]
        if deployment["metadata"].get("namespace") != ns:
            deployment["status"] = {
                "replicas": 1,
                "readyReplicas": 1,
                "availableReplicas": 1,
                "updatedReplicas": 1,
            }
            continue
        pods = cluster.pods_of(name)
        ready = sum(1 for pod in pods if pod.ready)
        wanted = int(deployment["spec"]["replicas"])
        available = ready >= max(1, wanted) or wanted == 0
        deployment["status"] = {
            "observedGeneration": deployment["metadata"].get("generation", 1),
            "replicas": len(pods),
            "updatedReplicas": len(pods),
            "readyReplicas": ready,
            "availableReplicas": ready,
            "unavailableReplicas": max(0, wanted - ready),
            "conditions": [
                {
                    "type": "Available",
                    "status": "True" if available else "False",
                    "reason": "MinimumReplicasAvailable"
                    if available
                    else "MinimumReplicasUnavailable",
                    "message": "Deployment has minimum availability."
                    if available
                    else "Deployment does not have minimum availability.",
                },
                {
                    "type": "Progressing",
                    "status": "True",
                    "reason": "NewReplicaSetAvailable" if available else "ReplicaSetUpdated",
                },
            ],
        }
        for replica_set in cluster.objects_of("ReplicaSet"):
            owner = replica_set["metadata"].get("ownerReferences", [{}])[0].get("name")
            if owner == name and replica_set["spec"]["replicas"]:
                replica_set["status"] = {
                    "replicas": len(pods),
                    "readyReplicas": ready,
                    "availableReplicas": ready,
                }
    for service in cluster.objects_of("Service"):
        if service["metadata"].get("namespace") != ns:
            continue
        _endpoints(cluster, service)


def _endpoints(cluster: Cluster, service: dict[str, Any]) -> None:
    selector = service["spec"].get("selector") or {}
    name = service["metadata"]["name"]
    ready: list[dict[str, Any]] = []
    not_ready: list[dict[str, Any]] = []
    for pod in cluster.pods.values():
        if pod_namespace(cluster, pod) != cluster.app.namespace:
            continue
        definition = cluster.app.service(pod.service)
        labels = _labels(definition, pod.workload) if definition else {}
        if selector and all(labels.get(k) == v for k, v in selector.items()):
            address = {
                "ip": pod.ip,
                "nodeName": pod.node,
                "targetRef": {"kind": "Pod", "name": pod.name},
            }
            (ready if pod.ready else not_ready).append(address)
    port = service["spec"]["ports"][0]
    subset: dict[str, Any] = {
        "ports": [
            {
                "name": port.get("name", "tcp"),
                "port": port.get("targetPort", port["port"]),
                "protocol": "TCP",
            }
        ]
    }
    if ready:
        subset["addresses"] = ready
    if not_ready:
        subset["notReadyAddresses"] = not_ready
    cluster.add(
        "Endpoints",
        name,
        cluster.app.namespace,
        None,
        created=cluster.now - 86400,
        labels=service["metadata"].get("labels"),
    )["subsets"] = [subset] if (ready or not_ready) else []


# ---- propagation ---------------------------------------------------------------------------


def propagate(cluster: Cluster, at_rest: bool = False) -> dict[str, Effective]:
    """Each service's error share and latency during the incident, through its dependencies:
    a failed critical call fails the caller's request; a slow call slows it (up to the timeout,
    after which it fails)."""
    app = cluster.app
    result: dict[str, Effective] = {}
    visiting: set[str] = set()

    def effective(name: str) -> Effective:
        if name in result:
            return result[name]
        visiting.add(name)
        service = app.service(name)
        health = (None if at_rest else cluster.health.get(name)) or Health()
        if service is None or health.down:
            found = Effective(1.0, 0.0, health.down or "refused", health.error_text)
            result[name] = found
            visiting.discard(name)
            return found
        latency = service.latency_ms + health.latency_ms
        survive = 1.0
        failing: dict[str, tuple[str, str, float]] = {}
        texts = [health.error_text] if health.error and health.error_text else []
        for call in service.calls:
            if call.service in visiting:
                continue
            callee = effective(call.service)
            if call.service in health.blocked:
                kind, detail = health.blocked[call.service]
                fails = 1.0
            elif callee.down:
                kind, detail, fails = callee.down, callee.error_text, 1.0
            elif callee.latency_ms > CALL_TIMEOUT_MS:
                kind, detail, fails = "timeout", "", 1.0
            elif callee.error > 0.001:
                kind, detail, fails = "error", callee.error_text, callee.error
            else:
                kind, detail, fails = "", "", 0.0
            if fails < 1.0 or kind == "timeout":
                latency += call.share * min(callee.latency_ms, CALL_TIMEOUT_MS)
            if fails > 0:
                failing[call.service] = (kind, detail, fails)
                if call.critical:
                    survive *= 1.0 - call.share * fails
                    from benchyard.sre.logstyle import call_error

                    texts.append(
                        call_error(
                            service.style, call.service, _port(app, call.service), kind, detail
                        )
                    )
        error = 1.0 - (1.0 - health.error) * survive
        if any(
            failing.get(c.service, ("", "", 0))[0] == "timeout" for c in service.calls if c.critical
        ):
            latency = max(latency, CALL_TIMEOUT_MS)
        found = Effective(
            round(min(1.0, error), 4), round(latency, 2), None, texts[0] if texts else "", failing
        )
        visiting.discard(name)
        result[name] = found
        return found

    for service in app.services:
        effective(service.name)
    return result


def _port(app: AppDef, name: str) -> int:
    service = app.service(name)
    return service.port if service else 8080


# ---- alerts ---------------------------------------------------------------------------------


def _alerts(
    cluster: Cluster, effective: dict[str, Effective], spec: IncidentSpec
) -> list[dict[str, Any]]:
    app, rng, ns = cluster.app, cluster.rng, cluster.app.namespace
    alerts: list[dict[str, Any]] = []
    origin = {name for name, health in cluster.health.items() if _changed(health)}
    rest = propagate(cluster, at_rest=True)
    callers = {call.service for s in app.services for call in s.calls}
    queue_alert = "KafkaConsumerGroupLag" if app.service("kafka") else "RabbitMQQueueBacklog"

    def delay(service: str) -> float:
        return cluster.start + (
            rng.uniform(50, 140) if service in origin else rng.uniform(150, 330)
        )

    for service in app.services:
        state = effective[service.name]
        if service.style == "locust":
            continue
        labels = {"namespace": ns, "service": service.name}
        unobserved = state.down and service.name not in callers  # nobody calls it to see it fail
        if state.error >= 0.05 and not unobserved:
            severity = "critical" if state.error >= 0.25 else "warning"
            alerts.append(
                alert("HighRequestErrorRate", delay(service.name), labels, state.error, severity)
            )
        base_p95 = rest[service.name].latency_ms * 2.5
        p95 = state.latency_ms * 2.5
        if not state.down and p95 >= max(3 * base_p95, base_p95 + 250):
            alerts.append(alert("HighRequestLatency", delay(service.name), labels, p95))
        pods = cluster.pods_of_service(service.name)
        for pod in pods[:2]:
            pod_labels = {**labels, "pod": pod.name, "container": service.name}
            if pod.waiting == "CrashLoopBackOff" or pod.init == "Init:CrashLoopBackOff":
                alerts.append(alert("KubePodCrashLooping", delay(service.name) + 60, pod_labels))
            elif not pod.ready and cluster.now - cluster.start > 300:
                alerts.append(
                    alert("KubePodNotReady", cluster.start + 300 + rng.uniform(0, 60), pod_labels)
                )
            oom = (
                pod.last_terminated
                and pod.last_terminated.get("reason") == "OOMKilled"
                and pod.restarts
                and pod.created >= cluster.start - 600
            )
            if oom:
                alerts.append(
                    alert(
                        "KubeContainerOOMKilled", delay(service.name) + 30, pod_labels, pod.restarts
                    )
                )
        for workload in service.workloads:
            deployment = cluster.get("Deployment", workload)
            if (
                deployment
                and deployment["status"].get("unavailableReplicas")
                and cluster.now - cluster.start > 300
            ):
                alerts.append(
                    alert(
                        "KubeDeploymentReplicasMismatch",
                        cluster.start + 300 + rng.uniform(0, 90),
                        {**labels, "deployment": workload},
                    )
                )
        health = cluster.health.get(service.name)
        if (
            health is not None
            and service.cpu_rest * health.cpu >= 0.85 * service.cpu_limit
            and pods
        ):
            alerts.append(
                alert(
                    "CPUThrottlingHigh",
                    delay(service.name) + 120,
                    {**labels, "pod": pods[0].name, "container": service.name},
                    rng.uniform(0.3, 0.6),
                    "info" if service.name not in origin else "warning",
                )
            )
        if service.consumes and _consumer_lags(cluster, effective, service):
            alerts.append(
                alert(
                    queue_alert,
                    delay(service.name) + 60,
                    labels,
                    rng.randint(800, 5000),
                )
            )
    present = {(a["labels"].get("service"), a["alertname"]) for a in alerts}
    reached = cluster.reached
    for wanted in spec.alerts:
        if (wanted.service, wanted.alert) in present:
            continue
        if wanted.service is not None and wanted.service not in reached:
            continue  # the incident does not reach it here: no evidence would back the alert
        labels = (
            {"namespace": ns, "service": wanted.service} if wanted.service else {"namespace": ns}
        )
        value = effective[wanted.service].error if wanted.service in effective else 0.0
        alerts.append(
            alert(
                wanted.alert,
                delay(wanted.service or ""),
                labels,
                max(value, 0.06) if wanted.alert == "HighRequestErrorRate" else 900.0,
            )
        )
        present.add((wanted.service, wanted.alert))
    alerts += cluster.extra_alerts
    alerts = [a for a in alerts if a["startsAt"] <= stamp(cluster.now)]
    alerts.sort(key=lambda a: (a["startsAt"], a["alertname"], sorted(a["labels"].items())))
    return alerts


def affected(cluster: Cluster, effective: dict[str, Effective]) -> set[str]:
    """The services the incident reaches: changed by a fault, failing, slowed, or starved (the
    consumers of a queue whose producer or broker fails)."""
    found = {name for name, health in cluster.health.items() if _changed(health)} | set(
        cluster.touched
    )
    rest = propagate(cluster, at_rest=True)
    for service in cluster.app.services:
        state = effective.get(service.name)
        if state is None:
            continue
        slower = state.latency_ms > 1.5 * max(rest[service.name].latency_ms, 1)
        if state.error >= 0.01 or state.down or state.failing_calls or slower:
            found.add(service.name)
    for service in cluster.app.services:
        if service.consumes and any(
            other.name in found and set(other.publishes) & set(service.consumes)
            for other in cluster.app.services
        ):
            found.add(service.name)
        if service.consumes and any(call for call in ("kafka", "rabbitmq") if call in found):
            found.add(service.name)
    return found


def _changed(health: Health) -> bool:
    return bool(
        health.error
        or health.down
        or health.latency_ms
        or health.blocked
        or health.cpu > 1.5
        or health.memory > 1.5
        or health.stalled_consumer
        or health.traffic != 1.0
    )


def starved(cluster: Cluster, effective: dict[str, Effective], service: ServiceDef) -> bool:
    """A consumer whose queue gets no messages: every producer of it fails, or cannot reach the
    broker, or the broker is down."""
    producers = [s for s in cluster.app.services if set(s.publishes) & set(service.consumes)]
    if not producers:
        return False
    for producer in producers:
        state = effective.get(producer.name)
        if state is None or state.down or state.error >= 0.95:
            continue
        brokers = [call.service for call in producer.calls if call.service in ("kafka", "rabbitmq")]
        if any(
            b in state.failing_calls or (effective.get(b) and effective[b].down) for b in brokers
        ):
            continue
        return False
    return True


def _consumer_lags(cluster: Cluster, effective: dict[str, Effective], service: ServiceDef) -> bool:
    health = cluster.health.get(service.name) or Health()
    state = effective[service.name]
    return bool(
        health.stalled_consumer
        or state.down
        or health.quiet
        or state.latency_ms > 10 * max(service.latency_ms, 1)
    )
