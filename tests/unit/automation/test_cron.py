"""Cron expressions of schedules: five fields or a macro, UTC, firings counted between moments."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from benchyard.automation.cron import Cron, CronInvalid

MONDAY_3AM = datetime(2026, 1, 5, 3, 0, tzinfo=UTC)


def test_the_next_firing_is_strictly_after_the_moment() -> None:
    cron = Cron.parse("0 3 * * 1")
    assert cron.next_after(datetime(2026, 1, 1, tzinfo=UTC)) == MONDAY_3AM
    assert cron.next_after(MONDAY_3AM) == MONDAY_3AM + timedelta(days=7)


def test_the_latest_firing_includes_the_moment_itself() -> None:
    cron = Cron.parse("0 3 * * 1")
    assert cron.latest_at_or_before(MONDAY_3AM) == MONDAY_3AM
    assert cron.latest_at_or_before(MONDAY_3AM - timedelta(seconds=1)) == MONDAY_3AM - timedelta(
        days=7
    )


def test_firings_are_counted_between_two_moments() -> None:
    cron = Cron.parse("*/15 * * * *")
    start = datetime(2026, 1, 1, 0, 0, tzinfo=UTC)
    assert cron.count_between(start, start + timedelta(hours=1)) == 5  # :00 :15 :30 :45 :00
    assert cron.count_between(start + timedelta(minutes=1), start + timedelta(minutes=14)) == 0


def test_naive_moments_are_read_as_utc() -> None:
    cron = Cron.parse("@daily")
    assert cron.next_after(datetime(2026, 3, 1, 12)) == datetime(2026, 3, 2, tzinfo=UTC)


def test_day_of_month_and_day_of_week_follow_the_or_rule() -> None:
    cron = Cron.parse("0 0 13 * 5")  # the 13th, or any Friday
    firings = []
    moment = datetime(2026, 2, 1, tzinfo=UTC)
    for _ in range(4):
        moment = cron.next_after(moment)
        firings.append(moment.day)
    assert firings == [6, 13, 20, 27]  # Fridays of February 2026; the 13th is one too


@pytest.mark.parametrize(
    "expression", ["61 * * * *", "* * * *", "0 0 * * * *", "every day", "@sometimes", ""]
)
def test_anything_but_five_valid_fields_or_a_macro_is_refused(expression: str) -> None:
    with pytest.raises(CronInvalid, match="is not a cron expression"):
        Cron.parse(expression)
