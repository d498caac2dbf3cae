"""Sandboxed work outside a run (`verify`'s references and `derive` programs, rescoring): a scratch
directory and a sandbox, each made on first use (a benchmark that needs neither makes neither),
the directory removed on exit."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Self

from benchyard.runner.isolation import request_for
from benchyard.runner.workdir import make_scratch_layout
from benchyard.sandbox.base import Sandbox
from benchyard.sandbox.registry import SandboxOptions, build_sandbox
from benchyard.spec.loader import Benchmark
from benchyard.spec.models import Scenario
from benchyard.untrusted import remove_tree

if TYPE_CHECKING:
    from benchyard.runner.execute import RunSettings


class ScratchSandbox:
    """A context manager holding one benchmark's scratch directory and sandbox."""

    scratch_prefix = "benchyard-scratch-"

    def __init__(self, benchmark: Benchmark, settings: RunSettings) -> None:
        self.benchmark = benchmark
        self.settings = settings
        self._scratch: Path | None = None
        self._sandbox: Sandbox | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._scratch is not None:
            remove_tree(self._scratch, ignore_errors=True)

    def _scratch_dir(self) -> Path:
        if self._scratch is None:
            work_root = self.settings.work_root
            self._scratch = Path(tempfile.mkdtemp(prefix=self.scratch_prefix, dir=work_root))
            make_scratch_layout(self._scratch)
        return self._scratch

    def _sandbox_for(self, scenario: Scenario) -> Sandbox:
        if self._sandbox is None:
            self._sandbox = build_sandbox(self.settings.sandbox, SandboxOptions())
        return self._sandbox.configured(request_for(self.benchmark, scenario))
