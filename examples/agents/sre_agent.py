#!/usr/bin/env python3
"""A scripted SRE agent for benchyard's sre environment (sre-starter, imported ITBench).

It investigates the way an on-call engineer would, through the tools benchyard serves on
BENCHYARD_TOOLS_SOCKET (docs/agent-protocol.md#tools), and names the root cause as JSON:

  1. alerts: which services alert (a CPU-throttling or cost alert alone is not an incident);
  2. Chaos Mesh: a schedule that is not paused and targets an alerting service;
  3. pods: broken pods (not ready, crash looping, pending) and their Deployment's events,
     with a ResourceQuota named in them;
  4. Services: one deleted, one with no endpoints, one whose target port is not the pods';
  5. recent changes: NetworkPolicies, ConfigMaps and Secrets modified since the alerts began;
  6. logs of the alerting services (credentials, DNS, feature flags), then the traces.

Each step is logged as an assistant message in the trajectory, so the report's turns count the
steps. Standard library only.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
from datetime import datetime, timedelta
from typing import Any

RECENT = timedelta(minutes=45)  # a change this close before the alerts is a suspect
QUIET_ALERTS = {"CPUThrottlingHigh", "NodeFilesystemSpaceFillingUp", "CPUSpend", "MemorySpend"}


class Tools(http.client.HTTPConnection):
    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(os.environ["BENCHYARD_TOOLS_SOCKET"])


def call(name: str, **arguments: Any) -> Any:
    connection = Tools("tools")
    connection.request("POST", "/call", json.dumps({"name": name, "arguments": arguments}))
    reply = json.loads(connection.getresponse().read())
    connection.close()
    if "error" in reply:
        return {"error": reply["error"]}
    text = reply["result"]
    try:
        return json.loads(text)
    except ValueError:
        return text


def note(text: str) -> None:
    path = os.environ.get("BENCHYARD_TRAJECTORY_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(
                json.dumps({"kind": "message", "role": "assistant", "content": text}) + "\n"
            )


def when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def entity(kind: str, name: str, namespace: str | None) -> dict[str, Any]:
    return {"kind": kind, "name": name, "namespace": namespace}


def answer(found: list[dict[str, Any]], confidence: float, why: str) -> None:
    note(f"conclusion: {why}")
    print(json.dumps({"root_causes": found, "confidence": confidence, "explanation": why}))


def investigate() -> None:
    alerts = call("list_alerts")
    now = when(alerts["now"])
    topology = call("get_topology")
    namespace = topology["namespace"]
    services = {s["name"]: s for s in topology["services"]}
    workload_service = {w["name"]: s["name"] for s in topology["services"] for w in s["workloads"]}
    loud: dict[str, int] = {}
    first_alert = now
    for alert in alerts["alerts"]:
        first_alert = min(first_alert, when(alert["startsAt"]))
        service = alert["labels"].get("service")
        if service and alert["alertname"] not in QUIET_ALERTS and alert["severity"] != "info":
            loud[service] = loud.get(service, 0) + 1
    platform = [
        a
        for a in alerts["alerts"]
        if a["labels"].get("namespace") == "kube-system" or a["alertname"].startswith("KubeAPI")
    ]
    note(f"alerting services: {loud or 'none'}; platform alerts: {len(platform)}")
    since = first_alert - RECENT

    schedules = call("get_objects", kind="Schedule", namespace="chaos-mesh").get("items", [])
    for schedule in schedules:
        selector = schedule.get("selector") or {}
        target = (selector.get("labelSelectors") or {}).get("app.kubernetes.io/component") or (
            selector.get("labelSelectors") or {}
        ).get("component")
        spaces = selector.get("namespaces") or []
        recent = schedule.get("last_schedule") and when(schedule["last_schedule"]) >= since
        if schedule.get("paused") or not recent:
            continue
        if (
            target in loud
            or (target in services and platform == [] and loud)
            or "kube-system" in spaces
        ):
            answer(
                [entity("Schedule", schedule["name"], "chaos-mesh")],
                0.8,
                f"Chaos Mesh schedule {schedule['name']} targets {target}, which alerts",
            )
            return
    note(f"checked {len(schedules)} Chaos Mesh schedules")

    if not loud and not platform:
        answer([], 0.6, "no service alerts beyond cost or throttling warnings: a false alarm")
        return
    if not loud and platform:
        events = call("get_events", type="Warning").get("events", [])
        flooding = next((e for e in events if e["reason"] == "TooManyRequests"), None)
        if flooding:
            answer(
                [entity("Namespace", flooding["object"].split("/", 1)[1], None)],
                0.5,
                flooding["message"],
            )
            return

    pods = call("get_objects", kind="Pod").get("items", [])
    broken = [p for p in pods if p["ready"] != "1/1" or p["status"] not in ("Running",)]
    note(f"broken pods: {[p['name'] for p in broken]}")
    found: list[dict[str, Any]] = []
    replica_sets = {}
    for pod in broken:
        workload = re.sub(r"-[a-z0-9]+-[a-z0-9]+$", "", pod["name"])
        replica_sets[workload] = True
    warnings = (
        call("get_events", type="Warning", namespace=namespace).get("events", [])
        if broken or loud
        else []
    )
    for event in warnings:
        match = re.search(r"exceeded quota: ([a-z0-9-]+)", event["message"])
        if match:
            workload = re.sub(r"-[a-z0-9]+$", "", event["object"].split("/", 1)[1])
            found = [
                entity("ResourceQuota", match.group(1), namespace),
                entity("Deployment", workload, namespace),
            ]
            answer(found, 0.8, event["message"])
            return
    for deployment in call("get_objects", kind="Deployment").get("items", []):
        if deployment["ready"] == "0/0" and workload_service.get(deployment["name"]) in loud:
            replica_sets[deployment["name"]] = True  # scaled to zero while it is needed
    for workload in replica_sets:
        if workload in workload_service and entity("Deployment", workload, namespace) not in found:
            found.append(entity("Deployment", workload, namespace))
    if found:
        answer(found, 0.8, f"pods of {', '.join(f['name'] for f in found)} are not running")
        return

    service_objects = {s["name"]: s for s in call("get_objects", kind="Service").get("items", [])}
    endpoints = {e["name"]: e for e in call("get_objects", kind="Endpoints").get("items", [])}
    for name in loud:
        if name not in service_objects and name in services:
            answer([entity("Service", name, namespace)], 0.7, f"the Service {name} is gone")
            return
    for name, info in services.items():
        if name not in service_objects:
            answer([entity("Service", name, namespace)], 0.6, f"the Service {name} is gone")
            return
        ports = service_objects[name].get("ports") or []
        if endpoints.get(name, {}).get("endpoints") == "<none>" and info["workloads"]:
            answer([entity("Service", name, namespace)], 0.7, f"the Service {name} selects no pod")
            return
        if ports and not ports[0].endswith(f"->{info['port']}/TCP"):
            answer(
                [entity("Service", name, namespace)],
                0.7,
                f"the Service {name} targets {ports[0]}, its pods listen on {info['port']}",
            )
            return
    note("services and endpoints look right")

    for policy in call("get_objects", kind="NetworkPolicy").get("items", []):
        answer(
            [entity("NetworkPolicy", policy["name"], namespace)],
            0.6,
            f"NetworkPolicy {policy['name']} is new",
        )
        return
    for policy in call("get_objects", kind="AuthorizationPolicy").get("items", []):
        answer(
            [entity("AuthorizationPolicy", policy["name"], namespace)],
            0.6,
            f"AuthorizationPolicy {policy['name']} denies traffic",
        )
        return

    for kind in ("ConfigMap", "Secret"):
        for item in call("get_objects", kind=kind).get("items", []):
            changed = when(item["last_modified"])
            if since <= changed <= now:
                users = [
                    s["name"]
                    for s in topology["services"]
                    if item["name"] in s.get("configmaps", []) + s.get("secrets", [])
                ]
                if item["name"] == "flagd-config" or set(users) & set(loud) or not users:
                    answer(
                        [entity(kind, item["name"], namespace)],
                        0.7,
                        f"{kind} {item['name']} changed at {item['last_modified']}",
                    )
                    return
    note("no recent configuration change")

    for service in sorted(loud, key=lambda s: -loud[s]):
        text = call("get_logs", service=service, grep="error|fail|denied|refused", limit=40)
        if not isinstance(text, str):
            continue
        auth = re.search(
            r"failed to call ([a-z0-9-]+)[^\n]*(NOAUTH|WRONGPASS|Authentication required)", text
        )
        if auth:
            answer(
                [entity("Deployment", auth.group(1), namespace)],
                0.6,
                f"{auth.group(1)} refuses {service}'s credentials",
            )
            return
        if re.search(r"no such host|ENOTFOUND|Name or service not known|EAI_AGAIN", text):
            answer(
                [entity("Deployment", service, namespace)],
                0.5,
                f"{service} cannot resolve its dependencies",
            )
            return
        if re.search(r"Username and Password not accepted|Invalid login|535", text):
            secrets = services.get(service, {}).get("secrets", [])
            if secrets:
                answer(
                    [entity("Secret", secrets[0], namespace)],
                    0.5,
                    f"{service} cannot log in with {secrets[0]}",
                )
                return

    traces = call("get_traces", only_errors=True, limit=5).get("traces", [])
    deepest: dict[str, int] = {}
    for trace in traces:
        spans = trace["spans"]
        parents = {span["parent_id"] for span in spans if span["status"] == "ERROR"}
        for span in spans:
            if span["status"] == "ERROR" and span["span_id"] not in parents:
                deepest[span["service"]] = deepest.get(span["service"], 0) + 1
    if deepest:
        culprit = max(deepest, key=lambda s: deepest[s])
        workload = (
            services[culprit]["workloads"][0]["name"]
            if services.get(culprit, {}).get("workloads")
            else culprit
        )
        answer([entity("Deployment", workload, namespace)], 0.4, f"failed traces end in {culprit}")
        return
    top = max(loud, key=lambda s: loud[s]) if loud else None
    answer([entity("Service", top, namespace)] if top else [], 0.2, "the most alerting service")


if __name__ == "__main__":
    investigate()
