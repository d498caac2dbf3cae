"""The JSON Schema files of what each command prints with `--format json`, shipped in the package
under `benchyard/report/schemas/` and generated from the commands' pydantic models (the report's
own, `report.schema.json`, by report/schema.py). Regenerate them all, the report's first (`run`'s
and `rescore`'s hold it), after a change to a model with `python -m benchyard.report.output_schemas`
(a test fails until they are); docs/json-output.md lists them, command by command."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

SCHEMA_DIRECTORY = "schemas"


@dataclass(frozen=True)
class OutputSchema:
    """The schema of one command's JSON: `name.schema.json` in report/schemas/, generated from
    `shape` (a model, or a list of one for the commands that print an array)."""

    name: str
    shape: Any
    version: str
    array: bool = False

    @property
    def file(self) -> str:
        return f"{self.name}.schema.json"

    def generated(self) -> dict[str, Any]:
        schema = TypeAdapter(self.shape).json_schema(mode="serialization")
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"urn:benchyard:{self.name}:{self.version}",
            **schema,
        }

    def text(self) -> str:
        return json.dumps(self.generated(), indent=2, sort_keys=True) + "\n"


@cache
def output_schemas() -> dict[str, OutputSchema]:
    """Every generated schema by its name (models imported when first asked for)."""
    from benchyard.audit.gate import DECISION_SCHEMA_VERSION, Decision
    from benchyard.pairwise import PairwiseResult
    from benchyard.report.automation_outputs import (
        DeliveriesOutput,
        DeliveryEntry,
        ProposalDecided,
        ProposalEntry,
        ScheduleEntry,
        ScheduleRemoved,
        WebhookEntry,
    )
    from benchyard.report.listing import BenchmarkEntry, RunEntry, RunShown
    from benchyard.report.model import SCHEMA_VERSION, Comparison
    from benchyard.report.outputs import (
        OUTPUT_SCHEMA_VERSION,
        AgentInstalled,
        AgentsOutput,
        CancelOutput,
        GcOutput,
        GradePatchesOutput,
        HistoryEntry,
        ImportOutput,
        ImportRunOutput,
        InitOutput,
        RescoreOutput,
        RunOutcome,
        StatusOutput,
        ValidationOutput,
        VerifyOutput,
    )
    from benchyard.speed.models import SpeedReport

    version = OUTPUT_SCHEMA_VERSION
    schemas = [
        OutputSchema("benchmarks", list[BenchmarkEntry], version, array=True),
        OutputSchema("runs", list[RunEntry], version, array=True),
        OutputSchema("show", RunShown, version),
        OutputSchema("validate", ValidationOutput, version),
        OutputSchema("verify", VerifyOutput, version),
        OutputSchema("run", RunOutcome, version),
        OutputSchema("rescore", RescoreOutput, version),
        OutputSchema("compare", Comparison, SCHEMA_VERSION),
        OutputSchema("history", list[HistoryEntry], version, array=True),
        OutputSchema("gate", Decision, DECISION_SCHEMA_VERSION),
        OutputSchema(
            "pairwise", PairwiseResult, str(PairwiseResult.model_fields["schema_version"].default)
        ),
        OutputSchema("status", StatusOutput, version),
        OutputSchema("gc", GcOutput, version),
        OutputSchema("cancel", CancelOutput, version),
        OutputSchema("init", InitOutput, version),
        OutputSchema("import", ImportOutput, version),
        OutputSchema("import-run", ImportRunOutput, version),
        OutputSchema("grade-patches", GradePatchesOutput, version),
        OutputSchema("proposals", list[ProposalEntry], version, array=True),
        OutputSchema("proposal", ProposalEntry, version),
        OutputSchema("proposal-decision", ProposalDecided, version),
        OutputSchema("schedule", ScheduleEntry, version),
        OutputSchema("schedules", list[ScheduleEntry], version, array=True),
        OutputSchema("schedule-removed", ScheduleRemoved, version),
        OutputSchema("webhooks", list[WebhookEntry], version, array=True),
        OutputSchema("deliveries", list[DeliveryEntry], version, array=True),
        OutputSchema("delivered", DeliveriesOutput, version),
        OutputSchema("speed", SpeedReport, SpeedReport.model_fields["schema_version"].default),
        OutputSchema("agents", AgentsOutput, version),
        OutputSchema("agent-installed", AgentInstalled, version),
    ]
    return {schema.name: schema for schema in schemas}


REPORT = "report"
COMMAND_SCHEMAS: dict[str, str] = {
    "benchmarks": "benchmarks",
    "runs": "runs",
    "show": "show",
    "report": REPORT,
    "validate": "validate",
    "verify": "verify",
    "run": "run",
    "rerun": "run",
    "rescore": "rescore",
    "compare": "compare",
    "history": "history",
    "gate": "gate",
    "pairwise": "pairwise",
    "status": "status",
    "gc": "gc",
    "cancel": "cancel",
    "init": "init",
    "import": "import",
    "import-run": "import-run",
    "grade-patches": "grade-patches",
    "proposals list": "proposals",
    "proposals show": "proposal",
    "proposals accept": "proposal-decision",
    "proposals reject": "proposal-decision",
    "schedule add": "schedule",
    "schedule list": "schedules",
    "schedule remove": "schedule-removed",
    "webhooks list": "webhooks",
    "webhooks deliveries": "deliveries",
    "webhooks test": "delivered",
    "webhooks deliver": "delivered",
    "speed": "speed",
    "agents list": "agents",
    "agents install": "agent-installed",
}
"""Each command with `--format json` and the schema its document follows (`report` is the
single-run report's, report/report.schema.json; several runs print an array of such reports)."""


def schema_resource(name: str) -> str:
    """The schema file's path inside the package, as docs name it."""
    if name == REPORT:
        return "benchyard/report/report.schema.json"
    return f"benchyard/report/{SCHEMA_DIRECTORY}/{output_schemas()[name].file}"


@cache
def shipped_schema(name: str) -> dict[str, Any]:
    """The schema file `name` as installed with the package."""
    if name == REPORT:
        from benchyard.report.schema import shipped_schema as report_schema

        return report_schema()
    source = files("benchyard.report").joinpath(SCHEMA_DIRECTORY, output_schemas()[name].file)
    loaded: dict[str, Any] = json.loads(source.read_text(encoding="utf-8"))
    return loaded


def validate_output(command: str, payload: Any) -> None:
    """Raise jsonschema's ValidationError when `payload` (what `benchyard COMMAND --format json`
    printed, as JSON data) does not follow its shipped schema."""
    import jsonschema

    name = COMMAND_SCHEMAS[command]
    validator = jsonschema.Draft202012Validator(shipped_schema(name))
    documents = payload if name == REPORT and isinstance(payload, list) else [payload]
    for document in documents:
        validator.validate(document)


def main() -> None:
    from benchyard.report.schema import write_schema

    sys.stdout.write(f"wrote {write_schema()}\n")
    directory = Path(__file__).with_name(SCHEMA_DIRECTORY)
    directory.mkdir(exist_ok=True)
    for schema in output_schemas().values():
        target = directory / schema.file
        target.write_text(schema.text(), encoding="utf-8")
        sys.stdout.write(f"wrote {target}\n")


if __name__ == "__main__":
    main()
