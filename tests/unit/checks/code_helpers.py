"""Helpers for the code checks' tests: a real sandbox (never skipped when missing), and a real
verification workspace built the runner's way: pristine fixtures, the agent's change collected as
a patch, then applied to a fresh copy with the verification-only files over it."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from benchyard.checks.base import CheckResult, Evidence
from benchyard.runner.two_phase import CodingAttempt, Workspace
from benchyard.runner.workdir import make_scratch_layout, prepare_dirs
from benchyard.sandbox.base import Sandbox, SandboxUnavailable
from benchyard.sandbox.registry import build_sandbox, sandbox_names
from benchyard.spec.models import Scenario

from .helpers import check_type

HOW_TO_INSTALL = {
    "bwrap": "install bubblewrap (apt-get install bubblewrap; `make setup` does it)",
    "docker": "install docker.io, start dockerd and build the sandbox image (`make setup` does it)",
}
OUTPUT_CAP_BYTES = 1024 * 1024
Change = dict[str, str | bytes | None]  # path -> new content, None to delete


@functools.cache
def code_sandbox(name: str = "bwrap") -> Sandbox:
    """The sandbox that code checks run in; a missing one fails the test with how to install it
    (these tests are never skipped: CI installs every sandbox they use)."""
    if name not in sandbox_names():
        pytest.fail(f"no sandbox named '{name}' is registered (known: {sandbox_names()})")
    try:
        return build_sandbox(name)
    except SandboxUnavailable as error:
        pytest.fail(f"the {name} sandbox is unavailable: {error}. To fix: {HOW_TO_INSTALL[name]}")


def coding_scenario(hidden: dict[str, str] | None = None, **extra: Any) -> Scenario:
    """A repository scenario whose fixtures are the directory `repo` next to it."""
    return Scenario.model_validate(
        {
            "id": "s1",
            "stimulus": {"task": "change the code"},
            "fixtures": {
                "files": [{"src": "repo", "dest": "."}],
                "verification": [
                    {"dest": dest, "content": content} for dest, content in (hidden or {}).items()
                ],
            },
            # diff_quality reads the agent's change: the attempt collects it as a patch.
            "checks": [{"type": "equals", "value": "x"}, {"type": "diff_quality"}],
            **extra,
        }
    )


def write_files(root: Path, files: Change) -> None:
    for relative, content in files.items():
        path = root / relative
        if content is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


@asynccontextmanager
async def coding_attempt(
    tmp_path: Path,
    pristine: dict[str, str],
    change: Change | Callable[[Path], None] | None = None,
    hidden: dict[str, str] | None = None,
    sandbox: Sandbox | None = None,
    scenario: Scenario | None = None,
) -> AsyncIterator[CodingAttempt]:
    """An attempt whose agent applied `change` to the pristine files, its patch collected."""
    bench, scratch = tmp_path / "bench", tmp_path / "scratch"
    (bench / "repo").mkdir(parents=True)
    write_files(bench / "repo", dict(pristine))
    scratch.mkdir()
    make_scratch_layout(scratch)
    scenario = scenario or coding_scenario(hidden)
    dirs = prepare_dirs(scratch, "a1", scenario, bench)
    attempt = await CodingAttempt(
        scenario,
        bench,
        dirs.workdir,
        scratch / "verify" / "a1",
        sandbox or code_sandbox(),
        OUTPUT_CAP_BYTES,
    ).start()
    if callable(change):
        change(dirs.workdir)
    else:
        write_files(dirs.workdir, change or {})
    await attempt.collect()
    try:
        yield attempt
    finally:
        attempt.remove()
        dirs.remove()


@asynccontextmanager
async def workspace(
    tmp_path: Path,
    pristine: dict[str, str] | None = None,
    change: Change | Callable[[Path], None] | None = None,
    hidden: dict[str, str] | None = None,
    sandbox: Sandbox | None = None,
) -> AsyncIterator[Workspace]:
    """A code check's verification workspace after the agent applied `change`."""
    async with (
        coding_attempt(tmp_path, pristine or {}, change, hidden, sandbox) as attempt,
        attempt.open_workspace() as opened,
    ):
        yield opened


async def evaluate(
    name: str, code: Workspace | None, answer: str = "", **params: Any
) -> CheckResult:
    """Validate `params` as the loader would, then evaluate the check in the workspace."""
    kind = check_type(name)
    assert kind.needs_code, f"{name} should be registered with needs_code=True"
    evidence = Evidence(answer=answer, scenario=coding_scenario(), code=code)
    outcome = kind.evaluate(kind.params.model_validate(params), evidence)
    result = await outcome if not isinstance(outcome, CheckResult) else outcome
    assert isinstance(result, CheckResult)
    return result
