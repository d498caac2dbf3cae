"""The pages as data: each page is one of these models, rendered by its template or answered as
JSON (docs/web.md). The report's own models (report/model.py) are reused where a page shows the
report's figures."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from benchyard.report.model import (
    CategoryDelta,
    Comparison,
    Resume,
    Summary,
)

Interval = tuple[float, float] | None


class WebModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Paging(WebModel):
    page: int = Field(description="1-based page number.")
    per_page: int
    total: int = Field(description="Items matching the filters, over all pages.")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def past_end(self) -> bool:
        """The page asked for is after the last page: it shows nothing."""
        return self.page > self.pages

    @computed_field  # type: ignore[prop-decorator]
    @property
    def first(self) -> int:
        """1-based position of the page's first item (0 when there is none)."""
        return (self.page - 1) * self.per_page + 1 if self.total and not self.past_end else 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def last(self) -> int:
        """1-based position of the page's last item (0 when there is none)."""
        return 0 if self.past_end else min(self.total, self.page * self.per_page)


# ---- runs -------------------------------------------------------------------------------------


class RunRow(WebModel):
    id: str
    status: str
    status_reason: str | None
    benchmark: str
    version: str
    benchmark_hash: str
    agent: str
    commit: str | None
    dirty: bool | None
    started_at: datetime
    finished_at: datetime | None
    duration_sec: float | None = Field(description="Wall time from start to end of the run.")
    planned: int
    finished: int = Field(description="Final attempts recorded so far.")
    passed: int
    counted: int
    errors: int
    timeouts: int
    accuracy: float | None
    accuracy_ci95: Interval = Field(description="Wilson score interval, 95%.")
    error_rate: float | None
    cost_usd: float | None
    judge_cost_usd: float | None
    attempt_sec: float = Field(description="Sum of the final attempts' durations.")
    parent_run_id: str | None
    rescored_from: str | None
    subset: bool = Field(description="Filters, a limit or a rerun: not the whole benchmark.")
    active: bool = Field(description="Queued or running.")


class RunFilterForm(WebModel):
    sort: str = "started"
    order: Literal["asc", "desc"] = "desc"
    benchmark: str = ""
    version: str = ""
    agent: str = ""
    commit: str = ""
    status: str = ""
    since: str = Field(default="", description="YYYY-MM-DD, inclusive.")
    until: str = Field(default="", description="YYYY-MM-DD, inclusive.")


class RunsPage(WebModel):
    filters: RunFilterForm
    benchmarks: list[str]
    agents: list[str]
    statuses: list[str]
    rows: list[RunRow]
    paging: Paging
    error: str | None = None


class Progress(WebModel):
    run_id: str
    status: str
    active: bool
    planned: int
    finished: int
    queued: int
    claimed: int
    cancelled: int
    passed: int
    failed: int
    errors: int
    timeouts: int
    stuck: int = Field(default=0, description="Claimed attempts the watchdog found stuck.")


class RunHeader(WebModel):
    id: str
    status: str
    status_reason: str | None
    benchmark: str
    version: str
    benchmark_hash: str
    benchmark_path: str
    agent: str
    agent_config: dict[str, Any]
    commit: str | None
    dirty: bool | None
    repo: str | None
    settings: dict[str, Any]
    benchyard_version: str
    host: str
    started_at: datetime
    finished_at: datetime | None
    parent_run_id: str | None
    rescored_from: str | None
    planned: int
    subset: bool
    resumes: list[Resume]


class CategoryRow(WebModel):
    category: str
    passed: int
    counted: int
    errors: int
    timeouts: int
    attempts: int
    raw: str
    accuracy: float | None
    accuracy_ci95: Interval


class CheckRow(WebModel):
    check_type: str
    passed: int
    total: int
    pass_rate: float | None
    pass_rate_ci95: Interval


class CheckBrief(WebModel):
    label: str
    check_type: str
    passed: bool


class AttemptRow(WebModel):
    id: str
    scenario_id: str
    category: str
    epoch: int
    try_number: int
    superseded: bool
    verdict: str
    score: float
    cause: str | None
    failure_kind: str | None
    claimed: bool = Field(description="A fault only the agent claimed (exit 75, 126, 127).")
    turns: int
    tokens_in: int
    tokens_out: int
    cost_usd: float | None
    judge_cost_usd: float | None
    duration_sec: float
    flags: list[str]
    checks: list[CheckBrief]


class AttemptFilterForm(WebModel):
    verdict: list[str] = Field(default_factory=list)
    category: str = ""
    flag: str = ""
    check: str = ""
    check_outcome: str = ""
    scenario: str = ""
    q: str = Field(default="", description="Full-text search (store/search.py).")
    sort: str = "scenario"
    order: Literal["asc", "desc"] = "asc"
    per_page: int = 50


class AttemptTable(WebModel):
    filters: AttemptFilterForm
    rows: list[AttemptRow]
    paging: Paging
    categories: list[str]
    check_types: list[str]
    flag_kinds: list[str]
    sort_keys: list[str]


class RunPage(WebModel):
    run: RunHeader
    progress: Progress
    summary: Summary
    categories: list[CategoryRow]
    checks: list[CheckRow]
    flags: dict[str, int] = Field(
        description="Attempts flagged for review, by kind (flaky: scenarios)."
    )
    failures: list[AttemptRow] = Field(description="The first failures, with their cause.")
    failure_total: int
    attempts: AttemptTable
    drawer: AttemptDetail | None = None
    merged: bool = Field(
        default=False,
        description="The figures are those of the run merged with the runs it re-ran (as "
        "`benchyard report --merged`); the attempts table stays this run's.",
    )
    merged_runs: list[str] = Field(
        default_factory=list, description="The runs merged, oldest first (when `merged`)."
    )
    can_cancel: bool
    can_rerun: bool
    can_rescore: bool


# ---- one attempt (the drawer) ------------------------------------------------------------------


class TryRow(WebModel):
    id: str
    try_number: int
    superseded: bool
    verdict: str
    failure_kind: str | None
    cause: str | None
    started_at: datetime
    duration_sec: float
    shown: bool = Field(description="The try this drawer shows.")


class EventView(WebModel):
    index: int
    kind: str
    role: str | None
    content: str
    content_cut: int = Field(description="Characters left out of `content`.")
    reasoning: str | None
    at: datetime | None
    offset_sec: float | None = Field(description="Seconds since the first event.")
    tokens_in: int | None
    tokens_out: int | None
    cost_usd: float | None
    ttft_sec: float | None
    latency_sec: float | None
    tool: str | None
    judge: bool
    model: str | None
    data: str | None = Field(description="The event's other data, as JSON.")


class Criterion(WebModel):
    number: int
    met: bool | None
    reason: str


class CheckDetail(WebModel):
    position: int
    label: str
    check_type: str
    passed: bool
    score: float
    weight: float
    threshold: float | None
    reason: str
    criteria: list[Criterion] = Field(description="The judge's verdict per criterion, if judged.")
    explanation: str | None = Field(description="The judge's explanation, if judged.")


class DiffLine(WebModel):
    kind: Literal["file", "hunk", "add", "del", "context"]
    text: str


class FixtureView(WebModel):
    dest: str
    src: str | None
    content: str | None
    hidden: bool = Field(description="A verification file: the agent never sees it.")
    href: str | None


class ScenarioView(WebModel):
    id: str
    category: str
    difficulty: str
    tags: list[str]
    description: str
    stimulus_kind: str
    system: str | None
    turns: list[str]
    fixtures: list[FixtureView]
    tools: list[str]
    checks: list[str]
    reference: str | None
    file: str
    line: int


class AttemptDetail(WebModel):
    attempt: AttemptRow
    run_id: str
    answer: str | None
    answers: list[str] | None
    scenario: ScenarioView | None
    scenario_note: str | None = Field(
        description="Why the scenario shown may differ, or is missing."
    )
    tries: list[TryRow]
    timeline: list[EventView]
    timeline_cut: int = Field(description="Events left out of the timeline.")
    checks: list[CheckDetail]
    answer_cut: int = Field(
        default=0,
        description="Characters of the answer left out here (all at /attempts/ID/answer).",
    )
    stdout: str | None = Field(description="The first characters of stdout (see stdout_cut).")
    stderr: str | None = Field(description="The first characters of stderr (see stderr_cut).")
    stdout_cut: int = Field(
        default=0, description="Characters of stdout left out here (all at /attempts/ID/stdout)."
    )
    stderr_cut: int = Field(
        default=0, description="Characters of stderr left out here (all at /attempts/ID/stderr)."
    )
    stdout_dropped_bytes: int
    stderr_dropped_bytes: int
    patch: list[DiffLine] | None
    patch_cut: int = Field(description="Lines of the patch left out.")
    previous_id: str | None = Field(
        default=None, description="The attempt before it in the run page's attempts table."
    )
    next_id: str | None = Field(
        default=None, description="The attempt after it in the run page's attempts table."
    )


# ---- compare ----------------------------------------------------------------------------------


class GridRow(WebModel):
    scenario_id: str
    epoch: int
    category: str
    verdicts: list[str | None]
    differs: bool


class ComparePage(WebModel):
    run_ids: list[str]
    runs: list[RunRow] = Field(description="The runs compared, baseline first.")
    choices: list[RunRow] = Field(description="Recent runs to pick from.")
    comparison: Comparison | None = Field(
        description="The library's comparison (report/compare.py) without its rows: they are in "
        "grid, a page at a time."
    )
    categories: dict[str, CategoryDelta] = Field(default_factory=dict)
    grid: list[GridRow] = Field(description="The rows of this page of the grid, flips first.")
    grid_total: int = Field(description="The rows `show` keeps, over all pages.")
    paging: Paging | None = Field(description="The grid's page; null with no comparison.")
    show: Literal["changed", "regressions", "all"] = Field(
        description="changed: the rows whose verdicts differ (the default); regressions: those a "
        "candidate made worse (pass to fail, or pass to error); all: every row."
    )
    differ_only: bool = Field(description="Whether unchanged rows are left out (show is not all).")
    allow_mismatch: bool
    error: str | None


class SideColumn(WebModel):
    run: RunRow
    detail: AttemptDetail | None = Field(
        description="The final try of the scenario's epoch in this run; null when it has none."
    )


class SidePage(WebModel):
    """One scenario's epoch in 2 or 3 runs, side by side: answers, checks and trajectories."""

    scenario_id: str
    epoch: int
    columns: list[SideColumn]


# ---- benchmarks -------------------------------------------------------------------------------


class BenchmarkRow(WebModel):
    name: str
    version: str | None
    content_hash: str | None
    path: str
    origin: str
    editable: bool
    scenarios: int | None
    problem: str | None
    runs: int


class ScenarioRow(WebModel):
    id: str
    category: str
    difficulty: str
    tags: list[str]
    stimulus: str
    checks: list[str]
    file: str
    line: int


class ChartPoint(WebModel):
    x: float
    y: float
    low: float
    high: float
    hollow: bool = Field(description="A subset of the benchmark (filters, limit, rerun).")
    title: str
    href: str | None


class ChartSeries(WebModel):
    name: str
    color: str
    paths: list[str] = Field(description="SVG path data of each unbroken stretch.")
    points: list[ChartPoint]


class ChartTick(WebModel):
    at: float
    label: str


class ChartMark(WebModel):
    x: float
    label: str


class Chart(WebModel):
    title: str
    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    y_ticks: list[ChartTick]
    x_ticks: list[ChartTick]
    series: list[ChartSeries]
    marks: list[ChartMark] = Field(description="Where the benchmark's content hash changed.")


class EvolutionPoint(WebModel):
    agent: str
    category: str | None
    key: str = Field(description="The run id, or the commit when grouped by commit.")
    run_ids: list[str]
    commit: str | None
    version: str
    benchmark_hash: str
    started_at: datetime
    subset: bool
    passed: int
    counted: int
    accuracy: float | None
    accuracy_ci95: Interval


class Evolution(WebModel):
    by: Literal["run", "commit"]
    agent: str
    agents: list[str]
    categories: list[str]
    points: list[EvolutionPoint]
    charts: list[Chart]


class BenchmarkPage(WebModel):
    benchmark: BenchmarkRow
    tab: Literal["scenarios", "history", "evolution"]
    scenarios: list[ScenarioRow]
    history: list[RunRow]
    evolution: Evolution | None
    saved: str | None = None


class BenchmarksPage(WebModel):
    rows: list[BenchmarkRow]


# ---- queue ------------------------------------------------------------------------------------


class QueueRunRow(WebModel):
    run: RunRow
    queued: int
    claimed: int
    done: int
    cancelled: int
    stuck: int = Field(default=0, description="Claimed attempts the watchdog found stuck.")


class QueuedAttemptRow(WebModel):
    id: int
    run_id: str
    scenario_id: str
    epoch: int
    state: str
    tries: int
    claims: int
    worker: str | None
    node: str | None = Field(
        default=None, description="The Ray node it runs on, once started there (Ray executor)."
    )
    lease_expires_at: datetime | None


class WorkerRow(WebModel):
    worker: str
    node: str | None
    pid: int | None
    held: int
    lease_expires_at: datetime | None
    lease_left_sec: float | None = Field(
        description="Seconds until the lease runs out; each heartbeat pushes it back."
    )
    nodes: dict[str, int] = Field(
        default_factory=dict,
        description="The nodes its attempts run on and how many on each (Ray executor).",
    )


class QueuePage(WebModel):
    runs: list[QueueRunRow]
    attempts: list[QueuedAttemptRow]
    workers: list[WorkerRow]
    benchmarks: list[str]
    agents: list[str]
    sandboxes: list[str]
    default_sandbox: str
    rescores: list[RunRow] = Field(
        default_factory=list,
        description="The latest rescores (`benchyard rescore`, run apart from the queue), newest "
        "first.",
    )
    message: str | None = None
    message_run: str | None = Field(
        default=None, description="The run the message is about (a rescore's new run)."
    )


class ActionResult(WebModel):
    ok: bool
    message: str
    run_id: str | None = None


# ---- scenario editing -------------------------------------------------------------------------


class FieldProblemView(WebModel):
    path: str
    line: int | None
    line_of: Literal["file", "field"] = Field(
        description="Whether `line` counts in the scenario file or in the field's own text."
    )
    message: str


class FieldEditor(WebModel):
    name: str
    text: str
    problems: list[FieldProblemView]


class EditPage(WebModel):
    benchmark: str
    scenario_id: str
    file: str
    file_sha256: str
    fields: list[FieldEditor]
    new_field_name: str = ""
    new_field_text: str = ""
    new_field_problems: list[FieldProblemView] = Field(default_factory=list)
    problems: list[FieldProblemView] = Field(
        default_factory=list, description="Problems that name no field of this scenario."
    )
    error: str | None = None


RunPage.model_rebuild()
