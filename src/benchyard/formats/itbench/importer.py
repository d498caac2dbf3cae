"""ITBench SRE scenarios as benchyard scenarios (`benchyard import itbench DIR`).

Each `scenario_<N>/` of an ITBench checkout (`scenarios/sre/project/roles/scenarios/files/`, or a
copy of it) holds `scenario.yaml` (the application and the fault injections), `groundtruth.yaml`
(v2: the root-cause entities) and, usually, `groundtruth_v1.yaml` (groups with name filters,
aliases, the alerts seen). The cluster cannot run here, so each scenario becomes an incident of
the `sre` environment: the injections become faults of the simulator's catalogue, v1's alerts
become alerts known to fire, and a seed fixes the rest. The ground truth goes into the scenario's
`root_cause` check and its reference answer, both in the benchmark's files, which agents never
see; the simulated cluster shows the fault's evidence, never the ground truth itself.

Conversion rules (docs/sre.md#itbench):
- the v2 entities are the root causes; v1 groups and aliases are kept in the check, and widen
  what matches them only with `--option v1_groups=true` (their filters accept victims); when v2
  lists none (a false alarm), the scenario is `negative` and its right answer names nothing;
- a v1 filter that is not a valid regular expression is dropped, an alias naming no group too;
- every problem in a source file is reported with its file, line and field, all at once.
"""

# ruff: noqa: E501  (tool descriptions, messages and prompts are quoted whole)

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from benchyard.importers.base import (
    BaseImporter,
    Imported,
    ImportedScenario,
    ImportOptions,
    Origin,
    ProblemList,
)
from benchyard.spec.source_files import Located, SpecSyntaxError, read_yaml
from benchyard.sre.apps import APPS, AppDef
from benchyard.sre.entities import kind_key
from benchyard.sre.tools import DEFAULT_COSTS

if TYPE_CHECKING:
    from benchyard.store.records import AttemptRecord

APPLICATIONS = {"opentelemetryDemo": "otel-demo", "bookInfo": "bookinfo"}
TASK = """You are the on-call SRE for the {app} application (Kubernetes namespace {namespace}). \
Alerts are firing. Investigate with the tools (alerts, topology, objects, events, logs, metrics, \
traces) and find the root cause: the Kubernetes object(s) whose fault or change started the \
incident, not the services that only suffer from it.

Answer with JSON only:
{{"root_causes": [{{"kind": "Deployment", "name": "...", "namespace": "..."}}], "confidence": 0.0-1.0, "explanation": "..."}}
Name as few objects as you must. If nothing is actually broken (a false alarm), answer with an empty root_causes list."""
TIMEOUT_SEC = 600
MAX_TURNS = 40
TOOL_BUDGET = 40


class ItbenchOptions(ImportOptions):
    seed: int = Field(
        default=0, ge=0, description="Base seed: each scenario's is derived from it and its number."
    )
    judge: Literal["off", "also", "only"] = Field(
        default="off", description="The root_cause check's judge mode."
    )
    red_herrings: int = Field(
        default=3, ge=0, le=6, description="Unrelated warnings and changes per incident."
    )
    v1_groups: bool = Field(
        default=False,
        description="Let the v1 groups and aliases widen what the root_cause check accepts (their "
        "filters accept victims: scenario 1's the frontend-proxy Service); off, they are kept in "
        "the check but only the v2 entities are the truth.",
    )


@dataclass
class _Source:
    """One scenario directory being read: its files and the problems found in them."""

    directory: Path
    problems: ProblemList
    notes: list[str] = field(default_factory=list)

    def read(self, name: str, required: bool = True) -> Located | None:
        path = self.directory / name
        if not path.is_file():
            if required:
                self.problems.add(path, None, "", "missing file")
            return None
        try:
            return read_yaml(path)
        except SpecSyntaxError as error:
            self.problems.add(path, error.line, "", error.message)
        except (OSError, UnicodeDecodeError) as error:
            self.problems.add(path, None, "", f"cannot read: {error}")
        return None

    def problem(
        self, name: str, located: Located, path: tuple[str | int, ...], message: str
    ) -> None:
        self.problems.add(self.directory / name, located.line_of(path), _field(path), message)


def _field(path: tuple[str | int, ...]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def scenario_dirs(source: Path) -> list[Path]:
    """The scenario directories under `source`: itself, its `scenario_*` children, or those of
    its `sre/` child, in numeric order."""
    if (source / "scenario.yaml").is_file():
        return [source]
    root = (
        source / "sre"
        if (source / "sre").is_dir() and not list(source.glob("scenario_*"))
        else source
    )
    found = [path for path in root.glob("scenario_*") if path.is_dir()]
    return sorted(
        found, key=lambda p: (int(m.group(1)) if (m := re.search(r"(\d+)$", p.name)) else 0, p.name)
    )


def convert(source: Path, options: ItbenchOptions) -> tuple[list[ImportedScenario], list[str]]:
    """Every scenario under `source`, and notes on what the conversion dropped; raises
    SourceInvalid listing every problem."""
    problems = ProblemList()
    directories = scenario_dirs(source)
    if not directories:
        problems.add(source, None, "", "no scenario_<N> directories with a scenario.yaml here")
    scenarios, notes = [], []
    for directory in directories:
        reader = _Source(directory, problems)
        converted = _convert_one(reader, options)
        notes += [f"{directory.name}: {note}" for note in reader.notes]
        if converted is not None:
            scenarios.append(converted)
    problems.raise_if_any()
    return scenarios, notes


def _convert_one(source: _Source, options: ItbenchOptions) -> ImportedScenario | None:
    before = len(source.problems.problems)
    scenario = source.read("scenario.yaml")
    truth = source.read("groundtruth.yaml")
    truth_v1 = source.read("groundtruth_v1.yaml", required=False)
    if scenario is None or truth is None:
        return None
    number = _number(source.directory.name)
    app = _application(source, scenario)
    entities = _entities(source, truth)
    groups, aliases, alerts = _v1(source, truth_v1)
    faults = _faults(source, scenario, app, entities, groups) if app else []
    if len(source.problems.problems) > before or app is None:
        return None
    negative = not entities
    if negative:
        groups = [{**group, "root_cause": False} for group in groups]
        source.notes.append("no v2 root-cause entity: a false alarm (negative scenario)")
    name = str(_get(scenario.data, "metadata", "name") or f"scenario-{number}")
    seed = options.seed * 100_003 + number
    incident: dict[str, Any] = {"type": "sre", "app": app.name, "seed": seed, "faults": faults}
    known_services = {service.name for service in app.services}
    wanted_alerts = [
        alert
        for alert in _alerts(alerts, groups, app)
        if alert.get("service") in known_services or "service" not in alert
    ]
    if wanted_alerts:
        incident["alerts"] = wanted_alerts
    if options.red_herrings != 3:
        incident["noise"] = {"red_herrings": options.red_herrings}
    autoscaling = _get(
        scenario.data,
        "spec",
        "applications",
        "opentelemetryDemo",
        "options",
        "autoscaling",
        "kubernetes",
        "hpa",
    )
    if autoscaling is True:
        incident["autoscaling"] = True
    check: dict[str, Any] = {"type": "root_cause", "entities": entities}
    if groups:
        check["groups"] = groups
    if aliases:
        check["aliases"] = aliases
    if options.v1_groups and groups and entities:
        check["v1_groups"] = True
    if options.judge != "off":
        check["judge"] = options.judge
    injection_ids = [fault["_injection"] for fault in faults]
    for fault in faults:
        fault.pop("_injection")
    data: dict[str, Any] = {
        "id": name,
        "category": _category(injection_ids),
        "tags": sorted({"itbench", app.name, *injection_ids}),
        "difficulty": "hard"
        if len(entities) > 1
        else ("easy" if _category(injection_ids) == "workload" else "medium"),
        "description": f"ITBench SRE {name}: {', '.join(dict.fromkeys(injection_ids)) or 'no fault injected'}",
        "stimulus": {"task": TASK.format(app=app.name, namespace=app.namespace)},
        "environment": incident,
        "reference": json.dumps({"root_causes": entities}),
        "limits": {"timeout_sec": TIMEOUT_SEC, "max_turns": MAX_TURNS},
        "checks": [
            check,
            {"type": "tool_cost", "weight": 0, "costs": dict(DEFAULT_COSTS), "budget": TOOL_BUDGET},
        ],
    }
    if negative:
        data["negative"] = True
    return ImportedScenario(
        data, Origin(source.directory / "scenario.yaml", scenario.line), _category(injection_ids)
    )


def _number(name: str) -> int:
    match = re.search(r"(\d+)$", name)
    return int(match.group(1)) if match else 0


def _get(data: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def _application(source: _Source, scenario: Located) -> AppDef | None:
    data = scenario.data
    if not isinstance(data, dict):
        source.problem("scenario.yaml", scenario, (), "expected a mapping (apiVersion, kind, spec)")
        return None
    if data.get("kind") != "Scenario":
        source.problem(
            "scenario.yaml", scenario, ("kind",), f"expected Scenario, found {data.get('kind')!r}"
        )
    applications = _get(data, "spec", "applications")
    if not isinstance(applications, dict):
        source.problem(
            "scenario.yaml", scenario, ("spec", "applications"), "required mapping is missing"
        )
        return None
    enabled = [
        name
        for name, value in applications.items()
        if isinstance(value, dict) and value.get("enabled")
    ]
    if len(enabled) != 1 or enabled[0] not in APPLICATIONS:
        source.problem(
            "scenario.yaml",
            scenario,
            ("spec", "applications"),
            f"expected exactly one enabled application of {', '.join(APPLICATIONS)}, found {', '.join(enabled) or 'none'}",
        )
        return None
    return APPS[APPLICATIONS[enabled[0]]]


def _entities(source: _Source, truth: Located) -> list[dict[str, Any]]:
    data = truth.data
    if not isinstance(data, dict) or data.get("kind") != "GroundTruth":
        source.problem("groundtruth.yaml", truth, ("kind",), "expected a GroundTruth document")
        return []
    raw = _get(data, "spec", "entities")
    if raw is None:
        source.problem("groundtruth.yaml", truth, ("spec", "entities"), "required list is missing")
        return []
    if not isinstance(raw, list):
        source.problem("groundtruth.yaml", truth, ("spec", "entities"), "expected a list")
        return []
    entities: list[dict[str, Any]] = []
    for index, item in enumerate(raw):
        path: tuple[str | int, ...] = ("spec", "entities", index)
        kind = item.get("kind") if isinstance(item, dict) else None
        name = _get(item, "metadata", "name")
        if not isinstance(kind, str) or not kind:
            source.problem("groundtruth.yaml", truth, (*path, "kind"), "required text is missing")
            continue
        if not isinstance(name, str) or not name:
            source.problem(
                "groundtruth.yaml", truth, (*path, "metadata", "name"), "required text is missing"
            )
            continue
        entity = {"kind": kind, "name": name, "namespace": _get(item, "metadata", "namespace")}
        if entity not in entities:
            entities.append(entity)
    return entities


def _v1(
    source: _Source, truth: Located | None
) -> tuple[list[dict[str, Any]], list[list[str]], list[dict[str, Any]]]:
    if truth is None:
        return [], [], []
    data = truth.data
    prefix: tuple[str, ...] = ()
    if isinstance(data, dict) and isinstance(data.get("spec"), dict) and "groups" in data["spec"]:
        data, prefix = data["spec"], ("spec",)
    if not isinstance(data, dict):
        source.problem("groundtruth_v1.yaml", truth, (), "expected a mapping")
        return [], [], []
    groups: list[dict[str, Any]] = []
    for index, group in enumerate(data.get("groups") or []):
        path: tuple[str | int, ...] = (*prefix, "groups", index)
        if (
            not isinstance(group, dict)
            or not isinstance(group.get("id"), str)
            or not isinstance(group.get("kind"), str)
        ):
            source.problem("groundtruth_v1.yaml", truth, path, "a group needs text 'id' and 'kind'")
            continue
        filters = group.get("filter") or []
        if not isinstance(filters, list):
            source.problem(
                "groundtruth_v1.yaml",
                truth,
                (*path, "filter"),
                "expected a list of regular expressions",
            )
            continue
        valid = []
        for pattern in filters:
            try:
                re.compile(str(pattern))
                valid.append(str(pattern))
            except re.error:
                source.notes.append(
                    f"group {group['id']}: dropped filter {pattern!r} (not a valid regular expression)"
                )
        converted: dict[str, Any] = {"id": group["id"], "kind": group["kind"]}
        for key in ("namespace", "name"):
            if isinstance(group.get(key), str):
                converted[key] = group[key]
        if valid:
            converted["filter"] = valid
        if group.get("root_cause") is True:
            converted["root_cause"] = True
        groups.append(converted)
    known = {group["id"] for group in groups}
    aliases = []
    for index, members in enumerate(data.get("aliases") or []):
        if not isinstance(members, list):
            source.problem(
                "groundtruth_v1.yaml",
                truth,
                (*prefix, "aliases", index),
                "expected a list of group ids",
            )
            continue
        kept = [str(member) for member in members if member in known]
        dropped = [str(member) for member in members if member not in known]
        if dropped:
            source.notes.append(f"aliases[{index}]: dropped {', '.join(dropped)} (no such group)")
        if len(kept) > 1:
            aliases.append(kept)
    alerts = [alert for alert in data.get("alerts") or [] if isinstance(alert, dict)]
    return groups, aliases, alerts


def _alerts(
    alerts: list[dict[str, Any]], groups: list[dict[str, Any]], app: AppDef
) -> list[dict[str, Any]]:
    """v1's alerts as alerts on services of the app (their ids only: the descriptions are
    ITBench's notes on the incident, which an agent must not read)."""
    by_id = {group["id"]: group for group in groups}
    result: list[dict[str, Any]] = []
    for alert in alerts:
        name = alert.get("id")
        group = by_id.get(str(alert.get("group_id")))
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,99}", name):
            continue
        service = _service_of_group(group, app) if group else None
        entry: dict[str, Any] = {"alert": name}
        if service is not None:
            entry["service"] = service
        elif group is None or kind_key(group["kind"]) != "namespace":
            continue
        if entry not in result:
            result.append(entry)
    return result


def _service_of_group(group: dict[str, Any], app: AppDef) -> str | None:
    kind = kind_key(group["kind"])
    if kind not in ("service", "pod", "deployment"):
        return None
    patterns = [re.compile(p) for p in group.get("filter", [])]
    names = [group["name"]] if group.get("name") else []
    found = []
    for service in app.services:
        candidates = (
            [service.name] if kind != "pod" else [f"{w}-5d8f7c9b4-x2x9z" for w in service.workloads]
        )
        if kind == "deployment":
            candidates = list(service.workloads)
        if any(p.fullmatch(c) for p in patterns for c in candidates) or any(
            n in candidates for n in names
        ):
            found.append(service.name)
    return min(found, key=len) if found else None


# ---- fault injections -> the simulator's faults ------------------------------------------------

SIMPLE: dict[str, tuple[str, dict[str, Any]]] = {
    "unsupported-architecture-kubernetes-workload-container-image": ("bad-arch-image", {}),
    "nonexistent-kubernetes-workload-container-image": ("bad-image", {}),
    "invalid-kubernetes-workload-container-command": ("bad-command", {}),
    "misconfigured-kubernetes-horizontal-pod-autoscaler": ("bad-hpa", {}),
    "nonexistent-kubernetes-workload-node": ("unschedulable", {"reason": "node-selector"}),
    "unschedulable-kubernetes-workload-pod-anti-affinity-rule": (
        "unschedulable",
        {"reason": "anti-affinity"},
    ),
    "nonexistent-kubernetes-workload-persistent-volume-claim": ("unschedulable", {"reason": "pvc"}),
    "hanging-kubernetes-workload-init-container": ("init-container", {"mode": "hang"}),
    "misconfigured-kubernetes-workload-container-readiness-probe": ("readiness-probe", {}),
    "failing-name-resolution-kubernetes-workload-dns-policy": ("dns-policy", {}),
    "valkey-workload-changed-password": ("credentials", {"mode": "password"}),
    "valkey-workload-out-of-memory": ("oom", {"memory_mb": 4}),
    "insufficient-kubernetes-workload-container-resources": (
        "oom",
        {"memory_mb": 16, "cpu": "10m"},
    ),
    "unassigned-kubernetes-workload-container-resource-limits": ("no-limits", {}),
    "invalid-kubernetes-service-selector": ("service-selector", {}),
    "deleted-kubernetes-service": ("service-deleted", {}),
    "scaled-to-zero-kubernetes-workload": ("scaled-to-zero", {}),
    "corrupted-kubernetes-secret-credentials": ("credentials", {"mode": "secret"}),
    "kubernetes-api-server-request-surge": ("api-surge", {}),
}
SUPPORTED = sorted(
    {
        *SIMPLE,
        "opentelemetry-demo-feature-flag",
        "scheduled-chaos-mesh-experiment",
        "modified-kubernetes-workload-container-environment-variable",
        "modified-target-port-kubernetes-service",
        "ingress-port-blocking-network-policy",
        "insufficient-kubernetes-resource-quota",
        "crashing-kubernetes-workload-init-container",
        "cordoned-kubernetes-worker-node",
        "priority-kubernetes-workload-priority-preemption",
        "traffic-denying-istio-gateway-authorization-policy",
        "disabled-istio-ambient-mode-kubernetes-namespace",
        "strict-mutual-tls-istio-service-mesh-enforcement",
    }
)


def _faults(
    source: _Source,
    scenario: Located,
    app: AppDef,
    entities: list[dict[str, Any]],
    groups: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    raw = _get(scenario.data, "spec", "faults")
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        source.problem("scenario.yaml", scenario, ("spec", "faults"), "expected a list")
        return []
    faults = []
    for index, entry in enumerate(raw):
        injections = entry.get("injections") if isinstance(entry, dict) else None
        if not isinstance(injections, list) or not injections:
            source.problem(
                "scenario.yaml",
                scenario,
                ("spec", "faults", index, "injections"),
                "expected a non-empty list",
            )
            continue
        restarts = [
            _get(wait, "args", "kubernetesObject", "metadata", "name")
            for wait in _get(entry, "waitFor", "postInjection") or []
            if isinstance(wait, dict) and wait.get("id") == "restart-kubernetes-workload"
        ]
        for number, injection in enumerate(injections):
            path: tuple[str | int, ...] = ("spec", "faults", index, "injections", number)
            fault = _fault(
                source,
                scenario,
                path,
                injection,
                app,
                entities,
                groups,
                [r for r in restarts if isinstance(r, str)],
            )
            if fault is not None:
                faults.append(fault)
    return faults


def _fault(
    source: _Source,
    scenario: Located,
    path: tuple[str | int, ...],
    injection: Any,
    app: AppDef,
    entities: list[dict[str, Any]],
    groups: list[dict[str, Any]],
    restarts: list[str],
) -> dict[str, Any] | None:
    if not isinstance(injection, dict) or not isinstance(injection.get("id"), str):
        source.problem("scenario.yaml", scenario, (*path, "id"), "required text is missing")
        return None
    kind = injection["id"]
    raw_args = injection.get("args")
    args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
    target_object = args.get("kubernetesObject")
    if not isinstance(target_object, dict) or not isinstance(
        _get(target_object, "metadata", "name"), str
    ):
        source.problem(
            "scenario.yaml",
            scenario,
            (*path, "args", "kubernetesObject"),
            "required object (kind, metadata.name) is missing",
        )
        return None
    target = {
        "kind": str(target_object.get("kind", "")),
        "name": str(_get(target_object, "metadata", "name")),
        "namespace": _get(target_object, "metadata", "namespace"),
    }

    def entity_named(kind_name: str) -> str | None:
        return next(
            (e["name"] for e in entities if kind_key(e["kind"]) == kind_key(kind_name)), None
        )

    def group_named(kind_name: str) -> str | None:
        for group in groups:
            if kind_key(group["kind"]) == kind_key(kind_name):
                if group.get("name"):
                    return str(group["name"])
                for pattern in group.get("filter", []):
                    plain = str(pattern).replace("\\b", "").rstrip(".*-")
                    if re.fullmatch(r"[a-z0-9-]+", plain):
                        return plain
        return None

    fault: dict[str, Any] = {"mechanism": "", "target": target, "_injection": kind}
    params: dict[str, Any] = {}
    if kind in SIMPLE:
        fault["mechanism"], params = SIMPLE[kind][0], dict(SIMPLE[kind][1])
        if kind == "corrupted-kubernetes-secret-credentials":
            fault["service"] = (
                next((s.name for s in app.services if target["name"] in s.secrets), None) or "email"
            )
        if kind == "kubernetes-api-server-request-surge":
            params["requests_per_second"] = (
                _get(args, "loadGenerator", "options", "requestsPerSecond") or 1000
            )
        if kind == "nonexistent-kubernetes-workload-persistent-volume-claim":
            params["claim"] = f"{target['name']}-data"
    elif kind == "opentelemetry-demo-feature-flag":
        flag = _get(args, "flag", "name")
        if not isinstance(flag, str):
            source.problem(
                "scenario.yaml",
                scenario,
                (*path, "args", "flag", "name"),
                "required text is missing",
            )
            return None
        fault["mechanism"] = "feature-flag"
        params = {
            "flag": flag,
            "variant": str(_get(args, "flag", "state") or "on"),
            "restart": restarts,
        }
    elif kind == "scheduled-chaos-mesh-experiment":
        return _chaos(source, scenario, path, fault, args, app)
    elif kind == "modified-kubernetes-workload-container-environment-variable":
        env = _get(args, "container", "env")
        if not isinstance(env, dict) or not isinstance(env.get("name"), str):
            source.problem(
                "scenario.yaml",
                scenario,
                (*path, "args", "container", "env"),
                "required {name, value} is missing",
            )
            return None
        fault["mechanism"] = "bad-env"
        params = {"name": env["name"], "value": str(env.get("value", ""))}
    elif kind == "modified-target-port-kubernetes-service":
        fault["mechanism"] = "service-port"
        wanted = args.get("targetPort")
        service = app.service(target["name"])
        if isinstance(wanted, int) and service is not None and wanted != service.port:
            params["target_port"] = wanted
    elif kind == "ingress-port-blocking-network-policy":
        fault["mechanism"] = "network-policy"
        params["name"] = (
            entity_named("NetworkPolicy")
            or group_named("NetworkPolicy")
            or f"{target['name']}-ingress"
        )
    elif kind == "insufficient-kubernetes-resource-quota":
        fault["mechanism"] = "unschedulable"
        params = {
            "reason": "quota",
            "quota": entity_named("ResourceQuota")
            or group_named("ResourceQuota")
            or "strict-resource-quota",
        }
    elif kind == "crashing-kubernetes-workload-init-container":
        fault["mechanism"] = "init-container"
        params = {
            "mode": "crash",
            "configmap": entity_named("ConfigMap") or str(args.get("configMapName") or "features"),
        }
    elif kind == "cordoned-kubernetes-worker-node":
        fault["mechanism"] = "unschedulable"
        params = {"reason": "cordoned"}
        pdb = group_named("PodDisruptionBudget")
        if pdb:
            params["pdb"] = pdb
    elif kind == "priority-kubernetes-workload-priority-preemption":
        fault["mechanism"] = "unschedulable"
        params = {
            "reason": "preemption",
            "preemptor": group_named("Pod")
            if group_named("Pod") not in (None, target["name"])
            else "eviction-pod",
        }
    elif kind == "traffic-denying-istio-gateway-authorization-policy":
        fault["mechanism"] = "mesh-policy"
        fault["service"] = "bookinfo-gateway-istio"
        params = {
            "mode": "deny",
            "policy": entity_named("AuthorizationPolicy") or f"{target['name']}-deny",
            "methods": list(args.get("httpMethods") or ["GET"]),
        }
    elif kind == "disabled-istio-ambient-mode-kubernetes-namespace":
        fault["mechanism"] = "mesh-policy"
        fault["service"] = "productpage"
        params = {"mode": "ambient-off"}
    elif kind == "strict-mutual-tls-istio-service-mesh-enforcement":
        fault["mechanism"] = "mesh-policy"
        params = {
            "mode": "strict-mtls",
            "policy": entity_named("PeerAuthentication") or "strict-mtls-mode",
        }
    else:
        source.problem(
            "scenario.yaml",
            scenario,
            (*path, "id"),
            f"unsupported fault injection '{kind}' (supported: {', '.join(SUPPORTED)})",
        )
        return None
    if params:
        fault["params"] = params
    if (
        kind_key(target["kind"]) in ("deployment", "service")
        and app.service_of_workload(target["name"]) is None
        and app.service(target["name"]) is None
    ):
        source.problem(
            "scenario.yaml",
            scenario,
            (*path, "args", "kubernetesObject", "metadata", "name"),
            f"no workload or service '{target['name']}' in {app.name}",
        )
        return None
    return fault


def _chaos(
    source: _Source,
    scenario: Located,
    path: tuple[str | int, ...],
    fault: dict[str, Any],
    args: dict[str, Any],
    app: AppDef,
) -> dict[str, Any] | None:
    spec = args.get("scheduleSpec")
    kind = _get(spec, "type")
    if not isinstance(kind, str):
        source.problem(
            "scenario.yaml",
            scenario,
            (*path, "args", "scheduleSpec", "type"),
            "required text is missing",
        )
        return None
    spec_keys: dict[str, Any] = spec if isinstance(spec, dict) else {}
    inner_key = next((key for key in spec_keys if key.lower() == kind.lower()), None)
    inner = spec_keys.get(inner_key) if inner_key else None
    if not isinstance(inner, dict):
        source.problem(
            "scenario.yaml",
            scenario,
            (*path, "args", "scheduleSpec"),
            f"no '{kind[:1].lower() + kind[1:]}' experiment spec",
        )
        return None
    labels = _get(inner, "selector", "labelSelectors") or {}
    namespaces = _get(inner, "selector", "namespaces") or [app.namespace]
    component = labels.get("app.kubernetes.io/component") or labels.get("component")
    if not isinstance(component, str):
        source.problem(
            "scenario.yaml",
            scenario,
            (*path, "args", "scheduleSpec", inner_key or kind, "selector"),
            "no component label to target",
        )
        return None
    params: dict[str, Any] = {"type": kind, "spec": inner, "namespace": str(namespaces[0])}
    if inner.get("action"):
        params["action"] = inner["action"]
    if params["namespace"] == app.namespace:
        if app.service(component) is None:
            source.problem(
                "scenario.yaml",
                scenario,
                (*path, "args", "scheduleSpec", inner_key or kind, "selector"),
                f"no service '{component}' in {app.name}",
            )
            return None
        fault["service"] = component
    else:
        params["component"] = component
    peer = _get(inner, "target", "selector", "labelSelectors", "app.kubernetes.io/component")
    if isinstance(peer, str):
        params["peer"] = peer
    latency = _get(inner, "delay", "latency")
    if isinstance(latency, str) and (match := re.fullmatch(r"(\d+)(ms|s)", latency)):
        params["latency_ms"] = int(match.group(1)) * (1000 if match.group(2) == "s" else 1)
    delay = inner.get("delay")
    if (
        kind == "IOChaos"
        and isinstance(delay, str)
        and (match := re.fullmatch(r"(\d+)(ms|s)", delay))
    ):
        params["latency_ms"] = int(match.group(1)) * (1000 if match.group(2) == "s" else 1)
    body = _get(inner, "patch", "body", "value")
    if isinstance(body, str):
        params["error_text"] = f"JSON::ParserError: unexpected token at '{body[:80]}'"
    fault["mechanism"] = "chaos"
    fault["params"] = params
    fault["target"]["namespace"] = fault["target"]["namespace"] or "chaos-mesh"
    return fault


def _category(injections: list[str]) -> str:
    if not injections:
        return "false-alarm"
    first = injections[0]
    if first == "opentelemetry-demo-feature-flag":
        return "feature-flag"
    if first == "scheduled-chaos-mesh-experiment":
        return "chaos"
    if "istio" in first:
        return "mesh"
    if ("service" in first and "workload" not in first) or "network-policy" in first:
        return "network"
    if "api-server" in first or "node" in first or "quota" in first or "priority" in first:
        return "cluster"
    return "workload"


class ItbenchImporter(BaseImporter):
    name = "itbench"
    format_version = "1"
    summary = (
        "ITBench SRE scenarios (scenario.yaml + ground truth), simulated by the sre environment"
    )
    source_kind = "directory"
    options = ItbenchOptions

    def read(self, source: Path, options: Any) -> Imported:
        assert isinstance(options, ItbenchOptions)
        scenarios, notes = convert(source, options)
        description = (
            f"{len(scenarios)} ITBench SRE incidents (root cause from alerts, logs, metrics, traces "
            "and topology), simulated deterministically by benchyard's sre environment"
        )
        if notes:
            description += ". Conversion notes: " + "; ".join(notes)
        return Imported(
            name="itbench-sre",
            version="1",
            description=description,
            scenarios=scenarios,
            defaults={"timeout_sec": TIMEOUT_SEC, "max_turns": MAX_TURNS},
        )

    def metrics(
        self, attempts: Sequence[AttemptRecord], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        return {}


IMPORTER = ItbenchImporter()
