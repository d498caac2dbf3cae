"""Reading a test run's results: the report of a bundled runner (checks/scripts/unittest_junit.py,
pytest_junit.py), JUnit XML (a benchmark's own command: pytest, unittest, most runners), or the
summary line a runner prints (`3 passed, 1 failed in 0.2s`, unittest's `Ran 4 tests` +
`FAILED (failures=1)`)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

from benchyard.untrusted import UntrustedFileRefused, read_capped

PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"
STATUSES = (PASSED, FAILED, ERROR, SKIPPED)
RUNNER_REPORT = "runner's report"
JUNIT_READ_CAP = 16 * 1024 * 1024
_PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped)\b")
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ", re.MULTILINE)
_UNITTEST_VERDICT = re.compile(r"^(OK|FAILED)(?: \(([^)]*)\))?\s*$", re.MULTILINE)


@dataclass(frozen=True)
class CaseResult:
    id: str  # "module.Class.test_name" as JUnit writes it (classname + "." + name)
    status: str  # passed | failed | error | skipped


@dataclass(frozen=True)
class SuiteResult:
    passed: int
    failed: int
    errors: int
    skipped: int
    cases: tuple[CaseResult, ...] = ()  # empty when only a summary line was read
    source: str = "summary line"

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.errors + self.skipped

    def describe(self) -> str:
        counts = f"{self.passed} passed, {self.failed} failed, {self.errors} errors"
        return counts + (f", {self.skipped} skipped" if self.skipped else "")


def read_junit(path: Path) -> SuiteResult | None:
    """The test cases of a JUnit XML file; None when there is no such file or it is not JUnit.

    The file is written by code that ran the agent's: it is read without following a link, never
    waited on (a FIFO) and capped; UntrustedFileRefused when it is not a regular file.
    """
    try:
        root = ElementTree.fromstring(read_capped(path, JUNIT_READ_CAP))
    except UntrustedFileRefused:
        raise
    except (OSError, ElementTree.ParseError):
        return None
    if root.tag not in ("testsuite", "testsuites"):
        return None
    cases = tuple(_case(element) for element in root.iter("testcase"))
    statuses = [case.status for case in cases]
    return SuiteResult(
        statuses.count(PASSED),
        statuses.count(FAILED),
        statuses.count(ERROR),
        statuses.count(SKIPPED),
        cases,
        "JUnit XML",
    )


def read_report(output: bytes) -> tuple[SuiteResult | None, str | None]:
    """The results a bundled runner reported on its stdout (JSON lines: a `case` record per test,
    then one `end` record with the counts), or None and why they are not to be believed: no end
    record (the tests' process ended before the runner did), a record after it, a line that is no
    record, or counts that do not match the cases."""
    cases: list[CaseResult] = []
    end: dict[str, object] | None = None
    for line in output.splitlines():
        if not line.strip():
            continue
        record = _record(line)
        if record is None or end is not None:
            return None, "the runner's report was written to by something else"
        if record.get("end") is True:
            end = record
        elif isinstance(record.get("case"), str) and record.get("status") in STATUSES:
            cases.append(CaseResult(str(record["case"]), str(record["status"])))
        else:
            return None, "the runner's report was written to by something else"
    if end is None:
        return None, "the runner did not report its end (the tests' process ended before it)"
    statuses = [case.status for case in cases]
    counts = [statuses.count(status) for status in STATUSES]
    if [end.get(status) for status in STATUSES] != counts or end.get("cases") != len(cases):
        return None, "the runner's end record does not match the tests it reported"
    passed, failed, errors, skipped = counts
    return SuiteResult(passed, failed, errors, skipped, tuple(cases), RUNNER_REPORT), None


def _record(line: bytes) -> dict[str, object] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _case(element: ElementTree.Element) -> CaseResult:
    classname, name = element.get("classname", ""), element.get("name", "")
    status = PASSED
    for tag, meaning in (("failure", FAILED), ("error", ERROR), ("skipped", SKIPPED)):
        if element.find(tag) is not None:
            status = meaning
            break
    return CaseResult(f"{classname}.{name}" if classname else name, status)


def read_summary(output: str) -> SuiteResult | None:
    """The counts of the last summary line in a runner's output (pytest style, else unittest)."""
    for line in reversed(output.splitlines()):
        counts = {kind.rstrip("s"): int(number) for number, kind in _PYTEST_COUNT.findall(line)}
        if counts.get("passed") is not None or counts.get("failed") is not None:
            return SuiteResult(
                counts.get("passed", 0),
                counts.get("failed", 0),
                counts.get("error", 0),
                counts.get("skipped", 0),
            )
    return _read_unittest(output)


def _read_unittest(output: str) -> SuiteResult | None:
    ran, verdicts = _UNITTEST_RAN.findall(output), _UNITTEST_VERDICT.findall(output)
    if not ran or not verdicts:
        return None
    details = dict(
        (key.strip(), int(value))
        for key, _, value in (part.partition("=") for part in verdicts[-1][1].split(",") if part)
    )
    failed, errors, skipped = (details.get(key, 0) for key in ("failures", "errors", "skipped"))
    return SuiteResult(int(ran[-1]) - failed - errors - skipped, failed, errors, skipped)


def normalize(test_id: str) -> str:
    """One spelling for a test's id: `tests/test_a.py::TestX::test_b[1.5]` -> `tests.test_a.TestX.test_b[1.5]`."""
    head, bracket, parameters = test_id.strip().partition("[")
    head = re.sub(r"\.py(?=::|$)", "", head).replace("::", ".").replace("/", ".")
    return head + bracket + parameters


def matching(cases: tuple[CaseResult, ...], wanted: str) -> list[CaseResult]:
    """The cases a listed test id names: the same id, or the id's trailing parts (`TestX.test_b`)."""
    target = normalize(wanted)
    return [
        case
        for case in cases
        if normalize(case.id) == target or normalize(case.id).endswith("." + target)
    ]
