"""The run's spend, shared by its budget gate (runner/spend.py) and its attempts' model bridges in
the worker's process: what its finished tries recorded, and what each try in flight has spent
through its bridge so far. A bridge stops the call that takes it past the run's `--budget`, and
refuses calls once it is spent; the gate starts no attempt once it is spent."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class RunSpend:
    """The run's spend in USD: its finished tries' and its bridges' in flight, under one lock."""

    budget_usd: float | None = None  # the run's --budget; None: calls are never stopped
    settled_usd: float = 0.0  # what the finished tries recorded (agent and judge)
    _in_flight: dict[str, float] = field(default_factory=dict)  # try id: its bridge's calls
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def spent_usd(self) -> float:
        with self._lock:
            return self._total()

    def charge(self, try_id: str, cost_usd: float) -> float:
        """Count a bridge call's cost for the try in flight; the run's spend after it."""
        with self._lock:
            self._in_flight[try_id] = self._in_flight.get(try_id, 0.0) + cost_usd
            return self._total()

    def settle(self, try_id: str, recorded_usd: float) -> None:
        """A finished try: its recorded cost replaces what its bridge had counted."""
        with self._lock:
            self._in_flight.pop(try_id, None)
            self.settled_usd += recorded_usd

    def tab(self, try_id: str) -> RunTab:
        return RunTab(self, try_id)

    def _total(self) -> float:
        return self.settled_usd + sum(self._in_flight.values())


@dataclass(frozen=True)
class RunTab:
    """One try's view of the run's spend, which its bridge charges each call to."""

    spend: RunSpend
    try_id: str

    @property
    def budget_usd(self) -> float | None:
        return self.spend.budget_usd

    def charge(self, cost_usd: float) -> float:
        return self.spend.charge(self.try_id, cost_usd)

    def spent_usd(self) -> float:
        return self.spend.spent_usd()

    def passed(self, spent_usd: float) -> bool:
        """Whether a spend of the run passes its budget."""
        budget = self.spend.budget_usd
        return budget is not None and spent_usd > budget

    def exhausted(self) -> bool:
        """Whether the run's budget is already spent: any further call would pass it."""
        budget = self.spend.budget_usd
        return budget is not None and self.spend.spent_usd() >= budget
