"""Commands for benchmarks in published formats: `import` and `grade-patches`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.options import check_list_format

OptionList = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        help="A format option as key=value (repeatable); see docs/importers.md for each format's.",
    ),
]


def parse_option_pairs(pairs: list[str] | None) -> dict[str, Any]:
    """`key=value` pairs, values read as YAML scalars (3, 2.5, true, text)."""
    import yaml

    options: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"'{pair}' is not key=value", param_hint="--option")
        try:
            options[key.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            options[key.strip()] = value
    return options


@handle_errors
def import_benchmark(
    format: Annotated[
        str, typer.Argument(help="The source's format (`benchyard benchmarks` lists them).")
    ],
    source: Annotated[Path, typer.Argument(help="The file, or directory of tasks, to import.")],
    out: Annotated[
        Path | None,
        typer.Option("-o", "--out", help="The benchmark directory to write (default ./FORMAT)."),
    ] = None,
    option: OptionList = None,
    name: Annotated[
        str | None, typer.Option("--name", help="The benchmark's name (default: the format's).")
    ] = None,
    output_format: Annotated[
        str,
        typer.Option(
            "--format", help="table or json: what was written, as one JSON document on stdout."
        ),
    ] = "table",
) -> None:
    """Write a benchmark in a published format as an ordinary benchyard benchmark: readable,
    editable, graded as the format's official evaluator grades it."""
    from benchyard.benchmarks.loader import load_benchmark
    from benchyard.importers.build import read_source, write_benchmark

    check_list_format(output_format)
    result = read_source(format, source, parse_option_pairs(option))
    target = out or Path(result.imported.name)
    loaded = []  # the benchmark as written; a benchmark that does not load is removed again
    write_benchmark(result, target, name=name, check=lambda out: loaded.append(load_benchmark(out)))
    benchmark = loaded[0]
    provenance = result.provenance
    if output_format == "json":
        from benchyard.report.listing import dump_json
        from benchyard.report.outputs import import_output

        sys.stdout.write(dump_json(import_output(target, source, benchmark, dict(provenance))))
        return
    typer.echo(
        f"wrote {target}: {benchmark.name} {benchmark.version}, {len(benchmark.scenarios)} "
        f"scenarios from {source} ({provenance['format']} format {provenance['format_version']}, "
        f"{provenance['source_sha256']})"
    )
    typer.echo(f"next: benchyard verify {target}   then: benchyard run {target} --agent ...")


@handle_errors
def grade_patches(
    instances: Annotated[Path, typer.Argument(help="SWE-bench instances (JSONL).")],
    predictions: Annotated[
        Path,
        typer.Argument(help="Predictions (JSONL): instance_id, model_patch, model_name_or_path."),
    ],
    option: OptionList = None,
    out: Annotated[
        Path | None,
        typer.Option("-o", "--out", help="The report (default: <model>.benchyard.json here)."),
    ] = None,
    jobs: Annotated[int, typer.Option("-j", "--jobs", help="Containers at a time.")] = 2,
    rules: Annotated[
        str,
        typer.Option(
            "--rules",
            help="The swebench release whose grading rules apply: 5.0.2 (the default) or 4.1.",
        ),
    ] = "5.0.2",
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help="table or json: every instance's grade and the totals, as one JSON document on "
            "stdout (the official report still goes to the file).",
        ),
    ] = "table",
) -> None:
    """Grade supplied patches as SWE-bench's harness does, without running any agent: each in a
    fresh container of its instance's image; writes the official per-instance report fields."""
    import dataclasses
    import json

    from benchyard.formats.swebench.evaluation import grade_predictions, grading_rules
    from benchyard.formats.swebench.importer import SweBenchOptions, instance_of
    from benchyard.importers.base import ProblemList
    from benchyard.importers.build import parse_options
    from benchyard.importers.registry import get_importer
    from benchyard.importers.source import Fields, read_records
    from benchyard.runner.loop import run_async

    check_list_format(format)
    try:
        chosen = grading_rules(rules)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--rules") from None

    importer = get_importer("swe-bench")
    options = parse_options(importer, parse_option_pairs(option))
    assert isinstance(options, SweBenchOptions)
    problems = ProblemList()
    known = {}
    for record in read_records(instances, problems):
        instance = instance_of(record, options, problems, instances)
        if instance is not None:
            known[instance.instance_id] = dataclasses.replace(instance, rules=chosen)
    wanted = []
    for record in read_records(predictions, problems):
        fields = Fields(record, problems)
        instance_id = fields.get("instance_id", str)
        fields.get("model_patch", str, required=False)
        if instance_id is not None and instance_id not in known:
            fields.problem("instance_id", f"no instance {instance_id!r} in {instances}")
        if fields.ok:
            wanted.append(record.data)
    problems.raise_if_any()
    model = str(wanted[0].get("model_name_or_path", "predictions")) if wanted else "predictions"
    target = out or _report_name(model)
    reports = run_async(grade_predictions(known, wanted, jobs))
    target.write_text(
        json.dumps({key: report.official() for key, report in reports.items()}, indent=2) + "\n",
        encoding="utf-8",
    )
    if format == "json":
        from benchyard.report.listing import dump_json
        from benchyard.report.outputs import grade_patches_output

        sys.stdout.write(dump_json(grade_patches_output(list(reports.values()), rules, target)))
        return
    for report in reports.values():
        typer.echo(f"{report.instance_id}: {report.summary()}")
    resolved = sum(report.resolved for report in reports.values())
    applied = sum(report.patch_successfully_applied for report in reports.values())
    invalid = sum(report.infra_failure for report in reports.values())
    typer.echo(
        f"resolved {resolved}/{len(reports)}, patches applied {applied}/{len(reports)}"
        + (f", {invalid} invalid evaluations (no test ran)" if invalid else "")
        + f" (swebench {rules} rules); report: {target}"
    )


def _report_name(model: str) -> Path:
    """`<model>.benchyard.json` here; a model name from the predictions that cannot be a file
    name here (`..`, a NUL, too long) is refused before the containers run."""
    from benchyard.errors import BenchyardError
    from benchyard.untrusted import path_name_problem

    name = f"{model.replace('/', '__')}.benchyard.json"
    problem = path_name_problem(name)
    if problem is not None:
        raise BenchyardError(
            f"the predictions' model_name_or_path {model[:80]!r} cannot name the report's file "
            f"(it {problem}); give the file with -o"
        )
    return Path(name)
