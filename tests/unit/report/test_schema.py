"""The JSON report's schema ships as a JSON Schema file generated from the report's model, kept up
to date; every report rendered as JSON in the test suite is validated against it (conftest.py)."""

from __future__ import annotations

import json
from importlib.resources import files

import jsonschema
import pytest

from benchyard.report.build import build_report
from benchyard.report.model import SCHEMA_VERSION, RunReport
from benchyard.report.schema import SCHEMA_FILE, schema_text, validate_report
from benchyard.store.store import Store
from tests.unit.report.records import Row, write_run


def test_the_shipped_schema_is_the_models() -> None:
    shipped = files("benchyard.report").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    assert shipped == schema_text(), (
        "report.schema.json is out of date: run `.venv/bin/python -m benchyard.report.output_schemas`"
    )
    schema = json.loads(shipped)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"].endswith(SCHEMA_VERSION)
    assert schema["additionalProperties"] is False and "summary" in schema["required"]


def test_a_report_that_strays_from_the_schema_is_caught(store: Store) -> None:
    rows = [Row("a", "passed", epoch=1), Row("a", "failed", epoch=2), Row("b", "error")]
    report = build_report(store, store.get_run(write_run(store, "a" * 16, rows)))
    payload = report.model_dump(mode="json")  # validated by conftest.py's fixture too
    validate_report(payload)
    for broken in (
        {**payload, "surprise": 1},
        {**payload, "summary": {**payload["summary"], "passed": "one"}},
        {**payload, "categories": {"general": {"passed": 1}}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            validate_report(broken)


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")
def test_the_fixture_validates_what_tests_dump(store: Store) -> None:
    report = build_report(store, store.get_run(write_run(store, "b" * 16, [Row("a", "passed")])))
    strayed = report.model_copy(update={"schema_version": 1})  # a number where text belongs
    with pytest.raises(jsonschema.ValidationError):
        strayed.model_dump(mode="json")
    assert isinstance(RunReport.model_dump(report), dict)  # Python mode is not JSON: not checked
