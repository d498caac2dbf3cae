"""A big run prints in seconds: `show` lists the first SHOWN_ATTEMPTS tries and says how to get
the rest, the terminal report lists the first SHOWN_ROWS failures and flags and says where every
one is; Markdown and JSON keep every failure and flag."""

from __future__ import annotations

import json

from benchyard.cli.render import SHOWN_ATTEMPTS
from benchyard.report.render import SHOWN_ROWS
from benchyard.store.store import Store
from tests.support import Cli, attempt_record, run_record

COUNT = max(SHOWN_ATTEMPTS, SHOWN_ROWS) + 25


def _big_failing_run(store: Store) -> str:
    store.create_run(run_record("b" * 16, planned_attempts=COUNT))
    store.record_attempts(
        [
            attempt_record(
                "b" * 16, f"{index:016x}", f"s{index:04d}", verdict="failed", score=0.0,
                cause=f"wrong answer {index}", turns=3, hit_max_turns=True,
            )
            for index in range(COUNT)
        ]
    )  # fmt: skip
    return "b" * 16


def test_show_prints_the_first_tries_and_says_how_to_see_all(cli: Cli, store: Store) -> None:
    run_id = _big_failing_run(store)

    shown = cli("show", run_id)

    assert shown.exit_code == 0, shown.output
    assert f"s{SHOWN_ATTEMPTS - 1:04d}" in shown.output
    assert f"s{SHOWN_ATTEMPTS:04d}" not in shown.output
    assert f"the first {SHOWN_ATTEMPTS} of {COUNT} tries" in shown.output
    assert "--format json" in shown.output
    everything = json.loads(cli("show", run_id, "--format", "json").stdout)
    assert len(everything["attempts"]) == COUNT


def test_the_terminal_report_caps_its_failures_markdown_lists_them_all(
    cli: Cli, store: Store
) -> None:
    run_id = _big_failing_run(store)

    table = cli("report", run_id)
    markdown = cli("report", run_id, "--format", "md")

    assert table.output.count("wrong answer ") == SHOWN_ROWS
    assert f"the first {SHOWN_ROWS} of {COUNT} failures" in table.output
    assert f"wrong answer {COUNT - 1}" in markdown.output  # an audit lists every failure


def test_the_terminal_report_caps_its_flags_json_lists_them_all(cli: Cli, store: Store) -> None:
    run_id = _big_failing_run(store)

    table = cli("report", run_id)
    everything = json.loads(cli("report", run_id, "--format", "json").stdout)

    assert table.output.count("wanted another turn after 3 turns") == SHOWN_ROWS
    assert f"the first {SHOWN_ROWS} of {COUNT} flags; every one, with its detail" in table.output
    assert [flag["kind"] for flag in everything["flags"]] == ["hit_max_turns"] * COUNT
