"""Runs as JUnit XML, the test-report format CI systems read (GitHub, GitLab, Jenkins): one
`<testsuite>` per run, one `<testcase>` per scenario and epoch (its class the benchmark and the
category, its time the attempt's duration), a `<failure>` for a failed or timed-out attempt and an
`<error>` for an error (benchyard's own fault, left out of accuracy), each with its cause. The
run's accuracy with its interval, commit and errors are the suite's properties. Agent output is
untrusted: the XML writer escapes text, and characters XML 1.0 cannot hold are replaced (U+FFFD)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass

from benchyard.report.model import RunReport
from benchyard.store.records import AttemptRecord, RunRecord
from benchyard.store.store import Store

MESSAGE_CHARS = 500
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def clean(text: str) -> str:
    """Text with the characters XML 1.0 forbids (most control characters) replaced."""
    return _NOT_XML.sub("\ufffd", text)


@dataclass(frozen=True)
class JunitRun:
    report: RunReport
    attempts: list[AttemptRecord]  # the final attempts the report counts


def junit_runs(store: Store, runs: Sequence[RunRecord], merged: bool = False) -> list[JunitRun]:
    from benchyard.report.build import build_report, final_attempts

    return [
        JunitRun(
            build_report(store, run, merged=merged),
            final_attempts(store, store.run_chain(run) if merged else [run]),
        )
        for run in runs
    ]


def to_junit(runs: Sequence[JunitRun]) -> str:
    suites = ET.Element("testsuites", {"name": "benchyard"})
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    seconds = 0.0
    for run in runs:
        suite = _suite(run)
        suites.append(suite)
        for key in totals:
            totals[key] += int(suite.get(key, "0"))
        seconds += float(suite.get("time", "0"))
    for key, value in totals.items():
        suites.set(key, str(value))
    suites.set("time", f"{seconds:.3f}")
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, "unicode") + "\n"


def _suite(junit_run: JunitRun) -> ET.Element:
    report, attempts = junit_run.report, junit_run.attempts
    run, summary = report.run, report.summary
    suite = ET.Element(
        "testsuite",
        {
            "name": clean(_suite_name(report)),
            "id": run.id,
            "tests": str(len(attempts)),
            "failures": str(sum(1 for a in attempts if a.verdict in ("failed", "timeout"))),
            "errors": str(sum(1 for a in attempts if a.verdict == "error")),
            "skipped": "0",
            "time": f"{sum(a.duration_sec for a in attempts):.3f}",
            "timestamp": run.started_at.strftime("%Y-%m-%dT%H:%M:%S"),
            "hostname": clean(run.host),
        },
    )
    properties = ET.SubElement(suite, "properties")
    accuracy = "" if summary.accuracy is None else f"{summary.accuracy:.4f}"
    bounds = summary.accuracy_ci95
    interval = "" if bounds is None else f"{bounds[0]:.4f}-{bounds[1]:.4f}"
    for name, value in (
        ("benchyard.run", run.id),
        ("benchyard.status", run.status),
        ("benchyard.benchmark_hash", run.benchmark.hash),
        ("benchyard.agent_commit", run.agent.commit or ""),
        ("benchyard.accuracy", accuracy),
        ("benchyard.accuracy_ci95", interval),
        ("benchyard.passed_of_counted", f"{summary.passed}/{summary.counted}"),
        ("benchyard.errors", str(summary.errors)),
    ):
        ET.SubElement(properties, "property", {"name": name, "value": clean(value)})
    epochs = int(run.settings.get("epochs") or 1)
    for attempt in attempts:
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": clean(f"{run.benchmark.name}.{attempt.category}"),
                "name": clean(
                    attempt.scenario_id + (f" [epoch {attempt.epoch}]" if epochs > 1 else "")
                ),
                "time": f"{attempt.duration_sec:.3f}",
            },
        )
        if attempt.verdict != "passed":
            _outcome(case, attempt)
    return suite


def _suite_name(report: RunReport) -> str:
    """Unique per run, and per merge: `starter 1.0 / mine / run 1a2b3c4d (merged: 0f9e8d7c +
    1a2b3c4d)`. CI systems key test results by suite name, so two runs of one agent (a run and its
    rerun) must not share one."""
    run = report.run
    name = f"{run.benchmark.name} {run.benchmark.version} / {run.agent.name} / run {run.id[:8]}"
    if len(run.merged_runs) > 1:
        name += f" (merged: {' + '.join(r[:8] for r in run.merged_runs)})"
    elif run.lineage:
        name += f" ({'; '.join(run.lineage)})"
    return name


def _outcome(case: ET.Element, attempt: AttemptRecord) -> None:
    tag = "error" if attempt.verdict == "error" else "failure"
    cause = clean(attempt.cause or attempt.verdict)
    message = cause if len(cause) <= MESSAGE_CHARS else cause[: MESSAGE_CHARS - 1] + "…"
    kind = attempt.failure_kind or attempt.verdict
    element = ET.SubElement(case, tag, {"message": message, "type": clean(kind)})
    checks = "".join(
        f"\n  {'pass' if check.passed else 'FAIL'} {check.label}: {check.reason}"
        for check in attempt.checks
    )
    element.text = clean(
        f"{attempt.verdict}{f' ({attempt.failure_kind})' if attempt.failure_kind else ''}: "
        f"{attempt.cause or ''}{checks}\nattempt {attempt.id} of run {attempt.run_id}"
    )
