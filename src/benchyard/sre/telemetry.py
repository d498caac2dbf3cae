"""Telemetry computed on demand from a world: each pod's log lines, each service's metrics and
request traces. Every value depends only on the seed and the moment (a log minute, a metric
bucket, a trace minute), never on which question was asked first, so answers are reproducible."""

# ruff: noqa: E501  (tool descriptions, messages and prompts are quoted whole)

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from benchyard.sre.apps import ServiceDef
from benchyard.sre.cluster import Health, PodState
from benchyard.sre.logstyle import access_line, call_error, line, routine
from benchyard.sre.world import CALL_TIMEOUT_MS, HISTORY_SEC, Effective, World

RAMP_SEC = 90.0  # how long a fault takes to show fully in metrics
TRACES_PER_MINUTE = 4
MAX_SPANS = 24

METRICS = {
    "request_rate": "requests per second the service handled",
    "error_rate": "share of the service's requests that failed (0 to 1)",
    "latency_p50_ms": "median request latency, milliseconds",
    "latency_p95_ms": "95th percentile request latency, milliseconds",
    "cpu_usage_cores": "CPU used by the service's pods, cores",
    "memory_usage_mb": "memory used by the service's pods (working set), MiB",
    "restarts": "container restarts of the service's pods, cumulative over the window",
    "ready_pods": "pods of the service that are ready",
    "queue_lag": "messages waiting for the service on the queues it consumes",
}


class TelemetryError(ValueError):
    """A question the telemetry cannot answer (an unknown pod, a container not started)."""


def _ramp(world: World, ts: float) -> float:
    return min(1.0, max(0.0, (ts - world.start) / RAMP_SEC))


def _alive(pod: PodState, ts: float) -> bool:
    return ts >= pod.created


# ---- logs ---------------------------------------------------------------------------------------


def pod_log(
    world: World, pod: PodState, since: float, until: float, container: str | None
) -> list[tuple[float, str]]:
    """(timestamp, line) of one pod's container between `since` and `until`."""
    service = world.service(pod.service)
    style = service.style if service else "go"
    if container and container != pod.service:
        if container != "init-config" or not pod.init:
            raise TelemetryError(f'container "{container}" is not valid for pod "{pod.name}"')
        start = world.now - 45
        return [
            (
                start + i,
                line("python", start + i, "info", text, "init-config").split(
                    " INFO [init-config] ", 1
                )[-1],
            )
            for i, text in enumerate(pod.crash_output)
        ]
    if pod.phase == "Pending" and not pod.node:
        raise TelemetryError(f'pod "{pod.name}" is Pending: no node assigned, no container started')
    if pod.init:
        raise TelemetryError(
            f'container "{pod.service}" in pod "{pod.name}" is waiting to start: PodInitializing (init container "init-config" is {pod.init.split(":", 1)[1]})'
        )
    if pod.waiting in ("ImagePullBackOff", "ErrImagePull", "ContainerCreating"):
        raise TelemetryError(
            f'container "{pod.service}" in pod "{pod.name}" is waiting to start: trying and failing to pull image'
        )
    if pod.waiting == "CrashLoopBackOff" and pod.crash_output:
        start = world.now - 40
        return [
            (start + i * 0.01, line(style, start + i * 0.01, "error", text, pod.service))
            for i, text in enumerate(pod.crash_output)
        ]
    if (
        pod.waiting == "CrashLoopBackOff"
        and pod.last_terminated
        and pod.last_terminated.get("reason") == "StartError"
    ):
        return []
    lines: list[tuple[float, str]] = []
    first = int(max(since, pod.created, world.now - HISTORY_SEC) // 60)
    for minute in range(first, int(until // 60) + 1):
        for ts, text in _minute_lines(world, pod, minute, style):
            if since <= ts <= until:
                lines.append((ts, text))
    lines.sort(key=lambda item: item[0])
    return lines


def _minute_lines(world: World, pod: PodState, minute: int, style: str) -> list[tuple[float, str]]:
    service = world.service(pod.service)
    rng = random.Random(f"{world.seed}|log|{pod.name}|{minute}")
    t0 = minute * 60.0
    if service is None:
        return (
            [
                (
                    t0 + rng.uniform(0, 60),
                    line("go", t0 + 30, "info", "reconcile loop finished", pod.service),
                )
            ]
            if rng.random() < 0.5
            else []
        )
    health = world.health(service.name)
    state = world.effective.get(service.name)
    faulty = t0 + 60 > world.start
    if faulty and health.quiet:
        return []
    pods = max(1, len(world.cluster.pods_of_service(service.name)))
    out: list[tuple[float, str]] = []
    traffic = health.traffic if faulty else 1.0
    rate = min(8.0, max(0.6, service.rps * traffic / (4 * pods)))
    for _ in range(_count(rng, rate)):
        ts = t0 + rng.uniform(0, 60)
        if not _alive(pod, ts):
            continue
        operation = rng.choice(service.operations)
        if style in ("envoy", "nginx"):
            failing = (
                faulty and ts >= world.start and state is not None and rng.random() < state.error
            )
            status = (503 if state and state.down is None and failing else 504) if failing else 200
            upstream = service.calls[0].service if service.calls else service.name
            out.append(
                (
                    ts,
                    access_line(
                        ts,
                        operation,
                        status,
                        service.latency_ms * rng.uniform(0.6, 1.8),
                        f"{upstream}:{_port(world, upstream)}",
                    ),
                )
            )
            continue
        level, text = routine(service.name, style, operation, rng)
        out.append((ts, line(style, ts, level, text, _logger(service))))
    if faulty and state is not None:
        out += _failure_lines(world, pod, service, health, state, t0, rng, style, pods)
    for entry in health.logs:
        if entry.pod and entry.pod != pod.name:
            continue
        if entry.at is not None:
            if t0 <= entry.at < t0 + 60 and _alive(pod, entry.at):
                out.append(
                    (entry.at, line(style, entry.at, entry.level, entry.text, _logger(service)))
                )
            continue
        for _ in range(_count(rng, entry.per_minute / pods)):
            ts = t0 + rng.uniform(0, 60)
            if ts >= world.start and _alive(pod, ts):
                text = entry.text.replace("{n}", str(rng.randint(120, 4800)))
                out.append((ts, line(style, ts, entry.level, text, _logger(service))))
    return [(ts, text) for ts, text in out if ts <= world.now]


def _failure_lines(
    world: World,
    pod: PodState,
    service: ServiceDef,
    health: Health,
    state: Effective,
    t0: float,
    rng: random.Random,
    style: str,
    pods: int,
) -> list[tuple[float, str]]:
    out = []
    for call in service.calls:
        failing = state.failing_calls.get(call.service)
        if failing is None:
            continue
        kind, detail, share = failing
        rate = min(
            12.0, max(0.8, service.rps * health.traffic * call.share * share * 60 / (25 * pods))
        )
        message = call_error(service.style, call.service, _port(world, call.service), kind, detail)
        level = "error" if call.critical else "warn"
        for _ in range(_count(rng, rate)):
            ts = t0 + rng.uniform(0, 60)
            if ts >= world.start and _alive(pod, ts):
                operation = rng.choice(_operations(world, call.service))
                text = f"failed to call {call.service} {operation}: {message}"
                if style in ("envoy", "nginx"):
                    text = f"upstream {call.service}: {message}"
                out.append((ts, line(style, ts, level, text, _logger(service))))
    if health.error and health.error_text:
        rate = min(10.0, max(0.8, service.rps * health.traffic * health.error * 60 / (30 * pods)))
        for _ in range(_count(rng, rate)):
            ts = t0 + rng.uniform(0, 60)
            if ts >= world.start and _alive(pod, ts):
                out.append((ts, line(style, ts, "error", health.error_text, _logger(service))))
    return out


def _count(rng: random.Random, rate: float) -> int:
    whole = int(rate)
    return whole + (1 if rng.random() < rate - whole else 0)


def _logger(service: ServiceDef) -> str:
    return {
        "java": f"oteldemo.{service.name.title().replace('-', '')}",
        "dotnet": f"{service.name}.Service",
    }.get(service.style, service.name)


def _port(world: World, name: str) -> int:
    service = world.service(name)
    return service.port if service else 8080


def _operations(world: World, name: str) -> tuple[str, ...]:
    service = world.service(name)
    return service.operations if service else ("call",)


def grep_lines(lines: list[str], pattern: str | None) -> list[str]:
    if not pattern:
        return lines
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except re.error as error:
        raise TelemetryError(f"grep: not a valid regular expression: {error}") from None
    return [text for text in lines if compiled.search(text)]


# ---- metrics -------------------------------------------------------------------------------


def metric_value(world: World, service: ServiceDef, metric: str, ts: float) -> float | None:
    health = world.health(service.name)
    state = world.effective.get(service.name)
    f = _ramp(world, ts)
    jitter = random.Random(f"{world.seed}|metric|{service.name}|{metric}|{int(ts // 15)}").uniform(
        0.92, 1.08
    )
    pods = world.cluster.pods_of_service(service.name)
    down = state is not None and state.down is not None and health.quiet
    if metric == "request_rate":
        from benchyard.sre.world import starved

        if down or (service.consumes and starved(world.cluster, world.effective, service)):
            return round(service.rps * (1 - f) * jitter, 3)
        factor = 1 + (health.traffic - 1) * f
        if state is not None and state.down:
            factor *= 1 - f
        return round(service.rps * factor * jitter, 3)
    if metric == "error_rate":
        if state is None or (state.down and f >= 1):
            return None if f >= 1 else round(0.002 * jitter, 4)
        return round(min(1.0, 0.002 * jitter + state.error * f * jitter), 4)
    if metric in ("latency_p50_ms", "latency_p95_ms"):
        if down and f >= 1:
            return None
        base = service.latency_ms
        now = state.latency_ms if state is not None and not state.down else base
        value = (base + (now - base) * f) * jitter * (2.5 if metric == "latency_p95_ms" else 1.0)
        return round(min(value, CALL_TIMEOUT_MS * 2), 2)
    if metric == "cpu_usage_cores":
        if down and f >= 1:
            return 0.0
        used = service.cpu_rest * (1 + (health.cpu * max(1.0, health.traffic) - 1) * f) * jitter
        return round(min(used, service.cpu_limit * len(pods or [None])), 4)
    if metric == "memory_usage_mb":
        if down and f >= 1:
            return 0.0
        used = service.memory_rest_mb * (1 + (health.memory - 1) * f)
        if health.memory > 2 and f >= 1:
            used *= 0.55 + 0.45 * ((ts - world.start) % 150) / 150  # fills, is killed, fills again
        return round(min(used * jitter, service.memory_limit_mb * max(1, len(pods)) * 1.02), 1)
    if metric == "restarts":
        total = 0.0
        for pod in pods:
            old = pod.restarts if pod.created < world.start else 0
            share = min(
                1.0,
                max(
                    0.0,
                    (ts - max(pod.created, world.start))
                    / max(1.0, world.now - max(pod.created, world.start)),
                ),
            )
            total += (
                old
                if pod.created < world.start and not _recent(world, pod)
                else pod.restarts * share
            )
        return float(int(total))
    if metric == "ready_pods":
        if ts < world.start:
            return float(service.replicas * len(service.workloads))
        return (
            float(sum(1 for pod in pods if pod.ready))
            if f >= 1
            else float(service.replicas * len(service.workloads))
        )
    if metric == "queue_lag":
        if not service.consumes:
            return None
        from benchyard.sre.world import _consumer_lags

        lags = _consumer_lags(world.cluster, world.effective, service)
        grown = (ts - world.start) / 60 * service.rps * 55 if lags and ts > world.start else 0.0
        return float(int(rng_small(world, service.name, ts) + grown))
    raise TelemetryError(f"unknown metric '{metric}' (metrics: {', '.join(METRICS)})")


def _recent(world: World, pod: PodState) -> bool:
    finished = (pod.last_terminated or {}).get("finishedAt", "")
    from benchyard.sre.cluster import stamp

    return bool(finished) and finished >= stamp(world.start)


def rng_small(world: World, service: str, ts: float) -> int:
    return random.Random(f"{world.seed}|lag|{service}|{int(ts // 30)}").randint(0, 12)


# ---- traces ----------------------------------------------------------------------------------


@dataclass
class _Span:
    span: str
    parent: str | None
    service: str
    operation: str
    start_ms: float
    duration_ms: float
    error: str | None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "span_id": self.span,
            "parent_id": self.parent,
            "service": self.service,
            "operation": self.operation,
            "start_offset_ms": round(self.start_ms, 2),
            "duration_ms": round(self.duration_ms, 2),
            "status": "ERROR" if self.error else "OK",
        }
        if self.error:
            data["error"] = self.error
        return data


def traces_in_minute(world: World, minute: int) -> list[dict[str, Any]]:
    rng = random.Random(f"{world.seed}|trace|{minute}")
    found = []
    roots = [world.app.entrypoint] * TRACES_PER_MINUTE
    consumers = [s.name for s in world.app.services if s.consumes]
    if consumers and minute % 2 == 0:
        roots.append(rng.choice(consumers))
    for index, root in enumerate(roots):
        ts = minute * 60.0 + rng.uniform(0, 60)
        if ts > world.now:
            continue
        found.append(_trace(world, root, ts, random.Random(f"{world.seed}|trace|{minute}|{index}")))
    return found


def _trace(world: World, root: str, ts: float, rng: random.Random) -> dict[str, Any]:
    spans: list[_Span] = []
    faulty = ts >= world.start + RAMP_SEC / 2

    def visit(
        name: str, operation: str, parent: str | None, depth: int, offset: float
    ) -> tuple[float, str | None]:
        service = world.service(name)
        span_id = f"{rng.getrandbits(64):016x}"
        span = _Span(span_id, parent, name, operation, offset, 0.0, None)
        spans.append(span)
        if service is None:
            span.duration_ms = rng.uniform(1, 5)
            return span.duration_ms, None
        health = world.health(name) if faulty else None
        own = service.latency_ms * rng.uniform(0.4, 1.3) + (health.latency_ms if health else 0.0)
        elapsed = own * 0.3
        error: str | None = None
        if health is not None and health.error and rng.random() < health.error:
            error = health.error_text or "internal error"
        for call in service.calls:
            if depth >= 6 or len(spans) >= MAX_SPANS or rng.random() > call.share:
                continue
            callee_op = rng.choice(_operations(world, call.service))
            callee_state = world.effective.get(call.service)
            blocked = health.blocked.get(call.service) if health else None
            callee_down = faulty and callee_state is not None and callee_state.down
            if blocked or callee_down:
                kind, detail = blocked if blocked else (callee_state.down or "refused", "")  # type: ignore[union-attr]
                waited = (
                    CALL_TIMEOUT_MS if kind in ("timeout", "unavailable") else rng.uniform(0.5, 4)
                )
                message = call_error(
                    service.style, call.service, _port(world, call.service), kind, detail
                )
                client = _Span(
                    f"{rng.getrandbits(64):016x}",
                    span_id,
                    name,
                    f"{call.service}/{callee_op} (client)",
                    offset + elapsed,
                    waited,
                    message,
                )
                spans.append(client)
                elapsed += waited
                if call.critical and error is None:
                    error = message
                continue
            took, child_error = visit(call.service, callee_op, span_id, depth + 1, offset + elapsed)
            if took > CALL_TIMEOUT_MS:
                took = CALL_TIMEOUT_MS
                child_error = child_error or "context deadline exceeded"
                if call.critical and error is None:
                    error = call_error(
                        service.style, call.service, _port(world, call.service), "timeout"
                    )
            elapsed += took
            if child_error and call.critical and error is None:
                error = call_error(
                    service.style, call.service, _port(world, call.service), "error", child_error
                )
        span.duration_ms = elapsed + own * 0.7
        span.error = error
        return span.duration_ms, error

    root_service = world.service(root)
    operation = rng.choice(root_service.operations) if root_service else "request"
    duration, error = visit(root, operation, None, 0, 0.0)
    return {
        "trace_id": f"{rng.getrandbits(128):032x}",
        "start": _iso(ts),
        "root": f"{root} {operation}",
        "duration_ms": round(duration, 2),
        "error": error is not None or any(span.error for span in spans),
        "services": sorted({span.service for span in spans}),
        "spans": [span.to_json() for span in spans],
        "_ts": ts,
    }


def _iso(ts: float) -> str:
    from benchyard.sre.logstyle import iso

    return iso(ts)


def minutes_back(world: World, since: float) -> range:
    return range(int(world.now // 60), int(max(since, world.now - HISTORY_SEC) // 60) - 1, -1)
