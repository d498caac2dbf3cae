"""Run unittest discovery and write JUnit XML: the `tests` check's built-in runner.

Usage: python3 -I -c <this file> JUNIT_XML START_DIR PATTERN

Prints the tracebacks of failures on stderr and a pytest-style `N passed, N failed` line on stdout.
"""

from __future__ import annotations

import os
import sys
import time
import unittest
import xml.etree.ElementTree as ElementTree
from typing import Any

OK, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"
ErrorInfo = Any  # what unittest passes as `err`: an exc_info tuple, or None


class Recorder(unittest.TextTestResult):
    """A text result that also keeps each test's id, status, message and duration."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cases: list[tuple[str, str, str, float]] = []
        self._started = time.perf_counter()

    def startTest(self, test: unittest.TestCase) -> None:
        self._started = time.perf_counter()
        super().startTest(test)

    def _describe(self, err: ErrorInfo, test: unittest.TestCase) -> str:
        describe: Any = getattr(self, "_exc_info_to_string")  # noqa: B009 (private in typeshed)
        return str(describe(err, test))

    def _keep(self, test: unittest.TestCase, status: str, message: str = "") -> None:
        self.cases.append((test.id(), status, message, time.perf_counter() - self._started))

    def addSuccess(self, test: unittest.TestCase) -> None:
        super().addSuccess(test)
        self._keep(test, OK)

    def addFailure(self, test: unittest.TestCase, err: ErrorInfo) -> None:
        super().addFailure(test, err)
        self._keep(test, FAILED, self._describe(err, test))

    def addError(self, test: unittest.TestCase, err: ErrorInfo) -> None:
        super().addError(test, err)
        self._keep(test, ERROR, self._describe(err, test))

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        super().addSkip(test, reason)
        self._keep(test, SKIPPED, reason)

    def addExpectedFailure(self, test: unittest.TestCase, err: ErrorInfo) -> None:
        super().addExpectedFailure(test, err)
        self._keep(test, OK)

    def addUnexpectedSuccess(self, test: unittest.TestCase) -> None:
        super().addUnexpectedSuccess(test)
        self._keep(test, FAILED, "unexpected success")

    def addSubTest(
        self, test: unittest.TestCase, subtest: unittest.TestCase, err: ErrorInfo
    ) -> None:
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self._keep(subtest, FAILED if failed else ERROR, self._describe(err, test))


def _junit(cases: list[tuple[str, str, str, float]]) -> ElementTree.ElementTree:
    suite = ElementTree.Element("testsuite", name="unittest", tests=str(len(cases)))
    for test_id, status, message, seconds in cases:
        classname, _, name = test_id.rpartition(".")
        case = ElementTree.SubElement(
            suite, "testcase", classname=classname, name=name, time=f"{seconds:.3f}"
        )
        if status != OK:
            tag = {FAILED: "failure", ERROR: "error", SKIPPED: "skipped"}[status]
            lines = message.strip().splitlines()
            element = ElementTree.SubElement(case, tag, message=lines[-1] if lines else "")
            element.text = message
    return ElementTree.ElementTree(suite)


def main(argv: list[str]) -> int:
    junit_path, start_dir, pattern = argv
    top = os.getcwd()
    sys.path.insert(0, top)
    started = time.perf_counter()
    suite = unittest.defaultTestLoader.discover(start_dir, pattern=pattern, top_level_dir=top)
    runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=Recorder)
    result = runner.run(suite)
    assert isinstance(result, Recorder)
    _junit(result.cases).write(junit_path, encoding="utf-8", xml_declaration=True)
    statuses = [case[1] for case in result.cases]
    counts = {status: statuses.count(status) for status in (OK, FAILED, ERROR, SKIPPED)}
    print(
        f"{counts[OK]} passed, {counts[FAILED]} failed, {counts[ERROR]} errors, "
        f"{counts[SKIPPED]} skipped in {time.perf_counter() - started:.2f}s"
    )
    return 0 if counts[FAILED] == counts[ERROR] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
