"""The live progress bar: attempts done, with passed / failed / timeout / error counters, the
time taken and an estimate of the time left, and the nodes they ran on when that is not this
machine alone (the Ray executor); a legend of its symbols is printed above it."""

from __future__ import annotations

from collections import Counter
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from benchyard.store.records import AttemptRecord, RunRecord

LEGEND = "✓ passed  ✗ failed  ⧖ timed out  ! error (not counted)  ↻ retried;  elapsed, eta"
NODES_SHOWN = 3  # nodes named on the bar; more are counted


class ProgressObserver:
    def __init__(self, total: int, enabled: bool = True) -> None:
        self.total = total
        self.enabled = enabled
        self.counts: Counter[str] = Counter()
        self.nodes: Counter[str] = Counter()  # finished attempts per node they ran on
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
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                TextColumn("{task.fields[nodes]}"),
                console=Console(stderr=True),
                refresh_per_second=8,
                transient=False,
            )
            self._progress.console.print(LEGEND, style="dim", highlight=False)
            self._progress.start()
            self._task = self._progress.add_task(
                "run", total=self.total, counts=self._counts_text(), nodes=""
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
            if record.node:
                self.nodes[record.node] += 1
        if self._progress is not None and self._task is not None:
            self._progress.update(
                self._task,
                completed=self.finished,
                counts=self._counts_text(),
                nodes=self.nodes_text(),
            )

    def nodes_text(self) -> str:
        """`on NODE n, NODE n` where attempts ran elsewhere than this machine, or on several."""
        from benchyard.runner.provenance import host_name

        if not self.nodes or list(self.nodes) == [host_name()]:
            return ""
        shown = [f"{node} {count}" for node, count in self.nodes.most_common(NODES_SHOWN)]
        more = len(self.nodes) - NODES_SHOWN
        return "on " + ", ".join(shown) + (f" (+{more} more nodes)" if more > 0 else "")

    def _counts_text(self) -> str:
        c = self.counts
        text = (
            f"[green]✓ {c['passed']}[/] [red]✗ {c['failed']}[/] "
            f"[yellow]⧖ {c['timeout']}[/] [magenta]! {c['error']}[/]"
        )
        return text + (f" ↻ {c['retried']}" if c["retried"] else "")
