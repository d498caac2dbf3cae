"""The simulated cluster under construction: Kubernetes objects, pods, events and how each
service behaves once the incident has begun. Faults (`faults.py`) and noise (`noise.py`) change
it; `world.py` freezes it and derives the telemetry."""

from __future__ import annotations

import copy
import hashlib
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from benchyard.sre.apps import AppDef, ServiceDef
from benchyard.sre.entities import CLUSTER_SCOPED, kind_key

EPOCH = datetime(2025, 6, 2, 9, 0, tzinfo=UTC).timestamp()
"""The simulator's calendar starts here; each incident's "now" is a seeded offset from it."""

API_VERSIONS = {
    "deployment": "apps/v1",
    "replicaset": "apps/v1",
    "daemonset": "apps/v1",
    "statefulset": "apps/v1",
    "horizontalpodautoscaler": "autoscaling/v2",
    "networkpolicy": "networking.k8s.io/v1",
    "poddisruptionbudget": "policy/v1",
    "priorityclass": "scheduling.k8s.io/v1",
    "schedule": "chaos-mesh.org/v1alpha1",
    "networkchaos": "chaos-mesh.org/v1alpha1",
    "podchaos": "chaos-mesh.org/v1alpha1",
    "stresschaos": "chaos-mesh.org/v1alpha1",
    "httpchaos": "chaos-mesh.org/v1alpha1",
    "jvmchaos": "chaos-mesh.org/v1alpha1",
    "iochaos": "chaos-mesh.org/v1alpha1",
    "gateway": "gateway.networking.k8s.io/v1",
    "httproute": "gateway.networking.k8s.io/v1",
    "authorizationpolicy": "security.istio.io/v1",
    "peerauthentication": "security.istio.io/v1",
}


def stamp(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def short_hash(*parts: object, length: int = 10) -> str:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(alphabet[byte % len(alphabet)] for byte in digest[:length])


@dataclass
class FaultLog:
    """Lines a fault makes a service write: `per_minute` while the fault lasts, or once `at`."""

    level: str
    text: str
    per_minute: float = 0.0
    at: float | None = None
    pod: str | None = None


@dataclass
class Health:
    """How a service behaves from the incident's start (what it does itself, before propagation)."""

    error: float = 0.0  # share of its requests that fail because of it
    error_text: str = ""
    down: str | None = (
        None  # nothing answers: how callers see it (refused, dns, timeout, reset, unavailable, forbidden)
    )
    latency_ms: float = 0.0  # added to its own handling time
    cpu: float = 1.0
    memory: float = 1.0
    traffic: float = 1.0  # requests it receives, as a factor (flood > 1)
    blocked: dict[str, tuple[str, str]] = field(default_factory=dict)  # callee -> (kind, detail)
    logs: list[FaultLog] = field(default_factory=list)
    stalled_consumer: bool = False  # stopped taking messages from its queues
    quiet: bool = False  # writes nothing (no process running)


@dataclass
class PodState:
    name: str
    service: str
    workload: str
    node: str
    created: float
    phase: str = "Running"
    ready: bool = True
    waiting: str | None = None  # CrashLoopBackOff, ImagePullBackOff, ContainerCreating, ...
    waiting_message: str = ""
    init: str | None = None  # Init:CrashLoopBackOff, Init:0/1
    restarts: int = 0
    last_terminated: dict[str, Any] | None = None
    crash_output: list[str] = field(default_factory=list)  # what the container prints each start
    replica_set: str = ""
    ip: str = ""
    namespace: str = ""  # empty: the application's namespace

    @property
    def status_text(self) -> str:
        if self.init:
            return self.init
        if self.waiting:
            return self.waiting
        return self.phase


@dataclass
class Cluster:
    app: AppDef
    seed: int
    now: float
    start: float
    rng: random.Random
    objects: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    pods: dict[str, PodState] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    extra_alerts: list[dict[str, Any]] = field(default_factory=list)
    health: dict[str, Health] = field(default_factory=dict)
    node_names: list[str] = field(default_factory=list)
    touched: set[str] = field(
        default_factory=set
    )  # services the faults involve (noise avoids them)
    flags_on: dict[str, str] = field(default_factory=dict)  # flagd flags the faults turned on
    deleted_services: list[str] = field(default_factory=list)
    preemptor: str = ""  # the pod that preempted others, if a fault made one
    noisy: str = ""  # the busy, healthy service noise chose
    reached: set[str] = field(default_factory=set)  # services the faults reach (before noise)

    # ---- objects -------------------------------------------------------------------------

    @staticmethod
    def key(kind: str, name: str, namespace: str | None) -> tuple[str, str, str]:
        k = kind_key(kind)
        return k, "" if k in CLUSTER_SCOPED else (namespace or ""), name

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        return self.objects.get(self.key(kind, name, namespace or self.app.namespace))

    def add(
        self,
        kind: str,
        name: str,
        namespace: str | None,
        spec: dict[str, Any] | None = None,
        *,
        created: float,
        labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None,
        status: dict[str, Any] | None = None,
        data: dict[str, Any] | None = None,
        owner: tuple[str, str] | None = None,
    ) -> dict[str, Any]:
        k = kind_key(kind)
        metadata: dict[str, Any] = {"name": name}
        if k not in CLUSTER_SCOPED and namespace:
            metadata["namespace"] = namespace
        metadata["uid"] = _uid(self.seed, kind, namespace, name)
        metadata["creationTimestamp"] = stamp(created)
        metadata["resourceVersion"] = str(100_000 + self.rng.randint(0, 899_999))
        if labels:
            metadata["labels"] = dict(labels)
        if annotations:
            metadata["annotations"] = dict(annotations)
        if owner:
            metadata["ownerReferences"] = [{"kind": owner[0], "name": owner[1], "controller": True}]
        metadata["managedFields"] = [
            {"manager": "kubectl-client-side-apply", "operation": "Update", "time": stamp(created)}
        ]
        obj: dict[str, Any] = {
            "apiVersion": API_VERSIONS.get(k, "v1"),
            "kind": kind,
            "metadata": metadata,
        }
        if data is not None:
            obj["data"] = data
        if spec is not None:
            obj["spec"] = spec
        if status is not None:
            obj["status"] = status
        self.objects[self.key(kind, name, namespace)] = obj
        return obj

    def remove(self, kind: str, name: str, namespace: str | None) -> None:
        self.objects.pop(self.key(kind, name, namespace), None)

    def touch(self, obj: dict[str, Any], at: float, manager: str = "kubectl-edit") -> None:
        """Record a change to `obj` at `at`, as the API server would (managed fields, version)."""
        metadata = obj["metadata"]
        metadata["resourceVersion"] = str(
            int(metadata["resourceVersion"]) + 1000 + self.rng.randint(1, 900)
        )
        metadata["managedFields"] = [
            *metadata.get("managedFields", []),
            {"manager": manager, "operation": "Update", "time": stamp(at)},
        ]
        if "generation" in metadata:
            metadata["generation"] += 1

    def objects_of(self, kind: str) -> list[dict[str, Any]]:
        k = kind_key(kind)
        return [obj for key, obj in self.objects.items() if key[0] == k]

    # ---- workloads ------------------------------------------------------------------------

    def service_def(self, name: str) -> ServiceDef:
        found = self.app.service(name)
        if found is None:
            raise KeyError(name)
        return found

    def service_of(self, workload_or_service: str) -> ServiceDef | None:
        return self.app.service(workload_or_service) or self.app.service_of_workload(
            workload_or_service
        )

    def health_of(self, service: str) -> Health:
        return self.health.setdefault(service, Health())

    def pods_of(self, workload: str) -> list[PodState]:
        return [pod for pod in self.pods.values() if pod.workload == workload]

    def pods_of_service(self, service: str) -> list[PodState]:
        return [pod for pod in self.pods.values() if pod.service == service]

    def rollout(self, workload: str, at: float, manager: str = "kubectl-edit") -> list[PodState]:
        """A new revision of a Deployment's pod template at `at`: a new ReplicaSet whose pods
        replace the old ones (returned, for the caller to set their state)."""
        deployment = self.get("Deployment", workload)
        if deployment is None:
            raise KeyError(workload)
        self.touch(deployment, at, manager)
        annotations = deployment["metadata"].setdefault("annotations", {})
        revision = int(annotations.get("deployment.kubernetes.io/revision", "1")) + 1
        annotations["deployment.kubernetes.io/revision"] = str(revision)
        old_pods = self.pods_of(workload)
        old_rs = old_pods[0].replica_set if old_pods else ""
        new_rs = f"{workload}-{short_hash(self.seed, workload, revision)}"
        template = copy.deepcopy(deployment["spec"]["template"])
        rs = self.add(
            "ReplicaSet",
            new_rs,
            self.app.namespace,
            {"replicas": deployment["spec"]["replicas"], "template": template},
            created=at,
            annotations={"deployment.kubernetes.io/revision": str(revision)},
            owner=("Deployment", workload),
            status={"replicas": deployment["spec"]["replicas"], "readyReplicas": 0},
        )
        rs["metadata"]["labels"] = dict(template["metadata"]["labels"])
        if old_rs and (old := self.get("ReplicaSet", old_rs)) is not None:
            old["spec"]["replicas"] = 0
            old["status"] = {"replicas": 0, "readyReplicas": 0}
            self.touch(old, at + 2, "kube-controller-manager")
        owner = self.service_of(workload)
        container = owner.name if owner is not None else workload
        for pod in old_pods:
            del self.pods[pod.name]
            self.event(
                "Pod",
                pod.name,
                "Killing",
                f"Stopping container {container}",
                "Normal",
                at + 3,
                at + 3,
            )
        self.event(
            "Deployment",
            workload,
            "ScalingReplicaSet",
            f"Scaled up replica set {new_rs} to {deployment['spec']['replicas']}",
            "Normal",
            at + 1,
            at + 1,
        )
        if old_rs:
            self.event(
                "Deployment",
                workload,
                "ScalingReplicaSet",
                f"Scaled down replica set {old_rs} to 0 from {deployment['spec']['replicas']}",
                "Normal",
                at + 40,
                at + 40,
            )
        service = self.service_of(workload)
        fresh = []
        for index in range(int(deployment["spec"]["replicas"])):
            pod = PodState(
                name=f"{new_rs}-{short_hash(self.seed, new_rs, index, length=5)}",
                service=service.name if service else workload,
                workload=workload,
                node=self.node_names[(index + len(workload)) % len(self.node_names)],
                created=at + 2,
                replica_set=new_rs,
                ip=self.pod_ip(),
            )
            self.pods[pod.name] = pod
            fresh.append(pod)
        return fresh

    def pod_ip(self) -> str:
        return f"10.244.{self.rng.randint(0, 3)}.{self.rng.randint(2, 250)}"

    def container(self, workload: str) -> dict[str, Any]:
        deployment = self.get("Deployment", workload)
        if deployment is None:
            raise KeyError(workload)
        containers: list[dict[str, Any]] = deployment["spec"]["template"]["spec"]["containers"]
        return containers[0]

    # ---- events and logs ---------------------------------------------------------------------

    def event(
        self,
        kind: str,
        name: str,
        reason: str,
        message: str,
        type_: str = "Warning",
        first: float | None = None,
        last: float | None = None,
        count: int = 1,
        namespace: str | None = None,
        source: str | None = None,
    ) -> None:
        first = self.start if first is None else first
        last = first if last is None else last
        self.events.append(
            {
                "type": type_,
                "reason": reason,
                "object": f"{kind}/{name}",
                "namespace": namespace or self.app.namespace,
                "message": message,
                "count": count,
                "firstTimestamp": stamp(min(first, self.now)),
                "lastTimestamp": stamp(min(last, self.now)),
                "source": source or _event_source(kind, reason),
            }
        )

    def log(
        self,
        service: str,
        level: str,
        text: str,
        per_minute: float = 0.0,
        at: float | None = None,
        pod: str | None = None,
    ) -> None:
        self.health_of(service).logs.append(FaultLog(level, text, per_minute, at, pod))

    def minutes_since_start(self) -> float:
        return max(0.0, (self.now - self.start) / 60)


def _uid(seed: int, kind: str, namespace: str | None, name: str) -> str:
    raw = hashlib.sha256(f"{seed}|{kind}|{namespace}|{name}".encode()).hexdigest()
    return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:32]}"


def _event_source(kind: str, reason: str) -> str:
    if reason in ("FailedScheduling", "Scheduled", "Preempted"):
        return "default-scheduler"
    if reason in (
        "ScalingReplicaSet",
        "SuccessfulCreate",
        "FailedCreate",
        "SuccessfulRescale",
        "FailedGetResourceMetric",
    ):
        return "deployment-controller" if kind == "Deployment" else "replicaset-controller"
    if kind in (
        "Schedule",
        "NetworkChaos",
        "PodChaos",
        "StressChaos",
        "HTTPChaos",
        "JVMChaos",
        "IOChaos",
    ):
        return "chaos-controller-manager"
    return "kubelet"
