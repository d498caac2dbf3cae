"""Commands for choosing a model: speed (a speed benchmark of an `openai` agent's endpoint),
status (are the providers up, what they serve, how big each benchmark is) and pairwise (a judge
compares two runs' answers). Also how `report`, `show` and `compare` render speed runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.options import DbOption, ListFormatOption, RunArg, check_list_format

if TYPE_CHECKING:
    from benchyard.store.records import RunRecord
    from benchyard.store.store import Store

FORMATS = ("table", "json", "md")


def _format(value: str) -> str:
    if value not in FORMATS:
        raise typer.BadParameter(
            f"'{value}' is not one of {', '.join(FORMATS)}", param_hint="--format"
        )
    return value


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    output.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {output}", err=True)


def _json(payload: Any) -> str:
    return json.dumps(payload, indent=2) + "\n"


def parse_lengths(text: str) -> dict[str, int]:
    """`short=50,medium=200,long=800` (or bare numbers, labelled by their word counts)."""
    lengths: dict[str, int] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        label, sep, words = part.rpartition("=")
        if not sep:
            label, words = f"w{part}", part
        try:
            lengths[label.strip()] = int(words)
        except ValueError:
            raise typer.BadParameter(
                f"'{part}' is not LABEL=WORDS (e.g. short=50,medium=200,long=800)",
                param_hint="--lengths",
            ) from None
    return lengths


def parse_levels(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(
            f"'{text}' is not a list of whole numbers (e.g. 1,4,16)", param_hint="--concurrency"
        ) from None


@handle_errors
def speed(
    agent: Annotated[str, typer.Option("--agent", "-a", help="An openai agent of benchyard.yaml.")],
    lengths: Annotated[
        str,
        typer.Option("--lengths", help="Prompt lengths in words: LABEL=WORDS, comma-separated."),
    ] = "short=50,medium=200,long=800",
    repeats: Annotated[int, typer.Option("--repeats", "-n", min=1, help="Calls per length.")] = 5,
    warmup: Annotated[int, typer.Option("--warmup", min=0, help="Calls before measuring.")] = 2,
    concurrency: Annotated[
        str, typer.Option("--concurrency", "-c", help="Levels of the sweep, comma-separated.")
    ] = "1,4,16",
    rounds: Annotated[int, typer.Option("--rounds", min=1, help="Batches per level.")] = 2,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", min=2, help="Tokens asked for in each reply.")
    ] = 128,
    same_prompt: Annotated[
        bool,
        typer.Option(
            "--same-prompt", help="Repeat one prompt per length (a prompt cache then serves it)."
        ),
    ] = False,
    model_size_gb: Annotated[
        float | None,
        typer.Option(
            "--model-size-gb", min=0.0, help="The weights' size (default: the endpoint's)."
        ),
    ] = None,
    bandwidth_gbs: Annotated[
        float | None, typer.Option("--bandwidth-gbs", min=0.0, help="Memory bandwidth, GB/s.")
    ] = None,
    hardware: Annotated[
        str | None,
        typer.Option("--hardware", help="A hardware profile for the bandwidth (e.g. h100-sxm)."),
    ] = None,
    agent_repo: Annotated[
        Path, typer.Option("--agent-repo", help="The git repository for the commit tag.")
    ] = Path("."),
    format: Annotated[str, typer.Option("--format", help="table, json or md.")] = "table",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here.")] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress and no report.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Time an openai agent's endpoint: time to first token (reasoning and answer), decode and
    prefill speed by prompt length, a concurrency sweep, and whether the figures can be true.
    Exits 1 when a figure is implausible, 3 when no measured call reached the endpoint."""
    from pydantic import ValidationError

    from benchyard.cli.context import load_project, open_store
    from benchyard.errors import field_problems
    from benchyard.speed.api import measure_speed, resolve_speed_agent
    from benchyard.speed.hardware import bandwidth_gbs as profile_bandwidth
    from benchyard.speed.measure import planned_calls
    from benchyard.speed.models import SpeedOptions

    _format(format)
    if hardware is not None:
        profile_bandwidth(hardware)  # an unknown profile is refused before anything runs
    try:
        options = SpeedOptions(
            lengths=parse_lengths(lengths),
            repeats=repeats,
            warmup=warmup,
            concurrency=parse_levels(concurrency),
            rounds=rounds,
            max_tokens=max_tokens,
            same_prompt=same_prompt,
            model_size_gb=model_size_gb or None,
            bandwidth_gbs=bandwidth_gbs or None,
            hardware=hardware,
        )
    except ValidationError as error:
        raise typer.BadParameter(field_problems(error)) from None
    config = load_project()
    chosen = resolve_speed_agent(config, agent)
    store = open_store(db, config)
    total = planned_calls(options)
    with _Counter(total, enabled=not quiet) as counter:
        finished = measure_speed(
            store, chosen, options, agent_repo=agent_repo, on_call=counter.tick
        )
    if not quiet:
        render_speed_runs(store, [finished], format, output)
    typer.echo(f"run {finished.id}  ({finished.status})", err=format != "table")
    verdict = speed_exit(store, finished)
    if verdict:
        code, why = verdict
        typer.echo(f"{why} (exit {code})", err=True)
        raise typer.Exit(code)


IMPLAUSIBLE = 1  # speed: a figure cannot be true (docs/exit-codes.md)
UNREACHABLE = 3  # speed: no measured call reached the endpoint; status: a provider is down


def speed_exit(store: Store, run: RunRecord) -> tuple[int, str] | None:
    """`speed`'s exit status beyond 0: 3 when no measured call came back (the endpoint is
    unreachable or failed them all), 1 when a figure is implausible (confidence LOW)."""
    from benchyard.speed.records import load_samples
    from benchyard.speed.report import build_speed_report

    measured = [s for s in load_samples(store, run.id) if s.phase != "warmup"]
    if not measured or all(s.error is not None for s in measured):
        first = next((s.error for s in measured if s.error), "no call was measured")
        return UNREACHABLE, f"no measured call reached the endpoint: {first}"
    report = build_speed_report(store, run)
    implausible = [f.rule for f in report.findings if f.severity == "implausible"]
    if implausible:
        rules = ", ".join(dict.fromkeys(implausible))
        return IMPLAUSIBLE, f"implausible figures ({rules}): confidence LOW"
    return None


class _Counter:
    """Calls done out of planned, on stderr."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.enabled, self.done = total, enabled, 0
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> _Counter:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            self._progress = Progress(
                "speed",
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
            )
            self._progress.start()
            self._task = self._progress.add_task("calls", total=self.total)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def tick(self) -> None:
        self.done += 1
        self.total = max(self.total, self.done)  # a call taken again after a client stall
        if self._progress is not None:
            self._progress.update(self._task, completed=self.done, total=self.total)


def render_speed_runs(
    store: Store, runs: list[RunRecord], format: str, output: Path | None
) -> None:
    """`report` of runs at least one of which is a speed run: each speed run's report when all
    are speed runs, else one table of speed next to ability per category, by agent."""
    from benchyard.cli.render import print_renderables
    from benchyard.speed.render import speed_markdown, speed_rich
    from benchyard.speed.report import build_speed_report, is_speed
    from benchyard.speed.side_by_side import models_markdown, models_rich, models_table

    if all(is_speed(run) for run in runs):
        reports = [build_speed_report(store, run) for run in runs]
        if format == "json":
            payload = [r.model_dump(mode="json") for r in reports]
            _emit(_json(payload[0] if len(payload) == 1 else payload), output)
        elif format == "md":
            _emit(speed_markdown(reports), output)
        else:
            print_renderables([part for r in reports for part in speed_rich(r)], output)
        return
    table = models_table(store, runs)
    if format == "json":
        _emit(_json(table.model_dump(mode="json")), output)
    elif format == "md":
        _emit(models_markdown(table), output)
    else:
        print_renderables(models_rich(table), output)


def show_speed_run(store: Store, run: RunRecord, format: str = "table") -> None:
    """`show` of a speed run: its settings, then every call it measured."""
    from rich.table import Table
    from rich.text import Text

    from benchyard.cli.render import print_renderables
    from benchyard.speed.records import load_samples
    from benchyard.speed.render import heading, ms_text
    from benchyard.speed.report import run_info

    if format == "json":
        samples = [sample.model_dump(mode="json") for sample in load_samples(store, run.id)]
        payload = {
            "kind": "speed",
            "run": run_info(run).model_dump(mode="json"),
            "status_reason": run.status_reason,
            "environment": run.settings.get("environment"),
            "samples": samples,
        }
        sys.stdout.write(_json(payload))
        return

    table = Table()
    for column in (
        "#", "phase", "label", "c", "words", "tok in", "tok out", "usage", "TTFT ms",
        "reasoning ms", "answer ms", "last ms", "chunks", "decode tok/s", "error",
    ):  # fmt: skip
        table.add_column(column, overflow="fold")
    for s in load_samples(store, run.id):
        decode = s.decode_tps
        table.add_row(
            str(s.position), s.phase, s.label, str(s.concurrency), str(s.prompt_words),
            str(s.tokens_in if s.tokens_in is not None else "—"),
            str(s.tokens_out if s.tokens_out is not None else "—"),
            s.usage_source, ms_text(s.ttft_sec), ms_text(s.reasoning_ttft_sec),
            ms_text(s.content_ttft_sec), ms_text(s.last_token_sec), str(s.token_chunks),
            "—" if decode is None else f"{decode:,.1f}", Text(s.error or ""),
        )  # fmt: skip
    reason = f"\n{run.status}: {run.status_reason}" if run.status_reason else ""
    header = Text(f"{heading(run_info(run))}{reason}\nsettings {run.settings}")
    print_renderables([header, table])


def compare_speed(
    store: Store, runs: list[RunRecord], format: str, output: Path | None, allow: bool
) -> None:
    from benchyard.cli.render import print_renderables
    from benchyard.speed.compare import compare_speed_runs
    from benchyard.speed.render import comparison_markdown, comparison_rich

    comparison = compare_speed_runs(store, runs, allow_mismatch=allow)
    if format == "json":
        _emit(_json(comparison.model_dump(mode="json")), output)
    elif format == "md":
        _emit(comparison_markdown(comparison), output)
    else:
        print_renderables(comparison_rich(comparison), output)


@handle_errors
def status(
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds to wait for each provider.")
    ] = 5.0,
    format: ListFormatOption = "table",
) -> None:
    """One line each: is every configured provider up and which models it serves; how many
    scenarios each benchmark (built-in and under .) has, by profile. Exits 3 when a provider is
    down or invalid (see docs/exit-codes.md)."""
    from benchyard.cli.context import load_project
    from benchyard.report.listing import dump_json
    from benchyard.runner.api import register_secrets
    from benchyard.status import project_status, status_lines

    check_list_format(format)
    config = load_project()
    register_secrets(config)
    found = project_status(config, timeout, Path.cwd())
    if format == "json":
        sys.stdout.write(dump_json(found))
    else:
        for line in status_lines(found):
            typer.echo(line)
    if found.down:
        typer.echo(f"unreachable: provider {', '.join(found.down)} (exit 3)", err=True)
        raise typer.Exit(UNREACHABLE)


@handle_errors
def pairwise(
    run_a: RunArg,
    run_b: Annotated[str, typer.Argument(help="The second run (id, prefix, latest, latest~N).")],
    epoch: Annotated[int, typer.Option("--epoch", min=1, help="Which epoch's answers.")] = 1,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N scenarios both answered.")
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-j", min=1, help="Judge calls at once.")
    ] = 4,
    format: Annotated[str, typer.Option("--format", help="table, json or md.")] = "table",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here.")] = None,
    db: DbOption = None,
) -> None:
    """The judge compares the two runs' answers to each scenario, in both orders: wins, losses,
    ties, and how often the judge's choice followed the position instead of the answer."""
    from benchyard.cli.context import load_project, open_store
    from benchyard.cli.render import print_renderables
    from benchyard.pairwise import compare_pairwise, pairwise_markdown, pairwise_rich
    from benchyard.runner.api import judge_for, register_secrets

    _format(format)
    config = load_project()
    register_secrets(config)
    store = open_store(db, config)
    result = compare_pairwise(
        store,
        store.resolve_run(run_a),
        store.resolve_run(run_b),
        judge_for(config),
        epoch=epoch,
        limit=limit,
        concurrency=concurrency,
    )
    if format == "json":
        _emit(_json(result.model_dump(mode="json")), output)
    elif format == "md":
        _emit(pairwise_markdown(result), output)
    else:
        print_renderables(pairwise_rich(result), output)
