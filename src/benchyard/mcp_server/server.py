"""The MCP server: one tool per thing an assistant may do, each a thin call into
automation/assistant.py run in a worker thread (the store and the loader block). A refusal or
an invalid proposal comes back as the tool's error, with the loader's messages (file, line,
field) for a proposal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from anyio import to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from benchyard.automation import assistant
from benchyard.automation.assistant import Workspace
from benchyard.errors import BenchyardError

T = TypeVar("T")

INSTRUCTIONS = """\
benchyard runs benchmarks against AI agents and records every run. Use these tools to read
benchmarks, scenarios, runs and reports, to compare runs (flips first; a McNemar test says whether
a change is signal or noise), and to queue a run of an agent declared in benchyard.yaml (a
benchyard worker executes it). benchmark_create and benchmark_update never write a benchmark: they
make a proposal, validated by benchyard's loader, that stays pending until a person accepts it.
A scenario is a mapping as the benchmark format writes it: id, category, stimulus, checks,
reference, fixtures, tools (see scenario_show for a scenario of the benchmark as an example)."""


async def _call(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    def run() -> T:
        return function(*args, **kwargs)

    try:
        return await to_thread.run_sync(run)
    except BenchyardError as error:
        raise ToolError(str(error)) from None


def build_server(workspace: Workspace) -> MCPServer:
    """The server with its tools; a read-only workspace gets no tool that changes anything."""
    from benchyard import __version__

    server: MCPServer = MCPServer(
        "benchyard", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )

    @server.tool()
    async def benchmarks_list() -> dict[str, Any]:
        """The benchmarks on disk and in the built-in library: name, version, content hash,
        scenario count, categories, and whether it can be changed by a proposal (editable)."""
        return {"benchmarks": await _call(assistant.list_benchmarks, workspace)}

    @server.tool()
    async def scenarios_list(
        benchmark: Annotated[str, Field(description="A benchmark's name.")],
        filters: Annotated[
            list[str] | None,
            Field(description="category:X, tag:X, id:GLOB, difficulty:X, as `run --filter`."),
        ] = None,
    ) -> dict[str, Any]:
        """A benchmark's scenarios: id, category, tags, difficulty, description, check types."""
        found = await _call(assistant.list_scenarios, workspace, benchmark, filters)
        return {"benchmark": benchmark, "scenarios": found}

    @server.tool()
    async def scenario_show(
        benchmark: Annotated[str, Field(description="A benchmark's name.")],
        scenario_id: Annotated[str, Field(description="A scenario id of that benchmark.")],
    ) -> dict[str, Any]:
        """One scenario in full, with the file and line it is written at."""
        return await _call(assistant.show_scenario, workspace, benchmark, scenario_id)

    @server.tool()
    async def runs_list(
        limit: Annotated[int, Field(ge=1, le=200)] = 20,
        benchmark: Annotated[str | None, Field(description="Only runs of this benchmark.")] = None,
    ) -> dict[str, Any]:
        """Runs, newest first, with their status, agent, commit and verdict counts."""
        return {"runs": await _call(assistant.list_runs, workspace, limit, benchmark)}

    @server.tool()
    async def report_read(
        run: Annotated[str, Field(description="A run id, a unique prefix, latest or latest~N.")],
        merged: Annotated[
            bool, Field(description="Merge the run with the runs it re-ran.")
        ] = False,
    ) -> dict[str, Any]:
        """A run's report (docs/report-schema.md): accuracy with its 95% interval, errors,
        per-category counts, check pass rates, every failure with its cause, review flags."""
        return await _call(assistant.read_report, workspace, run, merged)

    @server.tool()
    async def runs_compare(
        baseline: Annotated[str, Field(description="The baseline run.")],
        run: Annotated[str, Field(description="The run to compare with it.")],
        alpha: Annotated[float, Field(gt=0, lt=1)] = 0.05,
        merged: bool = True,  # a rerun merged with the run it re-ran, as `benchyard compare`
        allow_version_mismatch: bool = False,
    ) -> dict[str, Any]:
        """Compare two runs as `benchyard compare` does: paired flips, the accuracy delta with
        its interval, the exact McNemar p-value, errors judged apart; `regression` is what
        `--fail-on-regression` fails on."""
        return await _call(
            assistant.compare,
            workspace,
            baseline,
            [run],
            alpha=alpha,
            merged=merged,
            allow_version_mismatch=allow_version_mismatch,
        )

    @server.tool()
    async def proposals_list(
        status: Annotated[str | None, Field(description="pending, accepted or rejected.")] = None,
    ) -> dict[str, Any]:
        """Proposals of benchmark changes and what became of them."""
        return {"proposals": await _call(assistant.list_proposals, workspace, status)}

    @server.tool()
    async def proposal_show(
        proposal: Annotated[str, Field(description="A proposal id or unique prefix.")],
    ) -> dict[str, Any]:
        """A proposal with its diff and its status (pending until a person decides)."""
        return await _call(assistant.show_proposal, workspace, proposal)

    if workspace.read_only:
        return server

    @server.tool()
    async def run_enqueue(
        benchmark: Annotated[str, Field(description="A benchmark's name.")],
        agent: Annotated[
            str, Field(description="An agent declared in benchyard.yaml, or 'oracle'.")
        ],
        filters: Annotated[list[str] | None, Field(description="As `run --filter`.")] = None,
        epochs: Annotated[int, Field(ge=1, le=100)] = 1,
        limit: Annotated[int | None, Field(ge=1)] = None,
        timeout_sec: Annotated[float | None, Field(gt=0)] = None,
        sandbox: Annotated[str | None, Field(description="bwrap or docker.")] = None,
        network: Annotated[
            str | None,
            Field(
                description="As `run --network`: none, bridge (the default: its model only), all "
                "(the host's network) or HOST:PORT,... (its model and those; never the store)."
            ),
        ] = None,
        allow_network: Annotated[
            bool, Field(description="An alias of network 'all', as before `network`.")
        ] = False,
    ) -> dict[str, Any]:
        """Queue a run of a declared agent; a `benchyard worker` executes it. Returns the run id
        to follow with runs_list and report_read."""
        return await _call(
            assistant.enqueue_run,
            workspace,
            benchmark,
            agent,
            filters=filters,
            epochs=epochs,
            limit=limit,
            timeout_sec=timeout_sec,
            sandbox=sandbox,
            network=network,
            allow_network=allow_network,
        )

    @server.tool()
    async def benchmark_create(
        name: Annotated[str, Field(description="The new benchmark's name.")],
        version: Annotated[str, Field(description="Its version label, e.g. 1.0.0.")],
        scenarios: Annotated[
            list[dict[str, Any]], Field(description="Its scenarios, as the format writes them.")
        ],
        description: str = "",
        files: Annotated[
            dict[str, str] | None,
            Field(description="Fixture files by path relative to the benchmark, with their text."),
        ] = None,
        title: Annotated[str, Field(description="One line for the person who decides.")] = "",
        rationale: Annotated[str, Field(description="Why these scenarios.")] = "",
    ) -> dict[str, Any]:
        """Propose a new benchmark. Nothing is written until a person accepts the proposal;
        an invalid one is refused with the loader's problems (file, line, field)."""
        return await _call(
            assistant.create_benchmark,
            workspace,
            name=name,
            version=version,
            scenarios=scenarios,
            description=description,
            files=files,
            title=title,
            rationale=rationale,
        )

    @server.tool()
    async def benchmark_update(
        benchmark: Annotated[str, Field(description="A benchmark on disk, by name.")],
        scenarios: Annotated[
            list[dict[str, Any]] | None,
            Field(description="New scenarios (a new id) and changed ones (the id of one)."),
        ] = None,
        remove: Annotated[list[str] | None, Field(description="Ids of scenarios to drop.")] = None,
        files: Annotated[
            dict[str, str] | None,
            Field(description="Fixture files by path relative to the benchmark, with their text."),
        ] = None,
        version: Annotated[str | None, Field(description="A new version label.")] = None,
        scenario_file: Annotated[
            str | None, Field(description="Where new scenarios go (default: their category's).")
        ] = None,
        title: Annotated[str, Field(description="One line for the person who decides.")] = "",
        rationale: Annotated[str, Field(description="Why the change.")] = "",
    ) -> dict[str, Any]:
        """Propose changes to a benchmark. Nothing is written until a person accepts the
        proposal; an invalid one is refused with the loader's problems (file, line, field)."""
        return await _call(
            assistant.update_benchmark,
            workspace,
            benchmark,
            scenarios=scenarios,
            remove=remove,
            files=files,
            version=version,
            scenario_file=scenario_file,
            title=title,
            rationale=rationale,
        )

    return server
