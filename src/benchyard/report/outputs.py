"""What the commands without a report of their own print with `--format json`: one pydantic model
per command, in the report's conventions (docs/json-output.md), each with a `schema_version` and a
JSON Schema file shipped in the package (report/schemas/, see report/output_schemas.py). The
builders here turn the library's results into these models; the commands only dump them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from benchyard.report.model import BenchmarkIdentity, ReportModel, RunFigures, RunReport

if TYPE_CHECKING:
    from benchyard.formats.swebench.evaluation import InstanceReport
    from benchyard.interop.inspect_log import Imported
    from benchyard.report.gate import GateFailure
    from benchyard.runner.api import VerifyOutcome
    from benchyard.runner.rescore import RescoreOutcome
    from benchyard.spec.loader import Benchmark
    from benchyard.spec.problems import Problem
    from benchyard.store.gc import GcOutcome
    from benchyard.store.records import RunRecord

OUTPUT_SCHEMA_VERSION = "1"
"""The version of every schema in this module: it changes when a field is removed or changes
meaning (adding a field does not), as the report's does."""


class Output(ReportModel):
    schema_version: str = Field(
        default=OUTPUT_SCHEMA_VERSION,
        description="Changes when a field is removed or changes meaning (not when one is added).",
    )


class ProblemView(ReportModel):
    """One problem of a benchmark, as `validate` prints it (`file:line: field: message`)."""

    file: str
    line: int | None
    field: str
    message: str


class ValidationOutput(Output):
    """`benchyard validate PATH --format json`."""

    path: str = Field(description="The benchmark as given: a directory or a built-in name.")
    valid: bool
    benchmark: BenchmarkIdentity | None = Field(description="Null when it has problems.")
    scenarios: int | None = Field(description="How many scenarios; null when it has problems.")
    categories: list[str] = Field(description="Its categories, sorted (empty when invalid).")
    problems: list[ProblemView] = Field(description="Every problem, with file, line and field.")


class ReferenceCheck(ReportModel):
    """One scenario's reference, graded by `verify`."""

    scenario_id: str
    ok: bool = Field(description="The reference passes the scenario's checks.")
    reason: str
    executed: bool = Field(description="Its code ran in the sandbox (a coding scenario).")
    derived: bool = Field(description="Its `derive` program worked the answer out again.")
    decoys_rejected: int = Field(description="Known-wrong answers that failed, as they must.")
    haystack: bool = Field(description="Its long text was regenerated from its seed.")


class VerifyOutput(Output):
    """`benchyard verify BENCHMARK --format json`."""

    path: str = Field(description="The benchmark as given: a directory or a built-in name.")
    valid: bool = Field(description="False when the benchmark has problems (none verified).")
    benchmark: BenchmarkIdentity | None
    verified: int = Field(description="Scenarios whose reference was graded.")
    broken: int = Field(description="References that fail their own checks (exit 1 if any).")
    references: list[ReferenceCheck]
    problems: list[ProblemView] = Field(description="The benchmark's problems, when invalid.")


class GateOutcome(ReportModel):
    """Why `run` or `rerun` exits non-zero (docs/exit-codes.md)."""

    exit_code: int = Field(description="1: under --fail-under; 3: nothing graded or started.")
    message: str


class RunOutcome(Output):
    """`benchyard run ... --format json` and `benchyard rerun ... --format json`."""

    run_id: str
    status: str = Field(description="queued (with --enqueue), finished, failed, cancelled, ...")
    queued: bool = Field(description="The run was queued for a worker (--enqueue), not executed.")
    planned_attempts: int
    parent_run_id: str | None = Field(description="The run a rerun re-ran.")
    report: RunReport | None = Field(
        description="The run's report, as `benchyard report RUN --format json` prints it; null "
        "for a queued run."
    )
    gate: GateOutcome | None = Field(
        description="The gate the run failed (the command's exit status then), null when none."
    )


class ScenarioEpoch(ReportModel):
    scenario_id: str
    epoch: int


class RescoreOutput(Output):
    """`benchyard rescore RUN --format json`."""

    rescored_from: str = Field(description="The run whose recorded outputs were graded again.")
    run_id: str = Field(description="The new run.")
    status: str
    regraded: int = Field(description="Attempts graded again.")
    copied: int = Field(description="Attempts without an answer to grade, kept as they were.")
    now_pass: list[ScenarioEpoch]
    no_longer_pass: list[ScenarioEpoch]
    report: RunReport = Field(description="The new run's report.")


class GcOutput(Output):
    """`benchyard gc ... --format json`."""

    dry_run: bool = Field(description="Nothing was dropped; the figures say what would be.")
    runs: list[str] = Field(description="The runs collected (or that would be), by id.")
    attempts: int = Field(description="Their tries that held outputs, trajectories or patches.")
    stored_bytes: int = Field(description="What that evidence took in the store, compressed.")
    vacuumed: bool = Field(description="A SQLite store was compacted after.")


class PresetEntry(ReportModel):
    """One agent preset (docs/agents.md)."""

    kind: str = Field(description="Its `kind:` in benchyard.yaml.")
    package: str
    version: str = Field(description="The pinned version a run installs and records.")
    installer: str = Field(description="pip or npm.")
    installed: bool
    path: str | None = Field(description="Where it is installed; null when it is not.")


class AgentsOutput(Output):
    """`benchyard agents list --format json`: the agent kinds and the presets."""

    kinds: list[str] = Field(description="The other kinds `kind:` takes (command, openai, ...).")
    presets: list[PresetEntry]


class AgentInstalled(Output):
    """`benchyard agents install NAME --format json`."""

    kind: str
    package: str
    version: str
    path: str = Field(description="Where it is installed.")
    installed_now: bool = Field(description="False when it was installed already.")


class WrittenFile(ReportModel):
    path: str
    action: Literal["wrote", "kept", "added"] = Field(
        description="wrote: a new file; kept: it was there (untouched); added: a line appended."
    )


class InitOutput(Output):
    """`benchyard init [DIRECTORY] --format json`."""

    directory: str
    files: list[WrittenFile] = Field(description="benchyard.yaml, agent.py and .gitignore.")
    next: str = Field(description="The command to try next.")


class ImportOutput(Output):
    """`benchyard import FORMAT SOURCE --format json`."""

    path: str = Field(description="The benchmark directory written.")
    benchmark: BenchmarkIdentity
    scenarios: int
    source: str
    provenance: dict[str, Any] = Field(
        description="format, format_version, source, source_sha256, options (docs/importers.md)."
    )


class ImportRunOutput(Output):
    """`benchyard import-run LOG --format json`."""

    run_id: str
    log: str
    attempts: int = Field(description="Samples imported, one attempt each.")
    benchmark: BenchmarkIdentity
    agent_name: str
    unknown: list[str] = Field(description="Sample ids that are not scenarios of the benchmark.")
    started_at: datetime = Field(description="The log's start time, kept by the run.")


class PatchGrade(ReportModel):
    """One instance's grade: the official report's per-instance fields, and its summary."""

    instance_id: str
    patch_is_None: bool
    patch_exists: bool
    patch_successfully_applied: bool
    resolved: bool
    tests_status: dict[str, dict[str, list[str]]] = Field(
        description="FAIL_TO_PASS, PASS_TO_PASS (...): the tests in success and in failure."
    )
    infra_failure: bool | None = Field(description="5.x rules: the evaluation itself failed.")
    infra_failure_reason: str | None
    summary: str


class GradePatchesOutput(Output):
    """`benchyard grade-patches INSTANCES PREDICTIONS --format json`."""

    rules: str = Field(description="The swebench release whose grading rules applied.")
    report_file: str = Field(description="Where the official per-instance report was written.")
    graded: int
    resolved: int
    applied: int = Field(description="Patches that applied.")
    invalid: int = Field(description="Evaluations that failed before any test ran.")
    instances: list[PatchGrade]


class CancelOutput(Output):
    """`benchyard cancel RUN --format json`."""

    run_id: str
    kept: int = Field(description="Finished attempts kept.")
    dropped: int = Field(description="Queued or running attempts dropped.")


class ProviderStatus(ReportModel):
    name: str
    valid: bool = Field(description="False when benchyard.yaml's entry cannot be read.")
    up: bool
    base_url: str | None
    latency_sec: float | None
    models: list[str] = Field(description="Every model it serves (the table shows 8).")
    problem: str | None


class AgentModelMissing(ReportModel):
    """An `openai` agent whose provider is up but does not list its model."""

    name: str
    provider: str
    model: str | None


class BenchmarkStatus(ReportModel):
    label: str = Field(description="The built-in name, or the path of a local benchmark.")
    valid: bool
    name: str | None
    version: str | None
    scenarios: int | None
    profiles: dict[str, int] = Field(description="Scenarios in each profile.")
    problems: int | None = Field(description="How many, when it is not valid.")


class StatusOutput(Output):
    """`benchyard status --format json`."""

    providers: list[ProviderStatus]
    agents_missing_models: list[AgentModelMissing]
    benchmarks: list[BenchmarkStatus]
    down: list[str] = Field(description="Providers down or invalid: the command exits 3.")


class HistoryEntry(RunFigures):
    """One run of `benchyard history BENCHMARK --format json` (an array of them, oldest first):
    the figures a comparison gives each run (docs/report-schema.md#the-comparison-json)."""

    schema_version: str = Field(
        default=OUTPUT_SCHEMA_VERSION,
        description="Changes when a field is removed or changes meaning (not when one is added).",
    )


def history_entries(points: Sequence[RunFigures]) -> list[HistoryEntry]:
    return [HistoryEntry(**point.model_dump()) for point in points]


def problem_views(problems: Sequence[Problem]) -> list[ProblemView]:
    return [
        ProblemView(file=p.file, line=p.line, field=p.field, message=p.message) for p in problems
    ]


def benchmark_identity(benchmark: Benchmark) -> BenchmarkIdentity:
    return BenchmarkIdentity(
        name=benchmark.name, version=benchmark.version, hash=benchmark.content_hash
    )


def validation_output(path: str) -> ValidationOutput:
    """The benchmark at `path` checked: its identity, or every problem it has. A path that is no
    benchmark at all raises, as `load_benchmark` does."""
    from benchyard.benchmarks.loader import load_benchmark
    from benchyard.spec.problems import BenchmarkInvalid

    try:
        benchmark = load_benchmark(path)
    except BenchmarkInvalid as invalid:
        return ValidationOutput(
            path=path,
            valid=False,
            benchmark=None,
            scenarios=None,
            categories=[],
            problems=problem_views(invalid.problems),
        )
    return ValidationOutput(
        path=path,
        valid=True,
        benchmark=benchmark_identity(benchmark),
        scenarios=len(benchmark.scenarios),
        categories=sorted({s.category for s in benchmark.scenarios}),
        problems=[],
    )


def verify_output(
    path: str,
    benchmark: Benchmark | None,
    outcomes: Sequence[VerifyOutcome],
    problems: Sequence[Problem] = (),
) -> VerifyOutput:
    return VerifyOutput(
        path=path,
        valid=benchmark is not None,
        benchmark=None if benchmark is None else benchmark_identity(benchmark),
        verified=len(outcomes),
        broken=sum(1 for outcome in outcomes if not outcome.ok),
        references=[
            ReferenceCheck(
                scenario_id=o.scenario_id,
                ok=o.ok,
                reason=o.reason,
                executed=o.executed,
                derived=o.derived,
                decoys_rejected=o.decoys_rejected,
                haystack=o.haystack,
            )
            for o in outcomes
        ],
        problems=problem_views(problems),
    )


def run_outcome(
    run: RunRecord, report: RunReport | None, failure: GateFailure | None = None
) -> RunOutcome:
    return RunOutcome(
        run_id=run.id,
        status=run.status,
        queued=report is None,
        planned_attempts=run.planned_attempts,
        parent_run_id=run.parent_run_id,
        report=report,
        gate=None
        if failure is None
        else GateOutcome(exit_code=failure.exit_code, message=failure.message),
    )


def rescore_output(
    original: RunRecord, outcome: RescoreOutcome, report: RunReport
) -> RescoreOutput:
    return RescoreOutput(
        rescored_from=original.id,
        run_id=outcome.run.id,
        status=outcome.run.status,
        regraded=outcome.regraded,
        copied=outcome.copied,
        now_pass=[ScenarioEpoch(scenario_id=s, epoch=e) for s, e in outcome.to_pass],
        no_longer_pass=[ScenarioEpoch(scenario_id=s, epoch=e) for s, e in outcome.to_fail],
        report=report,
    )


def gc_output(outcome: GcOutcome, dry_run: bool) -> GcOutput:
    return GcOutput(
        dry_run=dry_run,
        runs=list(outcome.runs),
        attempts=outcome.attempts,
        stored_bytes=outcome.stored_bytes,
        vacuumed=outcome.vacuumed,
    )


def import_output(
    target: Path, source: Path, benchmark: Benchmark, provenance: dict[str, Any]
) -> ImportOutput:
    return ImportOutput(
        path=str(target),
        benchmark=benchmark_identity(benchmark),
        scenarios=len(benchmark.scenarios),
        source=str(source),
        provenance=provenance,
    )


def import_run_output(log: Path, imported: Imported) -> ImportRunOutput:
    run = imported.run
    return ImportRunOutput(
        run_id=run.id,
        log=str(log),
        attempts=imported.attempts,
        benchmark=BenchmarkIdentity(
            name=run.benchmark_name, version=run.benchmark_version, hash=run.benchmark_hash
        ),
        agent_name=run.agent_name,
        unknown=list(imported.unknown),
        started_at=run.started_at,
    )


def grade_patches_output(
    reports: Sequence[InstanceReport], rules: str, report_file: Path
) -> GradePatchesOutput:
    grades = []
    for report in reports:
        official = report.official()
        grades.append(
            PatchGrade(
                instance_id=report.instance_id,
                patch_is_None=official["patch_is_None"],
                patch_exists=official["patch_exists"],
                patch_successfully_applied=official["patch_successfully_applied"],
                resolved=official["resolved"],
                tests_status=official["tests_status"],
                infra_failure=official.get("infra_failure"),
                infra_failure_reason=official.get("infra_failure_reason"),
                summary=report.summary(),
            )
        )
    return GradePatchesOutput(
        rules=rules,
        report_file=str(report_file),
        graded=len(grades),
        resolved=sum(g.resolved for g in grades),
        applied=sum(g.patch_successfully_applied for g in grades),
        invalid=sum(bool(g.infra_failure) for g in grades),
        instances=grades,
    )
