"""Kubernetes entities as an agent names them and as ground truth holds them: (kind, name,
namespace), compared the way people write them (`deploy`, `Deployments` and `deployment` are one
kind; a cluster-scoped object has no namespace)."""

from __future__ import annotations

import re
from dataclasses import dataclass

CANONICAL_KINDS = (
    "AuthorizationPolicy",
    "ConfigMap",
    "CronJob",
    "DaemonSet",
    "Deployment",
    "Endpoints",
    "Gateway",
    "HorizontalPodAutoscaler",
    "HTTPChaos",
    "Ingress",
    "IOChaos",
    "Job",
    "JVMChaos",
    "Namespace",
    "NetworkChaos",
    "NetworkPolicy",
    "Node",
    "PeerAuthentication",
    "PersistentVolumeClaim",
    "Pod",
    "PodChaos",
    "PodDisruptionBudget",
    "PriorityClass",
    "ReplicaSet",
    "ResourceQuota",
    "Schedule",
    "Secret",
    "Service",
    "ServiceAccount",
    "StatefulSet",
    "StressChaos",
)
CLUSTER_SCOPED = frozenset({"namespace", "node", "priorityclass"})
"""Kinds whose objects live outside any namespace: their namespace is never compared."""

_SHORT_NAMES = {
    "cm": "configmap",
    "deploy": "deployment",
    "ds": "daemonset",
    "ep": "endpoints",
    "hpa": "horizontalpodautoscaler",
    "ing": "ingress",
    "netpol": "networkpolicy",
    "no": "node",
    "ns": "namespace",
    "pdb": "poddisruptionbudget",
    "pc": "priorityclass",
    "po": "pod",
    "pvc": "persistentvolumeclaim",
    "quota": "resourcequota",
    "rs": "replicaset",
    "sa": "serviceaccount",
    "sts": "statefulset",
    "svc": "service",
}
_BY_KEY = {kind.lower(): kind for kind in CANONICAL_KINDS}


def kind_key(kind: str) -> str:
    """The comparable form of a kind: lower case, no punctuation, short names and plurals
    resolved (`Deployments`, `deploy`, `apps/v1 Deployment` all give `deployment`)."""
    word = kind.strip().rsplit("/", 1)[-1].rsplit(" ", 1)[-1]
    word = re.sub(r"[^a-z0-9]", "", word.lower())
    if word in _SHORT_NAMES:
        return _SHORT_NAMES[word]
    if word in _BY_KEY or word == "endpoints":
        return word
    for suffix in ("es", "s"):
        if word.endswith(suffix) and word[: -len(suffix)] in _BY_KEY:
            return word[: -len(suffix)]
    if word.endswith("ies") and word[:-3] + "y" in _BY_KEY:
        return word[:-3] + "y"
    return word


def canonical_kind(kind: str) -> str:
    """The kind as Kubernetes spells it where it is known, else as given."""
    return _BY_KEY.get(kind_key(kind), kind.strip())


@dataclass(frozen=True, order=True)
class Entity:
    """One Kubernetes object: kind, name and namespace (None for cluster-scoped objects)."""

    kind: str
    name: str
    namespace: str | None = None

    @classmethod
    def of(cls, kind: str, name: str, namespace: str | None = None) -> Entity:
        key = kind_key(kind)
        scoped = namespace.strip() if namespace and namespace.strip() else None
        return cls(canonical_kind(kind), name.strip(), None if key in CLUSTER_SCOPED else scoped)

    @property
    def key(self) -> tuple[str, str, str | None]:
        """What equality means: the kind's key, the name and namespace without regard to case."""
        namespace = None if kind_key(self.kind) in CLUSTER_SCOPED else self.namespace
        return kind_key(self.kind), self.name.lower(), namespace.lower() if namespace else None

    def same_as(self, other: Entity) -> bool:
        return self.key == other.key

    def __str__(self) -> str:
        return (
            f"{self.kind}/{self.namespace}/{self.name}"
            if self.namespace
            else f"{self.kind}/{self.name}"
        )

    def to_json(self) -> dict[str, str | None]:
        return {"kind": self.kind, "name": self.name, "namespace": self.namespace}
