"""The live progress bar: attempts done, with passed / failed / timeout / error counters."""

from __future__ import annotations

from collections import Counter
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from benchyard.store.records import AttemptRecord, RunRecord


class ProgressObserver:
    def __init__(self, total: int, enabled: bool = True) -> None:
        self.total = total
        self.enabled = enabled
        self.counts: Counter[str] = Counter()
        self.finished = 0
        self.run_id: str | None = None
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> ProgressObserver:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                refresh_per_second=8,
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task(
                "run", total=self.total, counts=self._counts_text()
            )
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def started(self, run: RunRecord) -> None:
        self.run_id = run.id
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=f"run {run.id[:8]}")

    def finished_try(self, record: AttemptRecord) -> None:
        if record.superseded:
            self.counts["retried"] += 1
        else:
            self.counts[record.verdict] += 1
            self.finished += 1
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=self.finished, counts=self._counts_text())

    def _counts_text(self) -> str:
        c = self.counts
        text = (
            f"[green]✓ {c['passed']}[/] [red]✗ {c['failed']}[/] "
            f"[yellow]⧖ {c['timeout']}[/] [magenta]! {c['error']}[/]"
        )
        return text + (f" ↻ {c['retried']}" if c["retried"] else "")
