"""Run pytest with JUnit XML: the `tests` check's runner for `framework: pytest`.

Usage: python3 -I -c <this file> JUNIT_XML

pytest is imported before the working directory is on sys.path (and `-I` leaves out the user site
in the workdir), so that a `pytest.py` of the repository cannot stand in for it; then the working
directory goes first on sys.path, as `python3 -m pytest` does. Prints `benchyard: ready` first, or
`benchyard: cannot run: <why>` when the sandbox's python3 has no pytest.

From `ready` on, stdout is the runner's report to benchyard, which the tests cannot write to by
printing: the runner keeps that descriptor (not inherited by children) and points descriptor 1 at
stderr before pytest imports anything of the repository's. The report is JSON lines: a
`{"case": ...}` record per test as it ends (a collection error is an `error` case), then
`{"end": ...}` with the counts once pytest returned. No end record (an early exit, a crash) means
the tests did not run to the end, whatever JUnit file or exit status the tests' process left.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

READY = b"benchyard: ready\n"
CANNOT_RUN = b"benchyard: cannot run: "
OK, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"


def _report(fd: int, record: dict[str, Any]) -> None:
    data = (json.dumps(record) + "\n").encode("utf-8")
    while data:
        data = data[os.write(fd, data) :]


class Reporter:
    """A pytest plugin: each test's outcome (its phases together, as JUnit XML counts them)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.statuses: dict[str, str] = {}
        self.counts = {OK: 0, FAILED: 0, ERROR: 0, SKIPPED: 0}

    def pytest_runtest_logreport(self, report: Any) -> None:
        status = self._status(report)
        if status is None:
            return
        current = self.statuses.get(report.nodeid, OK)
        if current == OK or (current == SKIPPED and status != OK):
            self.statuses[report.nodeid] = status

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self._case(nodeid, self.statuses.pop(nodeid, OK))

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self._case(report.nodeid or "collection", ERROR)

    def _case(self, nodeid: str, status: str) -> None:
        """A short record (the report is capped with the rest of stdout; failures' tracebacks
        go to stderr as pytest prints them)."""
        self.counts[status] += 1
        _report(self.fd, {"case": nodeid, "status": status})

    @staticmethod
    def _status(report: Any) -> str | None:
        if report.when == "call":
            if hasattr(report, "wasxfail"):
                return SKIPPED if report.skipped else FAILED  # xfailed; xpassed (strict)
            return OK if report.passed else FAILED if report.failed else SKIPPED
        if report.failed:
            return ERROR  # setup or teardown
        return SKIPPED if report.skipped else None


def main(argv: list[str]) -> int:
    (junit_path,) = argv
    try:
        import pytest
    except ImportError as error:
        os.write(1, CANNOT_RUN + f"pytest is not installed for python3 ({error})\n".encode())
        return 4
    os.write(1, READY)
    report = os.dup(1)  # not inheritable: children of the tests never get it
    os.dup2(2, 1)  # what the tests print goes to stderr, never into the report
    send, reporter = _report, Reporter(report)
    sys.path.insert(0, os.getcwd())
    arguments = ["-q", "-rA", "-p", "no:cacheprovider", f"--junitxml={junit_path}"]
    status = int(pytest.main(arguments, plugins=[reporter]))
    send(report, {"end": True, "cases": sum(reporter.counts.values()), **reporter.counts})
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
