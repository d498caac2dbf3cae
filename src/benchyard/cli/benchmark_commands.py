"""Commands about benchmarks: init, validate, benchmarks, verify."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.options import SandboxOption

if TYPE_CHECKING:
    pass


@handle_errors
def init(
    directory: Annotated[Path, typer.Argument(help="Where to write benchyard.yaml.")] = Path("."),
) -> None:
    """Write a starter benchyard.yaml (agents, store) and a minimal example agent."""
    from benchyard.config import CONFIG_FILE, STARTER_AGENT, STARTER_CONFIG

    directory.mkdir(parents=True, exist_ok=True)
    for name, content in ((CONFIG_FILE, STARTER_CONFIG), ("agent.py", STARTER_AGENT)):
        target = directory / name
        if target.exists():
            typer.echo(f"kept existing {target}")
        else:
            target.write_text(content, encoding="utf-8")
            typer.echo(f"wrote {target}")
    typer.echo("next: benchyard run starter --agent example   (or --agent oracle)")


@handle_errors
def validate(
    path: Annotated[str, typer.Argument(help="A benchmark directory or built-in name.")],
) -> None:
    """Check a benchmark's files and list every problem with file, line and field."""
    from benchyard.spec.loader import load_benchmark

    benchmark = load_benchmark(path)
    categories = sorted({s.category for s in benchmark.scenarios})
    typer.echo(
        f"ok: {benchmark.name} {benchmark.version}: {len(benchmark.scenarios)} scenarios in "
        f"{len(categories)} categories ({', '.join(categories)}); {benchmark.content_hash}"
    )


@handle_errors
def benchmarks() -> None:
    """List the built-in benchmark library and the benchmarks under the current directory."""
    from benchyard.spec.library import builtin_benchmarks, local_benchmarks
    from benchyard.spec.loader import load_benchmark
    from benchyard.spec.problems import BenchmarkInvalid

    entries = [(name, path, "built-in") for name, path in builtin_benchmarks().items()]
    entries += [
        (str(path.relative_to(Path.cwd().resolve())) or ".", path, "local")
        for path in local_benchmarks(Path.cwd())
    ]
    for label, path, origin in entries:
        try:
            benchmark = load_benchmark(path)
            detail = f"{benchmark.version}  {len(benchmark.scenarios)} scenarios  {benchmark.manifest.description}"
        except BenchmarkInvalid as invalid:
            detail = f"invalid ({len(invalid.problems)} problems; run `benchyard validate {label}`)"
        typer.echo(f"{label:<28} {origin:<9} {detail}")


@handle_errors
def verify(
    benchmark: Annotated[str, typer.Argument(help="A benchmark directory or built-in name.")],
    sandbox: SandboxOption = None,
) -> None:
    """Run every scenario's reference through its checks; report broken cases (exit 1 if any).
    Coding scenarios' references are graded in the sandbox, as an agent's change would be."""
    from benchyard.runner.api import verify_benchmark
    from benchyard.spec.loader import load_benchmark

    loaded = load_benchmark(benchmark)
    outcomes = verify_benchmark(loaded, sandbox)
    broken = [outcome for outcome in outcomes if not outcome.ok]
    for outcome in broken:
        typer.echo(f"broken: {outcome.scenario_id}: {outcome.reason}")
    typer.echo(
        f"{loaded.name} {loaded.version}: {len(outcomes)} scenarios verified, {len(broken)} broken"
    )
    if broken:
        raise typer.Exit(1)
