"""The tools an agent investigates an incident with, answered from the simulated world: alerts,
topology, objects and their descriptions, events, logs, metrics over a window, and traces.

Each tool is an object with the shape of a scenario tool (`name`, `parameters`, `definition()`,
`respond(arguments)`), so benchyard's ToolBox serves and records it like any other.
"""

# ruff: noqa: E501  (tool descriptions, messages and prompts are quoted whole)

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from benchyard.sre.cluster import PodState, stamp
from benchyard.sre.entities import CLUSTER_SCOPED, canonical_kind, kind_key
from benchyard.sre.logstyle import iso
from benchyard.sre.telemetry import (
    METRICS,
    TelemetryError,
    grep_lines,
    metric_value,
    minutes_back,
    pod_log,
    traces_in_minute,
)
from benchyard.sre.world import HISTORY_SEC, World, pod_namespace

MAX_ANSWER_CHARS = 16_000
MAX_POINTS = 120
ALL = "all"


class ToolError(ValueError):
    """The call cannot be answered: said to the agent as the tool's error."""


@dataclass(frozen=True)
class SreTool:
    """One tool over one world."""

    name: str
    description: str
    parameters: dict[str, Any]
    handler: Callable[[World, dict[str, Any]], Any]
    world: World

    def definition(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def respond(self, arguments: dict[str, Any]) -> tuple[str, bool]:
        try:
            result = self.handler(self.world, arguments)
        except (ToolError, TelemetryError) as error:
            return str(error), True
        text = result if isinstance(result, str) else render(result)
        if len(text) > MAX_ANSWER_CHARS:
            cut = text[:MAX_ANSWER_CHARS]
            text = cut + f"\n... [answer cut at {MAX_ANSWER_CHARS} characters; narrow the question]"
        return text, False


def render(value: Any, depth: int = 0) -> str:
    """JSON an agent reads easily: mappings indented, each list item (an alert, a pod, a span, a
    metric point) compact on a line of its own; an item holding a list of records (a trace and
    its spans) is opened up one level more."""
    compact = _compact(value)
    if len(compact) <= 120 or not isinstance(value, dict | list):
        return compact
    pad = " " * (depth + 1)
    if isinstance(value, dict):
        items = [
            f"{pad}{json.dumps(key)}: {render(item, depth + 1)}" for key, item in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + " " * depth + "}"
    items = [
        pad + (render(item, depth + 1) if _holds_records(item) else _compact(item))
        for item in value
    ]
    return "[\n" + ",\n".join(items) + "\n" + " " * depth + "]"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _holds_records(item: Any) -> bool:
    return isinstance(item, dict) and any(
        isinstance(v, list) and any(isinstance(x, dict) for x in v) for v in item.values()
    )


# ---- helpers -------------------------------------------------------------------------------------


def _namespace(world: World, arguments: dict[str, Any], default: str | None = None) -> str:
    namespace = arguments.get("namespace") or default or world.namespace
    known = _namespaces(world)
    if namespace != ALL and namespace not in known:
        raise ToolError(f"no namespace '{namespace}' (namespaces: {', '.join(known)})")
    return str(namespace)


def _namespaces(world: World) -> list[str]:
    return sorted(obj["metadata"]["name"] for obj in world.cluster.objects_of("Namespace"))


def _age(world: World, created: str) -> str:
    seconds = (
        world.now - datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
    )
    if seconds < 3600:
        return f"{int(seconds // 60)}m"
    if seconds < 86400 * 2:
        return f"{int(seconds // 3600)}h"
    return f"{int(seconds // 86400)}d"


def _last_modified(obj: dict[str, Any]) -> str:
    fields = obj["metadata"].get("managedFields") or []
    return str(fields[-1]["time"]) if fields else str(obj["metadata"]["creationTimestamp"])


def _since(world: World, arguments: dict[str, Any], default: int) -> float:
    minutes = arguments.get("since_minutes", default)
    return world.now - min(HISTORY_SEC / 60, max(1, int(minutes))) * 60


def _pods(world: World, namespace: str) -> list[PodState]:
    return sorted(
        (
            pod
            for pod in world.cluster.pods.values()
            if namespace == ALL or pod_namespace(world.cluster, pod) == namespace
        ),
        key=lambda pod: pod.name,
    )


def _find_pod(world: World, name: str) -> PodState:
    pod = world.cluster.pods.get(name)
    if pod is None:
        close = [p for p in sorted(world.cluster.pods) if p.startswith(name.rsplit("-", 1)[0])][:3]
        hint = f" (pods like it: {', '.join(close)})" if close else ""
        raise ToolError(f"pod '{name}' not found{hint}")
    return pod


def _service(world: World, name: str) -> Any:
    service = world.service(name)
    if service is None:
        known = ", ".join(sorted(s.name for s in world.app.services))
        raise ToolError(f"no service '{name}' in {world.namespace} (services: {known})")
    return service


# ---- pods as objects -------------------------------------------------------------------------------


def pod_object(world: World, pod: PodState) -> dict[str, Any]:
    cluster = world.cluster
    deployment = cluster.get("Deployment", pod.workload, pod_namespace(cluster, pod))
    template = (
        (deployment or {})
        .get("spec", {})
        .get("template", {"metadata": {}, "spec": {"containers": [{"name": pod.service}]}})
    )
    spec = json.loads(json.dumps(template["spec"]))
    if pod.node:
        spec["nodeName"] = pod.node
    state: dict[str, Any]
    if pod.waiting:
        state = {"waiting": {"reason": pod.waiting, "message": pod.waiting_message}}
    elif pod.init or pod.phase == "Pending":
        state = {"waiting": {"reason": "PodInitializing" if pod.init else "ContainerCreating"}}
    else:
        state = {
            "running": {
                "startedAt": stamp(
                    max(pod.created, world.now - 40)
                    if pod.restarts and pod.last_terminated and pod.created >= world.start - 600
                    else pod.created + 4
                )
            }
        }
    container_status: dict[str, Any] = {
        "name": spec["containers"][0]["name"],
        "image": spec["containers"][0].get("image", ""),
        "ready": pod.ready,
        "restartCount": pod.restarts,
        "state": state,
    }
    if pod.last_terminated:
        container_status["lastState"] = {"terminated": pod.last_terminated}
    conditions = [
        {
            "type": "PodScheduled",
            "status": "True" if pod.node else "False",
            **({} if pod.node else {"reason": "Unschedulable", "message": pod.waiting_message}),
        },
        {"type": "Initialized", "status": "False" if pod.init else "True"},
        {"type": "ContainersReady", "status": "True" if pod.ready else "False"},
        {"type": "Ready", "status": "True" if pod.ready else "False"},
    ]
    status: dict[str, Any] = {
        "phase": pod.phase,
        "conditions": conditions,
        "podIP": pod.ip if pod.node else None,
        "startTime": stamp(pod.created),
    }
    if pod.node:
        status["containerStatuses"] = [container_status]
    if pod.init:
        status["initContainerStatuses"] = [
            {
                "name": "init-config",
                "ready": False,
                "restartCount": pod.restarts,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}}
                if "Crash" in pod.init
                else {"running": {"startedAt": stamp(pod.created + 5)}},
                **(
                    {"lastState": {"terminated": pod.last_terminated}}
                    if pod.last_terminated
                    else {}
                ),
            }
        ]
    labels = dict(template.get("metadata", {}).get("labels", {}))
    labels["pod-template-hash"] = pod.replica_set.rsplit("-", 1)[-1]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod.name,
            "namespace": pod_namespace(cluster, pod),
            "labels": labels,
            "creationTimestamp": stamp(pod.created),
            "ownerReferences": [
                {"kind": "ReplicaSet", "name": pod.replica_set, "controller": True}
            ],
        },
        "spec": spec,
        "status": status,
    }


def _pod_row(world: World, pod: PodState) -> dict[str, Any]:
    return {
        "name": pod.name,
        "namespace": pod_namespace(world.cluster, pod),
        "ready": f"{int(pod.ready)}/1",
        "status": pod.status_text,
        "restarts": pod.restarts,
        "age": _age(world, stamp(pod.created)),
        "node": pod.node or "<none>",
        "ip": pod.ip if pod.node else "<none>",
    }


# ---- the tools -----------------------------------------------------------------------------------


def list_alerts(world: World, arguments: dict[str, Any]) -> Any:
    severity = arguments.get("severity")
    alerts = [a for a in world.alerts if severity in (None, a["severity"])]
    return {"now": iso(world.now), "alerts": alerts}


def get_topology(world: World, arguments: dict[str, Any]) -> Any:
    cluster = world.cluster
    services = []
    for service in world.app.services:
        workloads = []
        for workload in service.workloads:
            deployment = cluster.get("Deployment", workload)
            if deployment is None:
                continue
            pods = cluster.pods_of(workload)
            workloads.append(
                {
                    "kind": "Deployment",
                    "name": workload,
                    "replicas": deployment["spec"]["replicas"],
                    "ready": sum(1 for pod in pods if pod.ready),
                    "pods": [pod.name for pod in pods],
                }
            )
        entry: dict[str, Any] = {
            "name": service.name,
            "port": service.port,
            "calls": [call.service for call in service.calls],
        }
        if service.consumes:
            entry["consumes"] = list(service.consumes)
        if service.publishes:
            entry["publishes"] = list(service.publishes)
        entry["workloads"] = workloads
        if service.configmaps:
            entry["configmaps"] = list(service.configmaps)
        if service.secrets:
            entry["secrets"] = list(service.secrets)
        services.append(entry)
    return {
        "namespace": world.namespace,
        "entrypoint": world.app.entrypoint,
        "services": services,
        "namespaces": _namespaces(world),
        "nodes": [obj["metadata"]["name"] for obj in cluster.objects_of("Node")],
        "note": "calls are synchronous dependencies seen in traces; consumes/publishes are queues",
    }


def get_objects(world: World, arguments: dict[str, Any]) -> Any:
    kind = kind_key(str(arguments.get("kind", "")))
    namespace = _namespace(world, arguments)
    selector = _selector(arguments.get("label_selector"))
    if kind == "pod":
        rows = [_pod_row(world, pod) for pod in _pods(world, namespace)]
        if selector:
            rows = [
                row
                for row in rows
                if _labels_match(
                    pod_object(world, world.cluster.pods[row["name"]])["metadata"]["labels"],
                    selector,
                )
            ]
        return {"kind": "Pod", "namespace": namespace, "items": rows}
    known = sorted({key[0] for key in world.cluster.objects} | {"pod"})
    if kind not in known:
        raise ToolError(
            f"no objects of kind '{arguments.get('kind')}' (kinds: {', '.join(canonical_kind(k) for k in known)})"
        )
    rows = []
    for (k, ns, _), obj in sorted(world.cluster.objects.items()):
        if k != kind or (k not in CLUSTER_SCOPED and namespace != ALL and ns != namespace):
            continue
        if selector and not _labels_match(obj["metadata"].get("labels", {}), selector):
            continue
        rows.append(_row(world, obj))
    return {
        "kind": canonical_kind(kind),
        "namespace": namespace if kind not in CLUSTER_SCOPED else None,
        "items": rows,
    }


def _selector(raw: Any) -> dict[str, str]:
    if not raw:
        return {}
    pairs = {}
    for part in str(raw).split(","):
        key, _, value = part.partition("=")
        if not key.strip():
            raise ToolError(f"label_selector: expected key=value[,key=value], found {raw!r}")
        pairs[key.strip()] = value.strip()
    return pairs


def _labels_match(labels: dict[str, str], selector: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def _row(world: World, obj: dict[str, Any]) -> dict[str, Any]:
    metadata, kind = obj["metadata"], kind_key(obj["kind"])
    row: dict[str, Any] = {"name": metadata["name"]}
    if "namespace" in metadata:
        row["namespace"] = metadata["namespace"]
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    if kind == "deployment":
        row["ready"] = f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}"
        row["up_to_date"] = status.get("updatedReplicas", 0)
        row["available"] = status.get("availableReplicas", 0)
        row["revision"] = metadata.get("annotations", {}).get("deployment.kubernetes.io/revision")
        row["images"] = [
            c.get("image") for c in spec.get("template", {}).get("spec", {}).get("containers", [])
        ]
    elif kind == "replicaset":
        row["desired"] = spec.get("replicas", 0)
        row["ready"] = (status or {}).get("readyReplicas", 0)
    elif kind == "service":
        row["type"] = spec.get("type")
        row["cluster_ip"] = spec.get("clusterIP")
        row["ports"] = [
            f"{p['port']}->{p.get('targetPort', p['port'])}/{p.get('protocol', 'TCP')}"
            for p in spec.get("ports", [])
        ]
        row["selector"] = spec.get("selector")
    elif kind == "endpoints":
        subsets = obj.get("subsets") or []
        ready = [
            f"{a['ip']}:{s['ports'][0]['port']}" for s in subsets for a in s.get("addresses", [])
        ]
        not_ready = [
            f"{a['ip']}:{s['ports'][0]['port']}"
            for s in subsets
            for a in s.get("notReadyAddresses", [])
        ]
        row["endpoints"] = ready or "<none>"
        if not_ready:
            row["not_ready"] = not_ready
    elif kind in ("configmap", "secret"):
        row["data"] = len(obj.get("data") or {})
        row["last_modified"] = _last_modified(obj)
    elif kind == "node":
        node_ready = next(
            (c["status"] for c in status.get("conditions", []) if c["type"] == "Ready"), "Unknown"
        )
        row["status"] = ("Ready" if node_ready == "True" else "NotReady") + (
            ",SchedulingDisabled" if spec.get("unschedulable") else ""
        )
        pressure = [
            c["type"]
            for c in status.get("conditions", [])
            if c["type"] != "Ready" and c["status"] == "True"
        ]
        if pressure:
            row["conditions"] = pressure
    elif kind == "schedule":
        row["type"] = spec.get("type")
        row["schedule"] = spec.get("schedule")
        row["paused"] = (
            metadata.get("annotations", {}).get("experiment.chaos-mesh.org/pause") == "true"
        )
        row["last_schedule"] = status.get("lastScheduleTime")
        inner = next(
            (
                value
                for key, value in spec.items()
                if isinstance(value, dict) and "selector" in value
            ),
            {},
        )
        row["selector"] = inner.get("selector")
    elif kind == "horizontalpodautoscaler":
        row["target"] = spec.get("scaleTargetRef", {}).get("name")
        row["min"], row["max"] = spec.get("minReplicas"), spec.get("maxReplicas")
        row["replicas"] = status.get("currentReplicas")
    row["age"] = _age(world, metadata["creationTimestamp"])
    return row


def describe_object(world: World, arguments: dict[str, Any]) -> Any:
    kind = kind_key(str(arguments.get("kind", "")))
    name = str(arguments.get("name", ""))
    namespace = _namespace(world, arguments)
    if kind == "pod":
        pod = _find_pod(world, name)
        obj = pod_object(world, pod)
        namespace = obj["metadata"]["namespace"]
    else:
        key = world.cluster.key(kind, name, namespace)
        found = world.cluster.objects.get(key)
        if found is None:
            raise ToolError(
                f"{canonical_kind(kind)} '{name}' not found in namespace {namespace}"
                if kind not in CLUSTER_SCOPED
                else f"{canonical_kind(kind)} '{name}' not found"
            )
        obj = json.loads(json.dumps(found))
        if kind == "secret":
            obj["data"] = {
                k: f"<{len(str(v)) * 4} bytes>" for k, v in (obj.get("data") or {}).items()
            }
    label = f"{canonical_kind(kind)}/{name}"
    events = [
        event
        for event in world.cluster.events
        if event["object"] == label
        and (kind in CLUSTER_SCOPED or event["namespace"] == namespace or kind == "node")
    ]
    return {"object": obj, "events": events or "<none>"}


def get_events(world: World, arguments: dict[str, Any]) -> Any:
    namespace = _namespace(world, arguments, default=ALL)
    since = stamp(_since(world, arguments, 60))
    wanted_type = arguments.get("type")
    wanted_object = arguments.get("object")
    limit = min(200, max(1, int(arguments.get("limit", 60))))
    events = [
        event
        for event in world.cluster.events
        if (namespace == ALL or event["namespace"] == namespace)
        and event["lastTimestamp"] >= since
        and (wanted_type is None or event["type"].lower() == str(wanted_type).lower())
        and (wanted_object is None or _same_object(event["object"], str(wanted_object)))
    ]
    shown = events[-limit:]
    result: dict[str, Any] = {"now": iso(world.now), "events": shown}
    if len(events) > len(shown):
        result["omitted_older"] = len(events) - len(shown)
    return result


def _same_object(label: str, wanted: str) -> bool:
    kind, _, name = label.partition("/")
    wanted_kind, slash, wanted_name = wanted.partition("/")
    if not slash:
        return name == wanted
    return kind_key(kind) == kind_key(wanted_kind) and name == wanted_name


def get_logs(world: World, arguments: dict[str, Any]) -> Any:
    pod_name, service_name = arguments.get("pod"), arguments.get("service")
    if bool(pod_name) == bool(service_name):
        raise ToolError("give either `pod` or `service`")
    since = _since(world, arguments, 30)
    limit = min(300, max(1, int(arguments.get("limit", 60))))
    container = arguments.get("container")
    if pod_name:
        pods = [_find_pod(world, str(pod_name))]
    else:
        _service(world, str(service_name))
        pods = world.cluster.pods_of_service(str(service_name))
        if not pods:
            raise ToolError(f"service '{service_name}' has no pods")
    lines: list[tuple[float, str]] = []
    problems = []
    for pod in pods:
        try:
            found = pod_log(world, pod, since, world.now, str(container) if container else None)
        except TelemetryError as error:
            if len(pods) == 1:
                raise
            problems.append(str(error))
            continue
        prefix = f"[{pod.name}] " if len(pods) > 1 else ""
        lines += [(ts, prefix + text) for ts, text in found]
    lines.sort(key=lambda item: item[0])
    texts = grep_lines([text for _, text in lines], arguments.get("grep"))
    shown = texts[-limit:]
    header = f"# {len(shown)} of {len(texts)} lines since {iso(since)} (now {iso(world.now)})"
    return "\n".join([header, *problems, *shown])


def get_metrics(world: World, arguments: dict[str, Any]) -> Any:
    service = _service(world, str(arguments.get("service", "")))
    metric = str(arguments.get("metric", ""))
    if metric not in METRICS:
        raise ToolError(f"unknown metric '{metric}' (metrics: {', '.join(METRICS)})")
    start = _moment(world, arguments.get("start", "-30m"), "start")
    end = _moment(world, arguments.get("end", "now"), "end")
    if start >= end:
        raise ToolError("start must be before end")
    start = max(start, world.now - HISTORY_SEC)
    step = max(15, int(arguments.get("step_sec", 60)))
    if (end - start) / step > MAX_POINTS:
        step = int((end - start) / MAX_POINTS) + 1
    points = []
    ts = start
    while ts <= end:
        points.append([iso(ts), metric_value(world, service, metric, ts)])
        ts += step
    return {
        "service": service.name,
        "metric": metric,
        "description": METRICS[metric],
        "step_sec": step,
        "points": points,
    }


_RELATIVE = re.compile(r"^-(\d+)([smh])$")


def _moment(world: World, raw: Any, field: str) -> float:
    text = str(raw).strip()
    if text == "now":
        return world.now
    match = _RELATIVE.match(text)
    if match:
        return world.now - int(match.group(1)) * {"s": 1, "m": 60, "h": 3600}[match.group(2)]
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ToolError(
            f"{field}: expected 'now', a relative time such as '-30m', or an ISO 8601 time; found {text!r}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return min(moment.timestamp(), world.now)


def get_traces(world: World, arguments: dict[str, Any]) -> Any:
    service = arguments.get("service")
    if service:
        _service(world, str(service))
    only_errors = bool(arguments.get("only_errors", False))
    limit = min(20, max(1, int(arguments.get("limit", 5))))
    since = _since(world, arguments, 15)
    found: list[dict[str, Any]] = []
    for minute in minutes_back(world, since):
        for trace in sorted(traces_in_minute(world, minute), key=lambda t: -t["_ts"]):
            if trace["_ts"] < since or trace["_ts"] > world.now:
                continue
            if service and service not in trace["services"]:
                continue
            if only_errors and not trace["error"]:
                continue
            found.append({key: value for key, value in trace.items() if key != "_ts"})
            if len(found) >= limit:
                return {"now": iso(world.now), "traces": found}
    return {"now": iso(world.now), "traces": found}


def _schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


_NS = {
    "type": "string",
    "description": "Namespace (default: the application's); 'all' for every one.",
}
_SINCE = {
    "type": "integer",
    "minimum": 1,
    "maximum": 60,
    "description": "Look back this many minutes.",
}

TOOLS: list[tuple[str, str, dict[str, Any], Callable[[World, dict[str, Any]], Any]]] = [
    (
        "list_alerts",
        "Alerts firing now (Alertmanager), oldest first, with their labels and start times.",
        _schema({"severity": {"type": "string", "enum": ["critical", "warning", "info"]}}),
        list_alerts,
    ),
    (
        "get_topology",
        "The application's services, which services each calls (from traces), the queues, the Deployments and pods behind each service, the ConfigMaps and Secrets each uses, and the cluster's namespaces and nodes.",
        _schema({}),
        get_topology,
    ),
    (
        "get_objects",
        "List Kubernetes objects of a kind (Pod, Deployment, ReplicaSet, Service, Endpoints, ConfigMap, Secret, Node, Namespace, HorizontalPodAutoscaler, NetworkPolicy, ResourceQuota, Schedule, ...) with a status summary, like `kubectl get`.",
        _schema(
            {
                "kind": {"type": "string"},
                "namespace": _NS,
                "label_selector": {"type": "string", "description": "key=value[,key=value]"},
            },
            ["kind"],
        ),
        get_objects,
    ),
    (
        "describe_object",
        "One Kubernetes object in full (spec, status, metadata with its last changes) and its recent events, like `kubectl describe`.",
        _schema(
            {"kind": {"type": "string"}, "name": {"type": "string"}, "namespace": _NS},
            ["kind", "name"],
        ),
        describe_object,
    ),
    (
        "get_events",
        "Kubernetes events of the last hour (default: every namespace), oldest first.",
        _schema(
            {
                "namespace": _NS,
                "type": {"type": "string", "enum": ["Normal", "Warning"]},
                "object": {"type": "string", "description": "Kind/name, or a name"},
                "since_minutes": _SINCE,
                "limit": {"type": "integer", "minimum": 1, "maximum": 200},
            }
        ),
        get_events,
    ),
    (
        "get_logs",
        "Log lines of one pod, or of every pod of a service, newest last.",
        _schema(
            {
                "pod": {"type": "string"},
                "service": {"type": "string"},
                "container": {"type": "string"},
                "since_minutes": _SINCE,
                "grep": {
                    "type": "string",
                    "description": "A regular expression (case ignored) lines must match.",
                },
                "limit": {"type": "integer", "minimum": 1, "maximum": 300},
            }
        ),
        get_logs,
    ),
    (
        "get_metrics",
        "One metric of a service over a time window: "
        + "; ".join(f"{k} ({v})" for k, v in METRICS.items())
        + ".",
        _schema(
            {
                "service": {"type": "string"},
                "metric": {"type": "string", "enum": list(METRICS)},
                "start": {
                    "type": "string",
                    "description": "'-30m', '-2h' or an ISO 8601 time (default -30m)",
                },
                "end": {"type": "string", "description": "'now' (default) or a time"},
                "step_sec": {"type": "integer", "minimum": 15},
            },
            ["service", "metric"],
        ),
        get_metrics,
    ),
    (
        "get_traces",
        "Recent request traces (newest first), optionally only those through a service or only failed ones; each span with its service, operation, duration and error.",
        _schema(
            {
                "service": {"type": "string"},
                "only_errors": {"type": "boolean"},
                "since_minutes": _SINCE,
                "limit": {"type": "integer", "minimum": 1, "maximum": 20},
            }
        ),
        get_traces,
    ),
]
TOOL_NAMES = tuple(name for name, _, _, _ in TOOLS)
DEFAULT_COSTS = {
    "list_alerts": 1,
    "get_topology": 1,
    "get_objects": 1,
    "describe_object": 1,
    "get_events": 1,
    "get_logs": 2,
    "get_metrics": 2,
    "get_traces": 3,
}


def tools_for(world: World) -> list[SreTool]:
    return [
        SreTool(name, description, schema, handler, world)
        for name, description, schema, handler in TOOLS
    ]
