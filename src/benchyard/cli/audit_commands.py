"""Deploy decisions: the audit artefact (`report --format audit`) and `benchyard gate`."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.options import DbOption, RunArg

if TYPE_CHECKING:
    from benchyard.audit.gate import LoadedPolicy
    from benchyard.audit.model import AuditArtefact
    from benchyard.store.records import RunRecord
    from benchyard.store.store import Store


def audit_file_name(audit: AuditArtefact) -> str:
    model = re.sub(r"[^A-Za-z0-9._-]+", "_", audit.model).strip("._") or "model"
    return f"{model}-{audit.run.id[:8]}.audit.json"


def write_audits(store: Store, runs: list[RunRecord], output: Path | None, merged: bool) -> None:
    """One audit artefact per run (a model): to stdout, to the file `-o` names (one run), or
    into the directory `-o` names (several runs, or a path ending in `/`)."""
    from benchyard.audit.build import build_audit

    audits = [build_audit(store, run, merged=merged) for run in runs]
    texts = [audit.model_dump_json(indent=2) + "\n" for audit in audits]
    if output is None:
        if len(texts) == 1:
            sys.stdout.write(texts[0])
        else:
            sys.stdout.write(json.dumps([json.loads(t) for t in texts], indent=2) + "\n")
        return
    if len(audits) > 1 or output.is_dir() or str(output).endswith("/"):
        output.mkdir(parents=True, exist_ok=True)
        for audit, text in zip(audits, texts, strict=True):
            target = output / audit_file_name(audit)
            target.write_text(text, encoding="utf-8")
            typer.echo(f"wrote {target}", err=True)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(texts[0], encoding="utf-8")
    typer.echo(f"wrote {output}", err=True)


@handle_errors
def gate(
    run_ref: RunArg,
    policy: Annotated[
        Path, typer.Option("--policy", "-p", help="The policy YAML (thresholds per decision).")
    ],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the decision JSON here.")
    ] = None,
    merged: Annotated[
        bool, typer.Option("--merged", help="Merge the run with the runs it re-ran.")
    ] = False,
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help="json (the decision as one document: the default) or table (its summary and "
            "every rule, one a line).",
        ),
    ] = "json",
    db: DbOption = None,
) -> None:
    """Decide no-deploy, human-in-the-loop, canary or full from a run's audit figures and a
    policy; exits 0 (full), 10 (canary), 11 (human-in-the-loop) or 12 (no-deploy)."""
    from benchyard.audit.build import build_audit
    from benchyard.audit.gate import decide
    from benchyard.automation.announce import announce_gate
    from benchyard.cli.context import load_project, open_store
    from benchyard.cli.options import check_list_format

    check_list_format(format)
    loaded = _policy(policy)
    project = load_project()
    store = open_store(db, project)
    run = store.resolve_run(run_ref)
    audit = build_audit(store, run, merged=merged)
    decision = decide(audit, loaded)
    announce_gate(store, project.webhooks, run, decision.model_dump(mode="json"))
    text = decision.model_dump_json(indent=2) + "\n"
    if output is None and format == "table":
        typer.echo(decision.summary)
        for reason in decision.reasons:
            mark = "met" if reason.met else "NOT met"
            typer.echo(
                f"  {reason.level}: {reason.rule} {mark} (required {reason.required}, "
                f"actual {reason.actual})"
            )
    elif output is None:
        sys.stdout.write(text)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    if format == "json" or output is not None:
        typer.echo(decision.summary, err=True)
    raise typer.Exit(decision.exit_code)


def _policy(path: Path) -> LoadedPolicy:
    """The policy at `path`; one with problems lists them and exits 2, as docs/exit-codes.md
    says (1 is no decision `gate` can give)."""
    from benchyard.audit.gate import PolicyInvalid, load_policy
    from benchyard.report.render import plural

    try:
        return load_policy(path)
    except PolicyInvalid as error:
        for problem in error.problems:
            typer.echo(str(problem), err=True)
        count = len(error.problems)
        typer.echo(f"error: {plural(count, 'problem')} in the policy {path}", err=True)
        raise typer.Exit(2) from None
