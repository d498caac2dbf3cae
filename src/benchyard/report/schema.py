"""The JSON report's schema as a JSON Schema file shipped in the package (`report.schema.json`,
beside this module), generated from the pydantic model in report/model.py. Regenerate it after a
change to the model with `python -m benchyard.report.output_schemas`, which writes it first and then
every command's schema (docs/json-output.md); a test fails until it is."""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from benchyard.report.model import SCHEMA_VERSION, RunReport

SCHEMA_FILE = "report.schema.json"
SCHEMA_ID = f"urn:benchyard:report:{SCHEMA_VERSION}"


def generated_schema() -> dict[str, Any]:
    """The schema of `benchyard report --format json` (one run), from the model."""
    schema = RunReport.model_json_schema(mode="serialization")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
    }


def schema_text() -> str:
    return json.dumps(generated_schema(), indent=2, sort_keys=True) + "\n"


@cache
def shipped_schema() -> dict[str, Any]:
    """The schema file as installed with the package."""
    loaded: dict[str, Any] = json.loads(
        files("benchyard.report").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    )
    return loaded


def validate_report(payload: Any) -> None:
    """Raise jsonschema's ValidationError when `payload` (a report as JSON data) does not follow
    the shipped schema."""
    import jsonschema

    jsonschema.Draft202012Validator(shipped_schema()).validate(payload)


def write_schema() -> Path:
    """Write report.schema.json beside this module from the model; return its path."""
    target = Path(__file__).with_name(SCHEMA_FILE)
    target.write_text(schema_text(), encoding="utf-8")
    return target
