"""The JSON report's schema as a JSON Schema file shipped in the package (`report.schema.json`,
beside this module), generated from the pydantic model in report/model.py. Regenerate it after a
change to the model with `python -m benchyard.report.schema` (a test fails until it is); that also
regenerates every command's schema (report/output_schemas.py, docs/json-output.md)."""

from __future__ import annotations

import json
import sys
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


def main() -> None:
    """Write report.schema.json, then every command's schema (report/output_schemas.py): `run`'s
    and `rescore`'s hold the report, so that a change to it reaches them too."""
    from benchyard.report import output_schemas

    target = Path(__file__).with_name(SCHEMA_FILE)
    target.write_text(schema_text(), encoding="utf-8")
    sys.stdout.write(f"wrote {target}\n")
    output_schemas.main()


if __name__ == "__main__":
    main()
