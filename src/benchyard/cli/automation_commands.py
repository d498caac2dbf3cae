"""Commands of automation (docs/automation.md): `mcp`, `proposals`, `schedule`, `webhooks`. They
parse options and call benchyard.automation; nothing here decides anything."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.options import (
    AllowNetworkOption,
    AllowUnsandboxedOption,
    DbOption,
    ListFormatOption,
    NetworkOption,
    SandboxOption,
    check_list_format,
    network_mode,
)

if TYPE_CHECKING:
    from benchyard.automation.proposals import Proposal

proposals_app = typer.Typer(
    name="proposals",
    help="Benchmark changes an assistant proposed: list, show (with the diff), accept, reject.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
schedule_app = typer.Typer(
    name="schedule",
    help="Runs on a cron schedule, queued by `benchyard worker`: add, list, remove.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
webhooks_app = typer.Typer(
    name="webhooks",
    help="Signed events on runs: the webhooks of benchyard.yaml, their deliveries, a test event.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def dump_json(payload: Any) -> str:
    """A command's output model (or a list of them) as JSON (report/listing.py's dump_json)."""
    from benchyard.report.listing import dump_json as dump

    text: str = dump(payload)
    return text


def _when(moment: datetime | None) -> str:
    return "—" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


# ---- mcp ---------------------------------------------------------------------------------------


@handle_errors
def mcp(
    transport: Annotated[
        str, typer.Option("--transport", help="stdio (the default) or http (streamable HTTP).")
    ] = "stdio",
    host: Annotated[
        str, typer.Option("--host", help="http: the address to listen on (loopback by default).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", "-p", min=1, max=65535)] = 8766,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="BENCHYARD_MCP_TOKEN",
            help="http: the token every request must send as `Authorization: Bearer TOKEN` "
            "(default: a new one, printed at start).",
        ),
    ] = None,
    read_only: Annotated[
        bool,
        typer.Option("--read-only", help="Offer no tool that changes anything (queue, propose)."),
    ] = False,
    benchmarks: Annotated[
        list[Path] | None,
        typer.Option(
            "--benchmarks",
            help="Directories of benchmarks on disk (default: the current one; new benchmarks "
            "are proposed in the first); repeatable.",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Serve benchyard's tools to an assistant over the Model Context Protocol: list benchmarks,
    scenarios and runs, read reports, compare, queue runs of declared agents, and propose
    benchmark changes that wait for a person (benchyard proposals)."""
    from benchyard.automation.assistant import Workspace
    from benchyard.automation.webhook_config import register_webhook_secrets
    from benchyard.cli.context import load_project, open_store
    from benchyard.mcp_server.server import build_server
    from benchyard.runner.api import register_secrets

    if transport not in ("stdio", "http"):
        raise typer.BadParameter(f"'{transport}' is not stdio or http", param_hint="--transport")
    config = load_project()
    register_secrets(config)
    register_webhook_secrets(config.webhooks)
    store = open_store(db, config)
    workspace = Workspace(
        store=store,
        config=config,
        benchmark_dirs=tuple(path.resolve() for path in (benchmarks or [Path.cwd()])),
        read_only=read_only,
        agent_repo=Path.cwd(),
        who=f"an assistant over MCP ({transport})",
    )
    server = build_server(workspace)
    try:
        if transport == "stdio":
            server.run("stdio")
            return
        import uvicorn

        from benchyard.mcp_server.http import http_app
        from benchyard.web.tokens import new_token, token_hash

        made = None if token else new_token()  # every address needs one, loopback included
        app = http_app(server, host, token_hash(token or made or ""))
        shown = f"[{host}]" if ":" in host else host
        typer.echo(f"benchyard MCP server on http://{shown}:{port}/mcp", err=True)
        if made:
            typer.echo(f"  send `Authorization: Bearer {made}` (a new token each start)", err=True)
        uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False)
    finally:
        store.close()


# ---- proposals ---------------------------------------------------------------------------------


def _proposal_line(proposal: Proposal) -> str:
    summary = proposal.summary
    what = ", ".join(
        f"{len(summary.get(key, []))} {key}"
        for key in ("added", "changed", "removed")
        if summary.get(key)
    )
    return (
        f"{proposal.id[:8]}  {proposal.status:<8}  {proposal.kind:<6}  {proposal.benchmark_name}  "
        f"{what or 'files only'}  {proposal.title}  ({proposal.created_by}, "
        f"{_when(proposal.created_at)})"
    )


@proposals_app.command("list")
@handle_errors
def proposals_list(
    status: Annotated[
        str | None, typer.Option("--status", help="pending, accepted or rejected.")
    ] = None,
    format: ListFormatOption = "table",
    db: DbOption = None,
) -> None:
    """Proposals, newest first."""
    from benchyard.automation.proposals import list_proposals
    from benchyard.cli.context import load_project, open_store

    check_list_format(format)
    store = open_store(db, load_project())
    found = list_proposals(store, status)
    if format == "json":
        from benchyard.report.automation_outputs import proposal_entry

        sys.stdout.write(dump_json([proposal_entry(p, with_diff=False) for p in found]))
        return
    if not found:
        typer.echo("no proposals" + (f" {status}" if status else ""))
    for proposal in found:
        typer.echo(_proposal_line(proposal))


@proposals_app.command("show")
@handle_errors
def proposals_show(
    proposal: Annotated[str, typer.Argument(help="A proposal id or unique prefix.")],
    format: ListFormatOption = "table",
    db: DbOption = None,
) -> None:
    """A proposal: who made it and why, what it changes, and its diff."""
    from benchyard.automation.proposals import get_proposal
    from benchyard.cli.context import load_project, open_store

    check_list_format(format)
    store = open_store(db, load_project())
    found = get_proposal(store, proposal)
    if format == "json":
        from benchyard.report.automation_outputs import proposal_entry

        sys.stdout.write(dump_json(proposal_entry(found)))
        return
    lines = [
        f"proposal {found.id}  ({found.status})",
        f"  {found.kind} of {found.benchmark_name} at {found.benchmark_root}",
        f"  title:    {found.title}",
        f"  by:       {found.created_by}, {_when(found.created_at)}",
    ]
    for key in ("added", "changed", "removed", "files"):
        if found.summary.get(key):
            lines.append(f"  {key + ':':<9} {', '.join(found.summary[key])}")
    if found.decided_at is not None:
        lines.append(f"  {found.status} by {found.decided_by}, {_when(found.decided_at)}")
        if found.decision_note:
            lines.append(f"  note:     {found.decision_note}")
        if found.result_hash:
            lines.append(f"  content hash after: {found.result_hash}")
    if found.rationale:
        lines += ["", *("  " + line for line in found.rationale.splitlines())]
    typer.echo("\n".join(lines) + "\n")
    sys.stdout.write(found.diff())


ByOption = Annotated[str | None, typer.Option("--by", help="Who decides (default: user@host).")]
NoteOption = Annotated[str | None, typer.Option("--note", "-m", help="Why, recorded with it.")]


@proposals_app.command("accept")
@handle_errors
def proposals_accept(
    proposal: Annotated[str, typer.Argument(help="A proposal id or unique prefix.")],
    by: ByOption = None,
    note: NoteOption = None,
    format: ListFormatOption = "table",
    db: DbOption = None,
) -> None:
    """Write a pending proposal's files into the benchmark (checked again first) and record who
    accepted it."""
    from benchyard.automation.proposals import accept
    from benchyard.cli.context import load_project, open_store

    check_list_format(format)
    store = open_store(db, load_project())
    done = accept(store, proposal, by=by or "", note=note)
    if format == "json":
        from benchyard.report.automation_outputs import proposal_decided

        sys.stdout.write(dump_json(proposal_decided(done)))
        return
    typer.echo(
        f"accepted proposal {done.id[:8]}: wrote {', '.join(c.path for c in done.changes)} in "
        f"{done.benchmark_root} (content hash {done.result_hash})"
    )


@proposals_app.command("reject")
@handle_errors
def proposals_reject(
    proposal: Annotated[str, typer.Argument(help="A proposal id or unique prefix.")],
    by: ByOption = None,
    note: NoteOption = None,
    format: ListFormatOption = "table",
    db: DbOption = None,
) -> None:
    """Refuse a pending proposal; nothing is written."""
    from benchyard.automation.proposals import reject
    from benchyard.cli.context import load_project, open_store

    check_list_format(format)
    store = open_store(db, load_project())
    done = reject(store, proposal, by=by or "", note=note)
    if format == "json":
        from benchyard.report.automation_outputs import proposal_decided

        sys.stdout.write(dump_json(proposal_decided(done)))
        return
    typer.echo(f"rejected proposal {done.id[:8]}")


# ---- schedule ----------------------------------------------------------------------------------


@schedule_app.command("add")
@handle_errors
def schedule_add(
    benchmark: Annotated[str, typer.Argument(help="A benchmark directory or built-in name.")],
    agent: Annotated[
        str, typer.Option("--agent", "-a", help="An agent declared in benchyard.yaml, or oracle.")
    ],
    cron: Annotated[
        str,
        typer.Option(
            "--cron", help="Five fields, UTC: minute hour day-of-month month day-of-week."
        ),
    ],
    missed: Annotated[
        str,
        typer.Option(
            "--missed",
            help="When no worker ran at a firing's time: once (queue one run when a worker "
            "sees it) or skip (wait for the next firing).",
        ),
    ] = "once",
    grace_sec: Annotated[
        float,
        typer.Option(
            "--grace-sec", min=0, help="A firing seen this late is still on time, not missed."
        ),
    ] = 600.0,
    concurrency: Annotated[int, typer.Option("--concurrency", "-j", min=1)] = 8,
    epochs: Annotated[int, typer.Option("--epochs", min=1)] = 1,
    limit: Annotated[int | None, typer.Option("--limit", min=1)] = None,
    profile: Annotated[str | None, typer.Option("--profile")] = None,
    filters: Annotated[list[str] | None, typer.Option("--filter", "-f")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", min=0.001)] = None,
    max_turns: Annotated[int | None, typer.Option("--max-turns", min=1)] = None,
    retries: Annotated[int, typer.Option("--retries", min=0)] = 3,
    agent_repo: Annotated[
        Path | None,
        typer.Option("--agent-repo", help="The agent's git repository, for each run's commit."),
    ] = None,
    sandbox: SandboxOption = None,
    allow_unsandboxed: AllowUnsandboxedOption = False,
    network: NetworkOption = None,
    allow_network: AllowNetworkOption = False,
    format: ListFormatOption = "table",
    db: DbOption = None,
) -> None:
    """Queue a run of BENCHMARK against a declared agent at the times --cron names; a running
    `benchyard worker` queues each one, and each run is compared with the previous one."""
    from benchyard.automation.schedules import add_schedule, describe_next, plan_scheduled_run
    from benchyard.benchmarks.loader import load_benchmark
    from benchyard.cli.context import load_project, open_store
    from benchyard.runner.api import judge_for, resolve_agent
    from benchyard.runner.execute import RunSettings
    from benchyard.runner.isolation import refuse_unsandboxed
    from benchyard.sandbox.registry import default_sandbox_name

    check_list_format(format)
    config = load_project()
    chosen = resolve_agent(config, agent, None)
    loaded = load_benchmark(benchmark)
    settings = RunSettings(
        concurrency=concurrency,
        epochs=epochs,
        limit=limit,
        filters=tuple(filters or ()),
        timeout_sec=timeout,
        max_turns=max_turns,
        retries=retries,
        work_root=None,
        judge=judge_for(config),
        sandbox=sandbox or default_sandbox_name(),
        allow_unsandboxed=allow_unsandboxed,
        network=network_mode(network, allow_network) or "bridge",
        profile=None if profile == "full" else profile,
    )
    recorded = settings.to_json()
    reference = str(loaded.root) if Path(benchmark).exists() else benchmark
    _, rebuilt, _, plan = plan_scheduled_run(reference, chosen.name, chosen.describe(), recorded)
    scenarios = list({id(p.scenario): p.scenario for p in plan}.values())
    refuse_unsandboxed(settings, loaded, rebuilt, scenarios)
    store = open_store(db, config)
    schedule = add_schedule(
        store,
        reference,
        chosen.name,
        chosen.describe(),
        recorded,
        cron,
        missed=missed,
        grace_sec=grace_sec,
        agent_repo=(agent_repo or Path.cwd()).resolve(),
    )
    typer.echo(
        f"schedule {schedule.id[:8]}: {loaded.name} with {chosen.name} at '{schedule.cron}' "
        f"(UTC), missed firings: {schedule.missed}; next {_when(schedule.next_due_at)} UTC "
        f"({describe_next(schedule)}); a running `benchyard worker` queues it",
        err=True,
    )
    if format == "json":
        from benchyard.report.automation_outputs import schedule_entry

        sys.stdout.write(dump_json(schedule_entry(schedule)))
        return
    typer.echo(schedule.id)


@schedule_app.command("list")
@handle_errors
def schedule_list(
    firings: Annotated[
        int, typer.Option("--firings", min=0, help="Show each schedule's latest N firings.")
    ] = 3,
    format: ListFormatOption = "table",
    db: DbOption = None,
) -> None:
    """Schedules with their next firing, and their latest firings: queued run, skipped or
    refused, and the comparison with the run before."""
    from benchyard.automation import schedules as library
    from benchyard.cli.context import load_project, open_store

    check_list_format(format)
    store = open_store(db, load_project())
    found = library.list_schedules(store)
    if format == "json":
        from benchyard.report.automation_outputs import schedule_entry

        entries = [schedule_entry(s, library.firings(store, s.id, firings)) for s in found]
        sys.stdout.write(dump_json(entries))
        return
    if not found:
        typer.echo("no schedules: add one with `benchyard schedule add BENCHMARK --agent A --cron`")
    for schedule in found:
        typer.echo(
            f"{schedule.id[:8]}  '{schedule.cron}'  {schedule.benchmark}  agent {schedule.agent_name}"
            f"  missed: {schedule.missed}  next {_when(schedule.next_due_at)} UTC "
            f"({library.describe_next(schedule)})"
        )
        for firing in library.firings(store, schedule.id, firings):
            run = f"run {firing.run_id[:8]}" if firing.run_id else ""
            missed = f" ({firing.missed} missed)" if firing.missed else ""
            compared = ""
            if firing.baseline_run_id:
                verdict = "REGRESSION" if firing.regression else "no regression"
                compared = f"; vs {firing.baseline_run_id[:8]}: {verdict}"
            detail = f": {firing.detail}" if firing.detail and not compared else ""
            typer.echo(
                f"    {_when(firing.due_at)}  {firing.action:<8} {run}{missed}{compared}{detail}"
            )


@schedule_app.command("remove")
@handle_errors
def schedule_remove(
    schedule: Annotated[str, typer.Argument(help="A schedule id or unique prefix.")],
    format: ListFormatOption = "table",
    db: DbOption = None,
) -> None:
    """Remove a schedule; the runs it queued stay."""
    from benchyard.automation.schedules import remove_schedule
    from benchyard.cli.context import load_project, open_store

    check_list_format(format)
    store = open_store(db, load_project())
    removed = remove_schedule(store, schedule)
    if format == "json":
        from benchyard.report.automation_outputs import ScheduleRemoved

        output = ScheduleRemoved(id=removed.id, cron=removed.cron, benchmark=removed.benchmark)
        sys.stdout.write(dump_json(output))
        return
    typer.echo(f"removed schedule {removed.id[:8]} ('{removed.cron}', {removed.benchmark})")


# ---- webhooks ----------------------------------------------------------------------------------


@webhooks_app.command("list")
@handle_errors
def webhooks_list(format: ListFormatOption = "table") -> None:
    """The webhooks benchyard.yaml declares."""
    from benchyard.cli.context import load_project

    check_list_format(format)
    config = load_project()
    if format == "json":
        from benchyard.report.automation_outputs import webhook_entries

        sys.stdout.write(dump_json(webhook_entries(config.webhooks)))
        return
    if not config.webhooks:
        typer.echo("no webhooks in benchyard.yaml (see docs/automation.md#webhooks)")
    for name, hook in sorted(config.webhooks.items()):
        scope = ", ".join(hook.benchmarks) if hook.benchmarks else "every benchmark"
        typer.echo(
            f"{name}: {hook.shown_url()}  events {', '.join(hook.events)}  ({scope}); signed with "
            f"${hook.secret_env}; up to {hook.max_tries} tries"
        )


@webhooks_app.command("deliveries")
@handle_errors
def webhooks_deliveries(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 20,
    webhook: Annotated[str | None, typer.Option("--webhook", help="Only this webhook's.")] = None,
    run: Annotated[
        str | None, typer.Option("--run", help="Only deliveries about this run.")
    ] = None,
    format: ListFormatOption = "table",
    db: DbOption = None,
) -> None:
    """Deliveries, newest first, each try with its status code and the receiver's response."""
    from benchyard.automation.webhooks import list_deliveries, tries_of
    from benchyard.cli.context import load_project, open_store

    check_list_format(format)
    store = open_store(db, load_project())
    run_id = store.resolve_run(run).id if run else None
    found = list_deliveries(store, limit, webhook=webhook, run_id=run_id)
    tries = tries_of(store, [delivery.id for delivery in found])
    if format == "json":
        from benchyard.report.automation_outputs import delivery_entry

        entries = [delivery_entry(d, tries.get(d.id, [])) for d in found]
        sys.stdout.write(dump_json(entries))
        return
    if not found:
        typer.echo("no deliveries yet")
    for delivery in found:
        about = f" run {delivery.run_id[:8]}" if delivery.run_id else ""
        next_try = (
            f", next try {_when(delivery.next_try_at)}" if delivery.state == "pending" else ""
        )
        typer.echo(
            f"{delivery.id[:8]}  {_when(delivery.created_at)}  {delivery.webhook}  "
            f"{delivery.event}{about}  {delivery.state} after {delivery.tries} "
            f"tr{'y' if delivery.tries == 1 else 'ies'}{next_try}  -> {delivery.url}"
        )
        for attempt in tries.get(delivery.id, []):
            outcome = (
                f"HTTP {attempt.status_code}" if attempt.status_code is not None else attempt.error
            )
            body = " ".join((attempt.response or "").split())[:120]
            typer.echo(
                f"    try {attempt.try_number} {_when(attempt.at)} {outcome} "
                f"({attempt.duration_sec:.2f} s){': ' + body if body else ''}"
            )


@webhooks_app.command("test")
@handle_errors
def webhooks_test(
    name: Annotated[str, typer.Argument(help="A webhook of benchyard.yaml.")],
    format: ListFormatOption = "table",
    db: DbOption = None,
) -> None:
    """Send a `ping` event to one webhook now and show what it answered (exit 1 when it was not
    delivered)."""
    from benchyard.automation import events
    from benchyard.automation.webhook_config import register_webhook_secrets
    from benchyard.automation.webhooks import deliver_due, emit
    from benchyard.cli.context import load_project, open_store

    check_list_format(format)
    config = load_project()
    if name not in config.webhooks:
        raise typer.BadParameter(
            f"no webhook '{name}' in benchyard.yaml ({', '.join(config.webhooks) or 'none'})"
        )
    register_webhook_secrets(config.webhooks)
    store = open_store(db, config)
    hooks = {name: config.webhooks[name]}
    made = emit(store, hooks, events.PING, events.ping_payload(name))
    sent = {d.id: d for d in deliver_due(store, hooks)}
    if format == "json":
        from benchyard.automation.webhooks import tries_of
        from benchyard.report.automation_outputs import deliveries_output

        finished = [sent.get(delivery.id, delivery) for delivery in made]
        output = deliveries_output(finished, tries_of(store, [d.id for d in finished]))
        sys.stdout.write(dump_json(output))
        if not output.delivered:
            raise typer.Exit(1)
        return
    from benchyard.automation.webhooks import tries_of

    tried = tries_of(store, [delivery.id for delivery in made])
    for delivery in made:
        ended = sent.get(delivery.id, delivery)
        last = tried.get(ended.id, [])[-1:]
        why = f": {last[0].error}" if last and last[0].error else ""
        typer.echo(
            f"{name}: ping {ended.id[:8]} {ended.state} (status {ended.last_status}){why}; "
            "see `benchyard webhooks deliveries`"
        )
        if ended.state != "delivered":
            raise typer.Exit(1)


@webhooks_app.command("deliver")
@handle_errors
def webhooks_deliver(format: ListFormatOption = "table", db: DbOption = None) -> None:
    """Send the deliveries whose next try is due now (a running worker does this by itself)."""
    from benchyard.automation.webhook_config import register_webhook_secrets
    from benchyard.automation.webhooks import deliver_due
    from benchyard.cli.context import load_project, open_store

    check_list_format(format)
    config = load_project()
    register_webhook_secrets(config.webhooks)
    store = open_store(db, config)
    sent = deliver_due(store, config.webhooks)
    if format == "json":
        from benchyard.automation.webhooks import tries_of
        from benchyard.report.automation_outputs import deliveries_output

        output = deliveries_output(sent, tries_of(store, [d.id for d in sent]))
        sys.stdout.write(dump_json(output))
        typer.echo(f"{len(sent)} deliveries tried", err=True)
        return
    for delivery in sent:
        typer.echo(f"{delivery.id[:8]} {delivery.webhook} {delivery.event}: {delivery.state}")
    typer.echo(f"{len(sent)} deliveries tried", err=True)
