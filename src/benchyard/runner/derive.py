"""Working a reference answer out again (`verify`): a scenario's `derive` program runs in a fresh
sandbox of the run's kind, with the stimulus in `stimulus.json`, and its last line of output must
be the reference answer. A brute-force count, a puzzle solver, a search of a generated haystack:
a case whose author typed the wrong number is caught before any model is blamed for it."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.scratch import ScratchSandbox
from benchyard.runner.two_phase import VERIFY_ENV
from benchyard.runner.workdir import prepare_dirs
from benchyard.spec.models import Scenario

if TYPE_CHECKING:
    pass

OUTPUT_CAP_BYTES = 256 * 1024
SHOWN_CHARS = 200


class Deriver(ScratchSandbox):
    """Runs `derive` programs of one benchmark's scenarios; its scratch directory and sandbox are
    made on first use and the directory removed on exit."""

    scratch_prefix = "benchyard-derive-"

    async def derive(self, scenario: Scenario) -> str:
        """The answer the scenario's program works out (its last line of output); raises
        AttemptFailure when the program fails or prints nothing."""
        derivation = scenario.derive
        assert derivation is not None
        scratch = self._scratch_dir()
        dirs = prepare_dirs(
            scratch, uuid.uuid4().hex, scenario, self.benchmark.scenario_dir(scenario)
        )
        try:
            stimulus = {"turns": scenario.stimulus.turns, "system": scenario.stimulus.system}
            (dirs.workdir / "stimulus.json").write_text(json.dumps(stimulus), encoding="utf-8")
            (dirs.workdir / "derive.py").write_text(derivation.python, encoding="utf-8")
            from benchyard.sandbox.identity import sandbox_user

            sandbox_user().hand_over(dirs.workdir)
            outcome = await self._sandbox_for(scenario).run(
                ["python3", "-I", "derive.py"],
                workdir=dirs.workdir,
                io_dir=dirs.io_dir,
                env={**VERIFY_ENV, "HOME": str(dirs.workdir)},
                timeout_sec=derivation.timeout_sec,
                output_cap_bytes=OUTPUT_CAP_BYTES,
            )
        finally:
            dirs.remove()
        if outcome.timed_out:
            raise AttemptFailure(
                FailureKind.MISSING_REFERENCE,
                f"derive: the program ran past its {derivation.timeout_sec:g} s",
            )
        stdout = outcome.stdout.decode("utf-8", errors="replace")
        lines = [line.strip() for line in stdout.splitlines() if line.strip()]
        if outcome.returncode != 0 or not lines:
            error = outcome.stderr.decode("utf-8", errors="replace").strip().splitlines()
            why = error[-1] if error else "no output"
            raise AttemptFailure(
                FailureKind.MISSING_REFERENCE,
                f"derive: the program failed (exit {outcome.returncode}): {why[:SHOWN_CHARS]}",
            )
        return lines[-1]


def same_answer(derived: str, reference: str) -> bool:
    """Equal as JSON when both are JSON, else as text with runs of whitespace made one space."""
    parsed = [_json(derived), _json(reference)]
    if parsed[0] is not _NOT_JSON and parsed[1] is not _NOT_JSON:
        return bool(parsed[0] == parsed[1])
    return " ".join(derived.split()) == " ".join(reference.split())


_NOT_JSON = object()


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return _NOT_JSON


def shown(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
