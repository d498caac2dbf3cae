"""Cron expressions of schedules: five fields (minute, hour, day of month, month, day of week) or
a macro (@hourly, @daily, @weekly, @monthly, @yearly), always in UTC.

Parsing and iteration are croniter's (a maintained library that gets the corners right: the
day-of-month / day-of-week "or" rule, month lengths, names, steps and ranges); this module only
holds benchyard to five fields (croniter also reads a seconds field, which a schedule of benchmark
runs has no use for) and to UTC.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from croniter import CroniterError, croniter

from benchyard.errors import BenchyardError

MACROS = frozenset(
    {"@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually"}
)
MAX_COUNTED = (
    100_000  # firings counted between two moments, at most (a minutely schedule, ~70 days)
)


class CronInvalid(BenchyardError):
    """An expression croniter cannot read, or not five fields."""


@dataclass(frozen=True)
class Cron:
    expression: str

    @classmethod
    def parse(cls, expression: str) -> Cron:
        text = " ".join(expression.split())
        fields = text.split(" ")
        if not (text in MACROS or len(fields) == 5):
            raise CronInvalid(
                f"'{expression}' is not a cron expression: give five fields (minute hour "
                "day-of-month month day-of-week, e.g. '0 3 * * 1') or @hourly, @daily, @weekly, "
                "@monthly, @yearly"
            )
        try:
            croniter(text, datetime(2000, 1, 1, tzinfo=UTC))
        except (CroniterError, ValueError, KeyError) as error:
            raise CronInvalid(f"'{expression}' is not a cron expression: {error}") from None
        return cls(text)

    def next_after(self, moment: datetime) -> datetime:
        """The first firing strictly after `moment`."""
        return _aware(croniter(self.expression, _utc(moment)).get_next(datetime))

    def latest_at_or_before(self, moment: datetime) -> datetime:
        """The last firing at or before `moment`."""
        nudged = _utc(moment) + timedelta(microseconds=1)
        return _aware(croniter(self.expression, nudged).get_prev(datetime))

    def count_between(self, first: datetime, last: datetime) -> int:
        """Firings in [first, last] (first itself is a firing, or the count starts after it),
        counted up to MAX_COUNTED."""
        if first > last:
            return 0
        iterator = croniter(self.expression, _utc(first) - timedelta(microseconds=1))
        count = 0
        while count < MAX_COUNTED:
            if _aware(iterator.get_next(datetime)) > _utc(last):
                break
            count += 1
        return count


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _aware(moment: datetime) -> datetime:
    return _utc(moment)
