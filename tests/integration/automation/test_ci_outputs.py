"""CI outputs: `report --format junit` validated against the JUnit XML schema (an XSD, with a real
validator), failures with their causes, agent output that cannot break the XML; Markdown that fits
a GitHub step summary."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from benchyard.report.step_summary import STEP_SUMMARY_BYTES, fit_step_summary
from benchyard.store.records import CheckRecord
from benchyard.store.store import Store
from tests.integration.queue.helpers import logging_agent, mixed_benchmark
from tests.support import UNSANDBOXED, Cli, attempt_record, run_record

XSD = Path(__file__).parents[2] / "fixtures" / "schemas" / "junit.xsd"


@pytest.fixture(scope="module")
def schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(XSD)


def test_a_run_is_one_valid_testsuite_with_a_testcase_per_scenario_and_epoch(
    tmp_path: Path, cli: Cli, schema: xmlschema.XMLSchema
) -> None:
    bench = mixed_benchmark(tmp_path / "bench", passing=3, failing=2)
    ran = cli(
        "run",
        str(bench),
        "--agent-cmd",
        logging_agent(tmp_path / "log", 0),
        "--epochs",
        "2",
        *UNSANDBOXED,
        "-q",
    )
    assert ran.exit_code == 0, ran.output
    out = tmp_path / "junit.xml"
    written = cli("report", "latest", "--format", "junit", "-o", str(out))
    assert written.exit_code == 0, written.output
    schema.validate(out)
    root = ET.parse(out).getroot()
    (suite,) = root.findall("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("10", "4", "0")
    assert root.get("tests") == "10" and root.get("failures") == "4"
    cases = suite.findall("testcase")
    assert {case.get("classname") for case in cases} == {"fixture-bench.easy", "fixture-bench.hard"}
    assert "p00 [epoch 2]" in {case.get("name") for case in cases}
    failures = [case for case in cases if case.find("failure") is not None]
    assert sorted({case.get("name", "")[:3] for case in failures}) == ["f00", "f01"]
    failure = failures[0].find("failure")
    assert failure is not None and failure.get("type") == "failed"
    assert "equals" in (failure.text or "")
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["benchyard.accuracy"] == "0.6000"
    assert properties["benchyard.passed_of_counted"] == "6/10"


def test_errors_and_hostile_agent_output_stay_valid_xml(
    store: Store, cli: Cli, schema: xmlschema.XMLSchema
) -> None:
    hostile = "bad \x00\x07\x1b[31m ]]> <script>alert(1)</script> & \ufffe done"
    store.create_run(run_record("a1b2c3d4e5f60718", planned_attempts=3))
    store.record_attempts(
        [
            attempt_record("a1b2c3d4e5f60718", "t1", "ok"),
            attempt_record(
                "a1b2c3d4e5f60718",
                "t2",
                "broken",
                verdict="failed",
                score=0.0,
                cause=hostile,
                checks=[CheckRecord(0, "equals", "equals", False, 0.0, 1.0, hostile)],
            ),
            attempt_record(
                "a1b2c3d4e5f60718",
                "t3",
                "infra",
                verdict="error",
                score=0.0,
                cause="sandbox did not start",
                failure_kind="sandbox_start",
            ),
        ]
    )
    result = cli("report", "latest", "--format", "junit")
    assert result.exit_code == 0, result.output
    schema.validate(result.output.encode())
    root = ET.fromstring(result.output.encode())
    (suite,) = root.findall("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "1")
    error = suite.find("testcase[@name='infra']/error")
    assert error is not None and error.get("type") == "sandbox_start"
    failure = suite.find("testcase[@name='broken']/failure")
    assert failure is not None
    message = failure.get("message", "")
    assert "<script>alert(1)</script>" in message and "]]>" in message  # text, escaped
    assert "\x00" not in result.output and "\x1b" not in result.output
    assert "\ufffd" in message


def test_markdown_fits_a_step_summary() -> None:
    small = "# benchyard report\n\n| run |\n|---|\n"
    assert fit_step_summary(small, ["abcd1234"]) == small
    huge = small + "".join(f"- **s{i}** failed: {'x' * 300}\n" for i in range(10_000))
    fitted = fit_step_summary(huge, ["abcd1234"])
    assert len(fitted.encode()) < STEP_SUMMARY_BYTES
    assert fitted.startswith(small)
    assert "more lines left out to fit a step summary" in fitted
    assert "benchyard report abcd1234 --format md -o report.md" in fitted


# The workflow of docs/ci.md and its action (action.yml) are replayed step by step as an
# unprivileged user in tests/e2e/test_ci_workflow.py.
