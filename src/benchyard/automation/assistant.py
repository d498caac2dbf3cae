"""What an assistant may do through the MCP server (`benchyard mcp`): read benchmarks, scenarios,
runs and reports, compare runs, queue a run of a declared agent, and propose benchmark changes.

The rules an assistant is held to live here, not in the server:

- benchmarks are named, never given as paths: those on disk under the workspace's directories
  and the built-in library;
- a run is queued only for an agent declared in benchyard.yaml, or the oracle (no inline command),
  never unsandboxed; a `benchyard worker` executes it;
- a benchmark is never written: `create_benchmark` and `update_benchmark` make a pending proposal
  (automation/proposals.py) that a person accepts or rejects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchyard.automation import proposals as proposal_store
from benchyard.benchmarks.loader import load_benchmark
from benchyard.config import ProjectConfig
from benchyard.errors import BenchyardError
from benchyard.spec.loader import Benchmark
from benchyard.store.records import RunRecord
from benchyard.store.store import Store

MAX_RUNS = 200
MAX_SCENARIOS_LISTED = 2000


class AssistantRefused(BenchyardError):
    """What an assistant asked for and may not have."""


@dataclass(frozen=True)
class Workspace:
    """The store, the project configuration, and the directories of benchmarks on disk (a new
    benchmark is proposed in the first)."""

    store: Store
    config: ProjectConfig
    benchmark_dirs: tuple[Path, ...] = field(default_factory=lambda: (Path.cwd(),))
    read_only: bool = False
    agent_repo: Path = field(default_factory=Path.cwd)
    who: str = "an assistant (MCP)"


# ---- benchmarks and scenarios ------------------------------------------------------------------


def known_benchmarks(workspace: Workspace) -> dict[str, tuple[Path, str]]:
    """Name -> (directory, origin): benchmarks on disk first, then the built-in library."""
    from benchyard.spec.library import builtin_benchmarks, local_benchmarks
    from benchyard.spec.source_files import SpecSyntaxError, read_yaml

    found: dict[str, tuple[Path, str]] = {}
    for directory in workspace.benchmark_dirs:
        for path in local_benchmarks(directory):
            try:
                data = read_yaml(path / "benchmark.yaml").data
            except (SpecSyntaxError, OSError):
                continue
            name = data.get("name") if isinstance(data, dict) else None
            if isinstance(name, str):
                found.setdefault(name, (path.resolve(), "local"))
    for name, path in builtin_benchmarks().items():
        found.setdefault(name, (path, "built-in"))
    return found


def benchmark_by_name(workspace: Workspace, name: str) -> Benchmark:
    known = known_benchmarks(workspace)
    if name not in known:
        listed = ", ".join(sorted(known)) or "none"
        raise AssistantRefused(f"no benchmark named '{name}' (known: {listed})")
    return load_benchmark(known[name][0])


def list_benchmarks(workspace: Workspace) -> list[dict[str, Any]]:
    listed = []
    for name, (path, origin) in sorted(known_benchmarks(workspace).items()):
        entry: dict[str, Any] = {"name": name, "origin": origin, "editable": origin == "local"}
        try:
            loaded = load_benchmark(path)
        except BenchyardError as error:
            entry |= {"valid": False, "problem": str(error).splitlines()[0]}
        else:
            entry |= {
                "valid": True,
                "version": loaded.version,
                "hash": loaded.content_hash,
                "description": loaded.manifest.description,
                "scenarios": len(loaded.scenarios),
                "categories": sorted({s.category for s in loaded.scenarios}),
            }
        listed.append(entry)
    return listed


def list_scenarios(
    workspace: Workspace, benchmark: str, filters: list[str] | None = None
) -> list[dict[str, Any]]:
    from benchyard.spec.filters import select_scenarios

    loaded = benchmark_by_name(workspace, benchmark)
    chosen = select_scenarios(loaded.scenarios, tuple(filters or ()))
    return [
        {
            "id": s.id,
            "category": s.category,
            "tags": list(s.tags),
            "difficulty": s.difficulty,
            "description": s.description,
            "checks": [check.type for check in s.checks],
            "has_reference": s.reference is not None or s.reference_change is not None,
        }
        for s in chosen[:MAX_SCENARIOS_LISTED]
    ]


def show_scenario(workspace: Workspace, benchmark: str, scenario_id: str) -> dict[str, Any]:
    """A scenario as its file writes it (the YAML lines, or its JSONL line) and as data."""
    loaded = benchmark_by_name(workspace, benchmark)
    found = next((s for s in loaded.scenarios if s.id == scenario_id), None)
    if found is None:
        raise AssistantRefused(f"{benchmark} has no scenario '{scenario_id}'")
    location = loaded.locations[scenario_id]
    return {
        "benchmark": benchmark,
        "file": location.file.resolve().relative_to(loaded.root).as_posix(),
        "line": location.line,
        "scenario": found.model_dump(mode="json", exclude_defaults=True),
    }


# ---- runs, reports, comparisons ----------------------------------------------------------------


def run_entry(run: RunRecord, counts: dict[str, int]) -> dict[str, Any]:
    return {
        "id": run.id,
        "status": run.status,
        "benchmark": {
            "name": run.benchmark_name,
            "version": run.benchmark_version,
            "hash": run.benchmark_hash,
        },
        "agent": {"name": run.agent_name, "commit": run.agent_commit, "dirty": run.agent_dirty},
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "planned_attempts": run.planned_attempts,
        "verdicts": counts,
        "parent_run_id": run.parent_run_id,
    }


def list_runs(
    workspace: Workspace, limit: int = 20, benchmark: str | None = None
) -> list[dict[str, Any]]:
    store = workspace.store
    listed = store.list_runs(max(1, min(limit, MAX_RUNS)), benchmark)
    counts = store.verdict_counts([run.id for run in listed])
    return [run_entry(run, counts.get(run.id, {})) for run in listed]


def read_report(workspace: Workspace, run: str, merged: bool = False) -> dict[str, Any]:
    from benchyard.report.build import build_report

    found = workspace.store.resolve_run(run)
    if found.kind != "benchmark":
        raise AssistantRefused(f"run {found.id[:8]} is a {found.kind} run, without a report")
    payload: dict[str, Any] = build_report(workspace.store, found, merged=merged).model_dump(
        mode="json"
    )
    return payload


def compare(
    workspace: Workspace,
    baseline: str,
    runs: list[str],
    *,
    alpha: float = 0.05,
    merged: bool = True,
    allow_version_mismatch: bool = False,
) -> dict[str, Any]:
    from benchyard.report.compare import compare_runs
    from benchyard.report.compare_render import verdict_line

    if not runs:
        raise AssistantRefused("give at least one run to compare with the baseline")
    resolved = [workspace.store.resolve_run(ref) for ref in [baseline, *runs]]
    comparison = compare_runs(
        workspace.store,
        resolved,
        alpha=alpha,
        merged=merged,
        allow_version_mismatch=allow_version_mismatch,
    )
    payload: dict[str, Any] = comparison.model_dump(mode="json")
    payload["headlines"] = [verdict_line(c, alpha) for c in comparison.candidates]
    payload["regression"] = any(c.regression for c in comparison.candidates)
    return payload


def enqueue_run(
    workspace: Workspace,
    benchmark: str,
    agent: str,
    *,
    filters: list[str] | None = None,
    epochs: int = 1,
    limit: int | None = None,
    timeout_sec: float | None = None,
    sandbox: str | None = None,
    network: str | None = None,
    allow_network: bool = False,
) -> dict[str, Any]:
    """Queue a run as `benchyard run BENCHMARK --agent AGENT --enqueue` does: only an agent
    declared in benchyard.yaml (or the oracle), never unsandboxed; `network` as `--network`
    (`allow_network`: its alias of `all`)."""
    from benchyard.runner.api import enqueue, judge_for, plan_run, resolve_agent
    from benchyard.runner.execute import RunSettings
    from benchyard.sandbox.network import NetworkSpecError, requested_network
    from benchyard.sandbox.registry import default_sandbox_name

    _writable(workspace)
    declared = {*workspace.config.agents, "oracle"}
    if agent not in declared:
        raise AssistantRefused(
            f"no agent named '{agent}' in benchyard.yaml (declared: {', '.join(sorted(declared))});"
            " an assistant runs only declared agents"
        )
    if sandbox == "none":
        raise AssistantRefused("an assistant cannot run a benchmark unsandboxed (--sandbox none)")
    if not 1 <= epochs <= 100:
        raise AssistantRefused("epochs: 1 to 100")
    try:
        asked_network = requested_network(network, allow_network)
    except NetworkSpecError as error:
        raise AssistantRefused(f"network: {error}") from None
    chosen = resolve_agent(workspace.config, agent, None)
    loaded = benchmark_by_name(workspace, benchmark)
    settings = RunSettings(
        epochs=epochs,
        limit=limit,
        filters=tuple(filters or ()),
        timeout_sec=timeout_sec,
        judge=judge_for(workspace.config),
        sandbox=sandbox or default_sandbox_name(),
        allow_unsandboxed=False,
        network=asked_network,
    )
    plan = plan_run(loaded, settings)
    run = enqueue(workspace.store, loaded, chosen, plan, settings, agent_repo=workspace.agent_repo)
    return {
        "run_id": run.id,
        "planned_attempts": run.planned_attempts,
        "status": run.status,
        "message": f"queued run {run.id} ({run.planned_attempts} attempts); a benchyard worker "
        "executes it",
    }


# ---- proposals ---------------------------------------------------------------------------------


def proposal_view(proposal: proposal_store.Proposal, with_diff: bool = True) -> dict[str, Any]:
    view: dict[str, Any] = {
        "id": proposal.id,
        "kind": proposal.kind,
        "status": proposal.status,
        "benchmark": proposal.benchmark_name,
        "title": proposal.title,
        "rationale": proposal.rationale,
        "summary": proposal.summary,
        "created_at": proposal.created_at.isoformat(),
        "created_by": proposal.created_by,
        "decided_at": proposal.decided_at.isoformat() if proposal.decided_at else None,
        "decided_by": proposal.decided_by,
        "decision_note": proposal.decision_note,
    }
    if with_diff:
        view["diff"] = proposal.diff()
    return view


def _pending_view(proposal: proposal_store.Proposal) -> dict[str, Any]:
    view = proposal_view(proposal)
    view["message"] = (
        f"proposal {proposal.id} is pending: nothing is written until a person accepts it "
        f"(`benchyard proposals accept {proposal.id[:8]}`, or the web UI's /proposals page)"
    )
    return view


def create_benchmark(
    workspace: Workspace,
    *,
    name: str,
    version: str,
    scenarios: list[Any],
    description: str = "",
    files: dict[str, str] | None = None,
    title: str = "",
    rationale: str = "",
) -> dict[str, Any]:
    _writable(workspace)
    if name in known_benchmarks(workspace):
        raise AssistantRefused(f"a benchmark named '{name}' exists: propose an update of it")
    proposal = proposal_store.propose_create(
        workspace.store,
        workspace.benchmark_dirs[0],
        name=name,
        version=version,
        description=description,
        scenarios=scenarios,
        files=files,
        title=title,
        rationale=rationale,
        created_by=workspace.who,
    )
    return _pending_view(proposal)


def update_benchmark(
    workspace: Workspace,
    benchmark: str,
    *,
    scenarios: list[Any] | None = None,
    remove: list[str] | None = None,
    files: dict[str, str] | None = None,
    version: str | None = None,
    scenario_file: str | None = None,
    title: str = "",
    rationale: str = "",
) -> dict[str, Any]:
    _writable(workspace)
    known = known_benchmarks(workspace)
    if name_origin := known.get(benchmark):
        if name_origin[1] != "local":
            raise AssistantRefused(
                f"'{benchmark}' is built into benchyard and cannot change: propose a new "
                "benchmark instead (benchmark_create)"
            )
    else:
        raise AssistantRefused(f"no benchmark named '{benchmark}' on disk")
    proposal = proposal_store.propose_update(
        workspace.store,
        name_origin[0],
        scenarios=scenarios or [],
        remove=remove or [],
        files=files,
        version=version,
        scenario_file=scenario_file,
        title=title,
        rationale=rationale,
        created_by=workspace.who,
    )
    return _pending_view(proposal)


def list_proposals(workspace: Workspace, status: str | None = None) -> list[dict[str, Any]]:
    return [
        proposal_view(p, with_diff=False)
        for p in proposal_store.list_proposals(workspace.store, status)
    ]


def show_proposal(workspace: Workspace, proposal: str) -> dict[str, Any]:
    return proposal_view(proposal_store.get_proposal(workspace.store, proposal))


def _writable(workspace: Workspace) -> None:
    if workspace.read_only:
        raise AssistantRefused("this MCP server is read-only (--read-only)")
