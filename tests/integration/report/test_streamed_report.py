"""A run's report whose failures and flags are read as they are written (report/aggregated.py's
StreamedReport) is the report built whole: `report --format json` writes the same text, the
terminal table lists the same first rows and counts, and the flags come in the whole report's
order (Python's order of scenario ids, which a PostgreSQL collation need not keep)."""

from __future__ import annotations

import json
from pathlib import Path

from benchyard.report import build
from benchyard.report.build import build_report, streamed_report
from benchyard.report.flags import sorted_flags
from benchyard.report.listing import strict_json
from benchyard.report.render import Shown
from benchyard.store.store import Store
from tests.integration.report.test_aggregated import RUN, _reports
from tests.integration.runner.test_imports import imported_by
from tests.support import Cli, attempt_record, run_record, scenario, write_benchmark

# Ordered apart by code point and by a linguistic collation (en_US: case and punctuation last)
SCENARIOS = ("B", "a-c", "ab", "Ab", "a_b", "b", "é", "z")


def test_the_streamed_json_report_is_the_whole_ones_text(cli: Cli, store: Store) -> None:
    counted, folded = _reports(store)

    written = cli("report", RUN, "--format", "json")

    assert written.exit_code == 0, written.output
    assert written.stdout == strict_json(counted.model_dump(mode="json"))
    parsed = json.loads(written.stdout)
    assert parsed["failures"] == [f.model_dump(mode="json") for f in folded.failures]
    assert parsed["flags"] == [f.model_dump(mode="json") for f in folded.flags]


def test_two_streamed_json_reports_are_the_whole_ones(cli: Cli, store: Store) -> None:
    counted, _ = _reports(store)

    written = cli("report", RUN, RUN, "--format", "json")

    assert written.stdout == strict_json([counted.model_dump(mode="json")] * 2)


def test_the_table_lists_what_the_whole_report_would(store: Store) -> None:
    counted, _ = _reports(store)

    shown = Shown.streamed(streamed_report(store, store.get_run(RUN)))

    assert shown == Shown.of(counted)
    assert shown.flag_count == len(counted.flags) and shown.failure_count > 30


def test_the_flags_come_in_code_point_order_of_scenario(store: Store) -> None:
    run_id = "c" * 16
    store.create_run(
        run_record(run_id, planned_attempts=2 * len(SCENARIOS), settings={"epochs": 2})
    )
    store.record_attempts(
        [
            attempt_record(
                run_id, f"{n:032x}", scenario, epoch=epoch, hit_max_turns=True, turns=2,
                verdict="failed" if epoch == 2 and n % 4 == 1 else "passed",
            )
            for n, (scenario, epoch) in enumerate(
                (scenario, epoch) for scenario in SCENARIOS for epoch in (1, 2)
            )
        ]
    )  # fmt: skip
    run = store.get_run(run_id)

    streamed = list(streamed_report(store, run).flags())

    assert streamed == sorted_flags(streamed)
    assert streamed == build_report(store, run, merged=True).flags  # folded in Python
    assert [(f.scenario_id, f.kind) for f in streamed[1:4]] == [
        ("Ab", "hit_max_turns"), ("B", "flaky"), ("B", "hit_max_turns")
    ]  # fmt: skip
    assert [f.scenario_id for f in streamed if f.kind == "flaky"] == ["B", "a_b", "ab", "é"]


def test_a_report_of_benchyards_own_format_leaves_the_importers_out(
    tmp_path: Path, db_url: str
) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "1")])
    imported_by(["run", str(bench), "--agent", "oracle", "-q", "--db", db_url], tmp_path)

    for args in (["report", "latest"], ["report", "latest", "--format", "json"]):
        modules = imported_by([*args, "--db", db_url], tmp_path)

        assert "benchyard.report.build" in modules
        assert sorted(m for m in modules if m.startswith("benchyard.importers")) == []


def test_the_report_reads_the_setting_the_importers_write() -> None:
    """report/build.py keeps the setting's name as a value, so that a report does not import
    the importers."""
    from benchyard.importers.metrics import PROVENANCE_SETTING

    assert build.PROVENANCE_SETTING == PROVENANCE_SETTING
