"""Attempts as Harbor's Agent Trajectory Interchange Format (ATIF v1.4): one JSON file per final
attempt, its steps the trajectory's messages (system, user, agent), each agent step carrying its
model, the tool calls its model asked for, benchyard served or the agent reported (each once) and
their results as its observation, and its tokens and cost as metrics (its time to first token and
latency in the metrics' `extra`); the verdict, score, cause
and checks in `extra`. An `index.json` beside them lists each
file with its scenario, epoch and verdict."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from benchyard import __version__
from benchyard.interop.source import RunSource, agent_events, call_arguments, check_rows, iso
from benchyard.runner.trajectory import Event
from benchyard.store.records import AttemptRecord, RunRecord

SCHEMA_VERSION = "ATIF-v1.4"
SOURCES = {"system": "system", "user": "user", "assistant": "agent"}
BUILT_IN_KINDS = ("openai", "oracle")  # benchyard's own agents: their version is benchyard's


def trajectory(source: RunSource, attempt: AttemptRecord) -> dict[str, Any]:
    run = source.run
    built = _Steps()
    for event in agent_events(attempt):
        built.add(event)
    steps = built.steps
    answer = attempt.answer or ""
    if not steps or steps[-1]["source"] != "agent" or steps[-1]["message"] != answer:
        if not any(step["source"] == "user" for step in steps):
            steps.insert(0, {"step_id": 1, "source": "user", "message": source.input_text(attempt)})
        steps.append(
            {
                "step_id": 0,
                "timestamp": iso(attempt.finished_at),
                "source": "agent",
                "message": answer,
            }
        )
    for index, step in enumerate(steps, start=1):
        step["step_id"] = index
        if step.get("timestamp") is None:
            step.pop("timestamp", None)
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "session_id": f"{run.id}-{attempt.id}",
        "agent": {
            "name": run.agent_name,
            "version": agent_version(run),
            "extra": {"kind": run.agent_config.get("kind"), "benchyard_run": run.id},
        },
        "steps": steps,
        "notes": f"benchyard run {run.id} of {run.benchmark_name} {run.benchmark_version}: "
        f"scenario {attempt.scenario_id}, epoch {attempt.epoch}",
        "final_metrics": {
            "total_prompt_tokens": attempt.tokens_in,
            "total_completion_tokens": attempt.tokens_out,
            "total_steps": len(steps),
            **({"total_cost_usd": attempt.cost_usd} if attempt.cost_usd is not None else {}),
        },
        "extra": {
            "benchmark": {
                "name": run.benchmark_name,
                "version": run.benchmark_version,
                "hash": run.benchmark_hash,
            },
            "scenario_id": attempt.scenario_id,
            "category": attempt.category,
            "epoch": attempt.epoch,
            "verdict": attempt.verdict,
            "score": attempt.score,
            "cause": attempt.cause,
            "failure_kind": attempt.failure_kind,
            "checks": check_rows(attempt),
        },
    }
    if source.model() != run.agent_name:
        document["agent"]["model_name"] = source.model()
    return document


def agent_version(run: RunRecord) -> str:
    """The agent's version: the one its configuration pins (an installed agent's package
    version), else the commit of its code (`+dirty` with uncommitted changes), else benchyard's
    own for its built-in agents; "unknown" only when none is known."""
    pinned = run.agent_config.get("version")
    if isinstance(pinned, str) and pinned:
        return pinned
    if run.agent_commit:
        return run.agent_commit + ("+dirty" if run.agent_dirty else "")
    if run.agent_config.get("kind") in BUILT_IN_KINDS:
        return f"benchyard {__version__}"
    return "unknown"


class _Steps:
    """ATIF steps from trajectory events: a message is a step, an agent step carries the tool
    calls its model asked for (a model call's `tool_calls`) and those benchyard served or the
    agent reported (`tool_call` events), each once, and their results as its observation."""

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self.owners: dict[str, tuple[dict[str, Any], str]] = {}  # a call's id: its step and id
        self.unserved: list[tuple[dict[str, Any], dict[str, Any]]] = []  # asked, not yet served

    def add(self, event: Event) -> None:
        data = event.data or {}
        call_id = data.get("call_id") or data.get("agent_call_id")
        if event.kind == "message" and event.role in SOURCES:
            self._message(event, data)
        elif event.kind == "tool_call" and "tool" in data:
            self._call(event, data, str(call_id or f"call-{len(self.owners) + 1}"))
        elif event.kind == "tool_result" and ("tool" in data or call_id):
            self._result(event, None if call_id is None else str(call_id))

    def _message(self, event: Event, data: dict[str, Any]) -> None:
        step: dict[str, Any] = {
            "step_id": len(self.steps) + 1,
            "timestamp": iso(event.ts),
            "source": SOURCES[str(event.role)],
            "message": event.content,
        }
        if event.role == "assistant":
            if isinstance(data.get("model"), str) and data.get("source") != "judge":
                step["model_name"] = data["model"]
            if event.reasoning:
                step["reasoning_content"] = event.reasoning
            metrics = _metrics(event)
            if metrics:
                step["metrics"] = metrics
        self.steps.append(step)
        for asked in data.get("tool_calls") or []:
            if isinstance(asked, dict):
                call_id = str(asked.get("id") or f"call-{len(self.owners) + 1}")
                call = self._attach(step, call_id, asked.get("name"), asked.get("arguments"))
                self.unserved.append((step, call))

    def _call(self, event: Event, data: dict[str, Any], call_id: str) -> None:
        """A tool call benchyard served or the agent reported: the model's own call when the last
        agent step asked for one of that name and it is not served yet, else a call of its own."""
        if call_id in self.owners:
            return
        for index, (step, call) in enumerate(self.unserved):
            if step is self.steps[-1] and call["function_name"] == str(data["tool"]):
                del self.unserved[index]
                self.owners[call_id] = (step, call["tool_call_id"])
                return
        last = self.steps[-1] if self.steps and self.steps[-1]["source"] == "agent" else None
        if last is None or "observation" in last:
            last = {"step_id": len(self.steps) + 1, "timestamp": iso(event.ts), "source": "agent"}
            last["message"] = ""
            self.steps.append(last)
        self._attach(last, call_id, data["tool"], data.get("arguments"))

    def _attach(
        self, step: dict[str, Any], call_id: str, name: Any, arguments: Any
    ) -> dict[str, Any]:
        call = {
            "tool_call_id": call_id,
            "function_name": str(name or ""),
            "arguments": call_arguments(arguments),
        }
        step.setdefault("tool_calls", []).append(call)
        self.owners[call_id] = (step, call_id)
        return call

    def _result(self, event: Event, call_id: str | None) -> None:
        owner, source_id = self.owners.get(call_id or "", (None, None))
        result: dict[str, Any] = {"source_call_id": source_id, "content": event.content}
        if owner is None:  # a result without its call: keep it, unattached
            owner = self.steps[-1] if self.steps else None
            result = {"content": event.content}
        if owner is not None:
            owner.setdefault("observation", {"results": []})["results"].append(result)


def _metrics(event: Event) -> dict[str, Any]:
    """A model call's tokens and cost, and its time to first token and latency in `extra` (ATIF
    has no field of its own for them), as far as known."""
    known = {
        "prompt_tokens": event.tokens_in,
        "completion_tokens": event.tokens_out,
        "cost_usd": event.cost_usd,
    }
    timing = {"ttft_sec": event.ttft_sec, "latency_sec": event.latency_sec}
    metrics = {name: value for name, value in known.items() if value is not None}
    extra = {name: value for name, value in timing.items() if value is not None}
    return {**metrics, "extra": extra} if extra else metrics


def write_trajectories(source: RunSource, directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    index = []
    written = []
    for number, attempt in enumerate(source.attempts, start=1):
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", attempt.scenario_id)[:80]
        name = f"{number:05d}-{safe}-e{attempt.epoch}.trajectory.json"
        path = directory / name
        path.write_text(
            json.dumps(trajectory(source, attempt), ensure_ascii=False, indent=2), encoding="utf-8"
        )
        written.append(path)
        index.append(
            {
                "file": name,
                "scenario_id": attempt.scenario_id,
                "epoch": attempt.epoch,
                "verdict": attempt.verdict,
                "score": attempt.score,
            }
        )
    (directory / "index.json").write_text(
        json.dumps({"run_id": source.run.id, "trajectories": index}, indent=2), encoding="utf-8"
    )
    return written
