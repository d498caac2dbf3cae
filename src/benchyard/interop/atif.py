"""Attempts as Harbor's Agent Trajectory Interchange Format (ATIF v1.4): one JSON file per final
attempt, its steps the trajectory's messages (system, user, agent), each agent step carrying the
tool calls benchyard observed and their results as its observation, and its tokens and cost as
metrics; the verdict, score, cause and checks in `extra`. An `index.json` beside them lists each
file with its scenario, epoch and verdict."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from benchyard.interop.source import RunSource, agent_events, check_rows, iso
from benchyard.store.records import AttemptRecord

SCHEMA_VERSION = "ATIF-v1.4"
SOURCES = {"system": "system", "user": "user", "assistant": "agent"}


def trajectory(source: RunSource, attempt: AttemptRecord) -> dict[str, Any]:
    run = source.run
    steps: list[dict[str, Any]] = []
    by_call: dict[str, dict[str, Any]] = {}
    for event in agent_events(attempt):
        data = event.data or {}
        if event.kind == "message" and event.role in SOURCES:
            step: dict[str, Any] = {
                "step_id": len(steps) + 1,
                "timestamp": iso(event.ts),
                "source": SOURCES[event.role],
                "message": event.content,
            }
            if event.role == "assistant":
                if event.reasoning:
                    step["reasoning_content"] = event.reasoning
                metrics = _metrics(event.tokens_in, event.tokens_out, event.cost_usd)
                if metrics:
                    step["metrics"] = metrics
            steps.append(step)
        elif event.kind == "tool_call" and "tool" in data:
            last = steps[-1] if steps and steps[-1]["source"] == "agent" else None
            if last is None or "observation" in last:
                last = {
                    "step_id": len(steps) + 1,
                    "timestamp": iso(event.ts),
                    "source": "agent",
                    "message": "",
                }
                steps.append(last)
            call_id = str(data.get("call_id") or f"call-{len(by_call) + 1}")
            arguments = data.get("arguments")
            last.setdefault("tool_calls", []).append(
                {
                    "tool_call_id": call_id,
                    "function_name": str(data["tool"]),
                    "arguments": arguments if isinstance(arguments, dict) else {},
                }
            )
            by_call[call_id] = last
        elif event.kind == "tool_result" and "tool" in data:
            owner = by_call.get(str(data.get("call_id")))
            result = {"source_call_id": str(data.get("call_id")), "content": event.content}
            if owner is None:  # a result without its call: keep it, unattached
                owner = steps[-1] if steps else None
                result = {"content": event.content}
            if owner is not None:
                owner.setdefault("observation", {"results": []})["results"].append(result)
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
            "version": run.agent_commit or "unknown",
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


def _metrics(tokens_in: int | None, tokens_out: int | None, cost: float | None) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    if tokens_in is not None:
        metrics["prompt_tokens"] = tokens_in
    if tokens_out is not None:
        metrics["completion_tokens"] = tokens_out
    if cost is not None:
        metrics["cost_usd"] = cost
    return metrics


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
