"""Run unittest discovery and write JUnit XML: the `tests` check's built-in runner.

Usage: python3 -I -c <this file> JUNIT_XML START_DIR PATTERN

Prints `benchyard: ready` first (before anything of the repository's is imported); from then on
its stdout is its report to benchyard, which the tests cannot write to by printing: the runner
keeps that descriptor (not inherited by children) and points descriptor 1 at stderr before the
repository's code is imported. The report is JSON lines: one `{"case": ...}` record per test as it
ends, and `{"end": ...}` with the counts once every test ran and the machinery was found intact.
No end record (an early exit, a crash, a replaced machinery) means the tests did not run to the
end, whatever JUnit file or exit status the tests' process left.

Everything this runner uses is imported before discovery puts the repository on sys.path, so that
a file of the repository (an `xml/` package, a `traceback.py`) cannot stand in for it. The tests
run the repository's code in this process, which can tamper with anything here; as a first line of
defence, the test machinery (unittest's classes, this runner's result) is compared before and after
the tests, and a run that replaced any of it writes no results at all. `assertEqual` also fails
when an operand claims to equal a value that differs from the other one (an `__eq__` that always
says yes, or says yes to every number), as `code_exec` refuses such objects.
"""

from __future__ import annotations

import codecs  # noqa: F401  everything below is imported before the repository is on sys.path
import difflib  # noqa: F401  (unittest's assertion messages)
import encodings.utf_8  # noqa: F401  (the JUnit file's encoding)
import io  # noqa: F401
import json
import linecache  # noqa: F401  (tracebacks)
import os
import pprint  # noqa: F401
import sys
import time
import tokenize  # noqa: F401  (linecache reads sources with it)
import traceback  # noqa: F401
import unittest
import unittest.mock
import warnings  # noqa: F401  (TextTestRunner.run)
import weakref  # noqa: F401  (unittest.signals)
import xml.etree.ElementPath  # noqa: F401
import xml.etree.ElementTree as ElementTree
from typing import Any

OK, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"
READY = b"benchyard: ready\n"
TAMPERED = "benchyard-unittest: the test machinery was replaced while the tests ran"
ErrorInfo = Any  # what unittest passes as `err`: an exc_info tuple, or None
REPORT_FD: list[int] = []  # the runner's report to benchyard (its stdout, kept apart)


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
        for fd in REPORT_FD:  # short records: the report is capped with the rest of stdout
            _report(fd, {"case": test.id(), "status": status})

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


class _Stranger:
    """A value nothing of the repository's can legitimately equal."""

    __slots__ = ()


PLAIN = (type(None), bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset)
EXPECTED_ANY = type(unittest.mock.ANY)
UNLIKELY = (-918_273_645_546_372_819, 0.000123456789e-300, "\x00benchyard\x00", b"\x00by\x00")


def _differing(value: object) -> list[object]:
    """Values that differ from `value` by the plain types' own comparison."""
    probes: list[object] = [_Stranger(), *UNLIKELY]
    if isinstance(value, int | float | complex) and type(value) is not bool:
        probes.append(value + 1)
    elif isinstance(value, str) and type(value) is str:
        probes.append(value + "\x00")
    elif isinstance(value, bytes) and type(value) is bytes:
        probes.append(value + b"\x00")
    elif isinstance(value, list | tuple) and type(value) in (list, tuple):
        probes.append(type(value)([*value, _Stranger()]))
    return probes


def _elements(value: object, limit: int = 1000) -> list[object]:
    """`value` and what it holds (lists, tuples, sets, dicts' keys and values), up to `limit`."""
    found: list[object] = []
    todo = [value]
    while todo and len(found) < limit:
        item = todo.pop()
        found.append(item)
        if isinstance(item, list | tuple | set | frozenset) and type(item) in PLAIN:
            todo.extend(item)
        elif isinstance(item, dict) and type(item) is dict:
            todo.extend(item.keys())
            todo.extend(item.values())
    return found


def _says_yes(element: object, probe: object) -> bool:
    try:
        return bool(element == probe)
    except Exception:  # an array's ambiguous truth, an __eq__ that raises
        return False


def claims_too_much(first: object, second: object) -> str | None:
    """The type of a value in either operand (not of a plain type) that says it equals a value
    differing from the other operand, or from every plain value: its `__eq__` proves nothing."""
    for mine, other in ((first, second), (second, first)):
        for element in _elements(mine):
            if type(element) in PLAIN or (mine is second and type(element) is EXPECTED_ANY):
                continue  # mock.ANY in the expected value (second, by unittest's convention)
            probes = _differing(other) if element is mine else _differing(None)
            if any(_says_yes(element, probe) for probe in probes):
                return type(element).__name__
    return None


def _strict_assert_equal(original: Any) -> Any:
    def assertEqual(self: Any, first: object, second: object, msg: Any = None) -> None:
        original(self, first, second, msg)
        liar = claims_too_much(first, second)
        if liar is not None:
            raise self.failureException(
                f"{liar} claims to equal values that differ from {second!r:.80}: an __eq__ "
                "that says yes to anything proves nothing"
            )

    return assertEqual


def _report(fd: int, record: dict[str, Any]) -> None:
    data = (json.dumps(record) + "\n").encode("utf-8")
    while data:
        data = data[os.write(fd, data) :]


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


def machinery() -> dict[str, object]:
    """The methods of the test machinery, by name: what the repository's code must leave alone."""
    owners = (
        unittest.TestCase,
        unittest.TestSuite,
        unittest.suite.BaseTestSuite,
        unittest.TestResult,
        unittest.TextTestResult,
        unittest.TextTestRunner,
        unittest.TestLoader,
        getattr(unittest.case, "_Outcome", Recorder),  # private: absent from some versions
        Recorder,
    )
    found: dict[str, object] = {
        f"{owner.__module__}.{owner.__qualname__}.{name}": value
        for owner in owners
        for name, value in vars(owner).items()
        if callable(value) or isinstance(value, classmethod | staticmethod | property)
    }
    found["unittest.main"] = unittest.main
    found["sys.settrace"], found["sys.setprofile"] = sys.gettrace(), sys.getprofile()
    return found


def replaced(before: dict[str, object]) -> list[str]:
    after = machinery()
    return [name for name, value in before.items() if after.get(name) is not value]


def main(argv: list[str]) -> int:
    os.write(1, READY)
    junit_path, start_dir, pattern = argv
    report = os.dup(1)  # not inheritable: children of the tests never get it
    os.dup2(2, 1)  # what the tests print goes to stderr, never into the report
    REPORT_FD.append(report)
    strict = _strict_assert_equal(unittest.TestCase.assertEqual)
    unittest.TestCase.assertEqual = strict  # type: ignore[method-assign]
    untouched = machinery()
    # kept before the repository's code can replace them
    write_junit, say, recorder, runner_class = _junit, print, Recorder, unittest.TextTestRunner
    send = _report
    top = os.getcwd()
    sys.path.insert(0, top)
    started = time.perf_counter()
    suite = unittest.TestLoader().discover(start_dir, pattern=pattern, top_level_dir=top)
    runner = runner_class(stream=sys.stderr, verbosity=2, resultclass=recorder)
    result = runner.run(suite)
    changed = replaced(untouched)
    if changed or type(result) is not recorder:
        say(f"{TAMPERED}: {', '.join(changed[:5]) or 'the result'}", file=sys.stderr)
        return 3
    write_junit(result.cases).write(junit_path, encoding="utf-8", xml_declaration=True)
    statuses = [case[1] for case in result.cases]
    counts = {status: statuses.count(status) for status in (OK, FAILED, ERROR, SKIPPED)}
    say(
        f"{counts[OK]} passed, {counts[FAILED]} failed, {counts[ERROR]} errors, "
        f"{counts[SKIPPED]} skipped in {time.perf_counter() - started:.2f}s",
        file=sys.stderr,
    )
    send(report, {"end": True, "cases": len(result.cases), **counts})
    return 0 if counts[FAILED] == counts[ERROR] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
