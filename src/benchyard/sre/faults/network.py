"""Services and the network: ports, selectors, deleted services, network policies, probes, DNS,
credentials, services scaled to zero, the mesh's policies."""

# ruff: noqa: E501  (log lines, event messages and fixtures are quoted whole)

from __future__ import annotations

from typing import Any

from benchyard.sre.cluster import Cluster, short_hash
from benchyard.sre.faults.common import (
    FaultError,
    after_start,
    elapsed_min,
    fault_service,
    fault_workload,
    not_running,
    required_param,
    roll_out,
)
from benchyard.sre.incident import FaultSpec


def _service_object(cluster: Cluster, fault: FaultSpec) -> tuple[dict[str, Any], str]:
    service = fault_service(cluster, fault)
    obj = cluster.get("Service", service)
    if obj is None:
        raise FaultError(f"{fault.mechanism}: no Service '{service}'")
    return obj, service


def service_port(cluster: Cluster, fault: FaultSpec) -> None:
    obj, service = _service_object(cluster, fault)
    port = int(fault.params.get("target_port", cluster.service_def(service).port + 1))
    obj["spec"]["ports"][0]["targetPort"] = port
    cluster.touch(obj, after_start(cluster))
    not_running(cluster, service, "refused")
    cluster.health_of(service).quiet = False


def service_selector(cluster: Cluster, fault: FaultSpec) -> None:
    obj, service = _service_object(cluster, fault)
    selector = fault.params.get("selector") or {"app.kubernetes.io/component": f"{service}-v2"}
    obj["spec"]["selector"] = dict(selector)
    cluster.touch(obj, after_start(cluster))
    not_running(cluster, service, "refused")
    cluster.health_of(service).quiet = False


def service_deleted(cluster: Cluster, fault: FaultSpec) -> None:
    service = fault_service(cluster, fault)
    cluster.remove("Service", service, cluster.app.namespace)
    cluster.deleted_services.append(service)
    not_running(cluster, service, "dns")
    cluster.health_of(service).quiet = False


def network_policy(cluster: Cluster, fault: FaultSpec) -> None:
    service = fault_service(cluster, fault)
    name = str(
        fault.params.get("name")
        or (
            fault.target.name
            if fault.target.kind.lower() == "networkpolicy"
            else f"{service}-ingress"
        )
    )
    ports = fault.params.get("ports")
    ingress: list[dict[str, Any]] = [{"ports": [{"port": port} for port in ports]}] if ports else []
    cluster.add(
        "NetworkPolicy",
        name,
        cluster.app.namespace,
        {
            "podSelector": {"matchLabels": {"app.kubernetes.io/component": service}},
            "policyTypes": ["Ingress"],
            "ingress": ingress,
        },
        created=after_start(cluster),
    )
    not_running(cluster, service, "timeout")
    cluster.health_of(service).quiet = False


def readiness_probe(cluster: Cluster, fault: FaultSpec) -> None:
    workload = fault_workload(cluster, fault)
    service = fault_service(cluster, fault)
    port = int(fault.params.get("port", cluster.service_def(service).port + 1))

    def change(spec: dict[str, Any]) -> None:
        spec["containers"][0]["readinessProbe"] = {
            "httpGet": {"path": "/", "port": port},
            "periodSeconds": 5,
            "failureThreshold": 3,
        }

    for pod in roll_out(cluster, workload, change):
        pod.ready = False
        cluster.event(
            "Pod",
            pod.name,
            "Unhealthy",
            f'Readiness probe failed: Get "http://{pod.ip}:{port}/": dial tcp {pod.ip}:{port}: connect: connection refused',
            first=pod.created + 10,
            last=cluster.now - 3,
            count=int(elapsed_min(cluster) * 12),
        )
    not_running(cluster, service, "refused")
    cluster.health_of(service).quiet = False


def dns_policy(cluster: Cluster, fault: FaultSpec) -> None:
    workload = fault_workload(cluster, fault)
    service = fault_service(cluster, fault)

    def change(spec: dict[str, Any]) -> None:
        spec["dnsPolicy"] = "None"
        spec["dnsConfig"] = {
            "nameservers": [str(fault.params.get("nameserver", "192.0.2.53"))],
            "searches": [f"{cluster.app.namespace}.svc.cluster.local"],
        }

    roll_out(cluster, workload, change)
    health = cluster.health_of(service)
    for call in cluster.service_def(service).calls:
        health.blocked[call.service] = ("dns", "")
    cluster.touched.add(service)


def credentials(cluster: Cluster, fault: FaultSpec) -> None:
    mode = str(fault.params.get("mode", "password"))
    if mode == "password":
        server = fault_service(cluster, fault)
        workload = fault_workload(cluster, fault)

        def change(spec: dict[str, Any]) -> None:
            spec["containers"][0]["args"] = ["--requirepass", "$(VALKEY_PASSWORD)"]
            spec["containers"][0].setdefault("env", []).append(
                {
                    "name": "VALKEY_PASSWORD",
                    "valueFrom": {"secretKeyRef": {"name": f"{server}-auth", "key": "password"}},
                }
            )

        roll_out(cluster, workload, change)
        for client in cluster.app.callers_of(server):
            cluster.health_of(client.name).blocked[server] = (
                "auth",
                "NOAUTH Authentication required.",
            )
            cluster.touched.add(client.name)
        cluster.touched.add(server)
        return
    secret = cluster.get("Secret", fault.target.name)
    if secret is None:
        raise FaultError(f"credentials: no Secret '{fault.target.name}'")
    cluster.touch(secret, after_start(cluster))
    user = str(
        fault.params.get("service")
        or next((s.name for s in cluster.app.services if fault.target.name in s.secrets), "")
    )
    if not user:
        raise FaultError("credentials: no service mounts the secret; give `service`")
    health = cluster.health_of(user)
    health.error = 1.0
    health.error_text = str(
        fault.params.get(
            "error_text",
            "Net::SMTPAuthenticationError: 535 5.7.8 Username and Password not accepted",
        )
    )
    cluster.log(user, "error", health.error_text, per_minute=3)
    cluster.touched.add(user)


def scaled_to_zero(cluster: Cluster, fault: FaultSpec) -> None:
    workload = fault_workload(cluster, fault)
    service = fault_service(cluster, fault)
    deployment = cluster.get("Deployment", workload)
    assert deployment is not None
    deployment["spec"]["replicas"] = 0
    cluster.touch(deployment, after_start(cluster), "kubectl-scale")
    replica_set = f"{workload}-{short_hash(cluster.seed, workload)}"
    for pod in cluster.pods_of(workload):
        del cluster.pods[pod.name]
        replica_set = pod.replica_set
        cluster.event(
            "Pod",
            pod.name,
            "Killing",
            f"Stopping container {service}",
            "Normal",
            after_start(cluster, 2),
            after_start(cluster, 2),
        )
    cluster.event(
        "Deployment",
        workload,
        "ScalingReplicaSet",
        f"Scaled down replica set {replica_set} to 0 from 1",
        "Normal",
        after_start(cluster),
        after_start(cluster),
    )
    not_running(cluster, service, "refused")
    cluster.health_of(service).stalled_consumer = True


def mesh_policy(cluster: Cluster, fault: FaultSpec) -> None:
    mode = str(required_param(fault, "mode"))
    ns = cluster.app.namespace
    if mode == "deny":
        service = fault_service(cluster, fault)
        name = str(fault.params.get("policy", f"{fault.target.name}-deny"))
        cluster.add(
            "AuthorizationPolicy",
            name,
            ns,
            {
                "targetRefs": [
                    {
                        "kind": "Gateway",
                        "group": "gateway.networking.k8s.io",
                        "name": fault.target.name,
                    }
                ],
                "action": "DENY",
                "rules": [
                    {"to": [{"operation": {"methods": list(fault.params.get("methods", ["GET"]))}}]}
                ],
            },
            created=after_start(cluster),
        )
        health = cluster.health_of(service)
        health.error, health.error_text = 1.0, "RBAC: access denied"
        cluster.touched.add(service)
    elif mode == "strict-mtls":
        workload = fault_workload(cluster, fault)
        service = fault_service(cluster, fault)
        name = str(fault.params.get("policy", "strict-mtls-mode"))
        cluster.add(
            "PeerAuthentication",
            name,
            ns,
            {"mtls": {"mode": "STRICT"}},
            created=after_start(cluster),
        )

        def change(spec: dict[str, Any]) -> None:
            pass

        deployment = cluster.get("Deployment", workload)
        assert deployment is not None
        deployment["spec"]["template"]["metadata"]["labels"]["istio.io/dataplane-mode"] = "none"
        roll_out(cluster, workload, change)
        not_running(cluster, service, "reset")
        cluster.health_of(service).quiet = False
    elif mode == "ambient-off":
        namespace = cluster.get("Namespace", ns)
        assert namespace is not None
        namespace["metadata"]["labels"].pop("istio.io/dataplane-mode", None)
        cluster.touch(namespace, after_start(cluster))
        service = fault.service or "productpage"
        not_running(cluster, service, "reset")
        cluster.health_of(service).quiet = False
    else:
        raise FaultError(f"mesh-policy: unknown mode '{mode}' (deny, strict-mtls, ambient-off)")
