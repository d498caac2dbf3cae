"""Hostile answers against every registered check: whatever an agent produces (a 5,000-digit JSON
integer, `1e999999`, NaN, nesting 100,000 deep, lone surrogates, tool calls with such arguments,
code whose test run prints such things), grading gives a verdict. A check never raises out of the
runner's `run_check` as an uncounted error: it returns a result, or fails in a way held against
the answer (an unreadable judge reply, counted once its retries are spent).

And end to end: an agent that knows half the answers and sends a number built to crash a check for
the rest scores half, not everything it happened to get graded on, and `--fail-under` sees it."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchyard.benchmarks.loader import load_benchmark
from benchyard.checks.base import CheckResult, Evidence
from benchyard.checks.registry import check_types
from benchyard.providers.fake_server import FakeLLM
from benchyard.providers.judge import Judge, JudgeConfig
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.grading import run_check
from benchyard.runner.patches import FileChange
from benchyard.runner.trajectory import Event
from benchyard.sandbox.process import ProcessOutcome
from benchyard.spec.models import CheckSpec, Scenario
from benchyard.store.store import Store
from tests.support import UNSANDBOXED, Cli, write_benchmark

HUGE_INT = "9" * 5000
HOSTILE = [
    HUGE_INT,
    f'{{"answer": {HUGE_INT}}}',
    f"```json\n[{HUGE_INT}]\n```",
    "1e999999",
    '{"answer": 1e999999, "n": -1e999999}',
    "NaN",
    '{"answer": NaN, "x": Infinity, "y": -Infinity}',
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 5000 + "1" + "}" * 5000,
    "\ud800\udfff\x00\x1b[2J",
    "",
    " " * 10_000,
    f'[{{"name": "lookup", "arguments": {{"q": {HUGE_INT}}}}}]',
    f"lookup(q={HUGE_INT})",
    "lookup(" * 5000,
    "#### " + HUGE_INT,
    "The answer is 1e999999.",
    "```python\n" + "(" * 10_000 + "\n```",
    '{"root_causes": [{"entity": ' + HUGE_INT + "}]}",
]
"""Answers known to have broken checks, or built to."""

# Parameters of check types the built-in library does not use (the library's own specs cover the
# rest); a check type registered without either fails test_every_check_type_is_fuzzed.
EXTRA_SPECS: dict[str, dict[str, Any]] = {
    "contains_json": {"schema": {"type": "object", "required": ["answer"]}},
    "is_valid_tool_call": {
        "source": "answer",
        "tools": [
            {
                "function": {
                    "name": "lookup",
                    "parameters": {"type": "object", "properties": {"q": {"type": "integer"}}},
                }
            }
        ],
    },
    "levenshtein": {"value": "Paris", "threshold": 0.8},
    "rouge_n": {"value": "the capital of France is Paris"},
    "bleu": {"value": "the capital of France is Paris"},
    "latency": {"max_total_sec": 10, "max_ttft_sec": 1},
    "cost": {"max_usd": 0.01},
    "finish_reason": {"value": "stop"},
    "is_refusal": {},
    "llm_rubric": {"criteria": ["Names Paris", "Is one sentence"]},
    "reference_match": {"reference": "Paris"},
    "gsm8k_answer": {"expected": "42"},
    "ifeval": {"instruction": "punctuation:no_comma"},
    "function_call_ast": {
        "category": "simple",
        "functions": [
            {
                "name": "lookup",
                "parameters": {"type": "dict", "properties": {"q": {"type": "integer"}}},
            }
        ],
        "ground_truth": [{"lookup": {"q": [1]}}],
        "source": "answer",
    },
    "python": {"file": "grader.py"},
    "humaneval": {"prompt": "def f(x):\n", "test": "def check(f):\n    pass\n", "entry_point": "f"},
    "mbpp": {"tests": ["assert f(1) == 1"]},
    "swebench": {
        "instance_id": "x__y-1",
        "image": "benchyard/sandbox:bookworm",
        "base_commit": "0" * 40,
        "test_patch": "",
        "fail_to_pass": ["test_a.py::test_a"],
    },
    "harbor_verifier": {"image": "benchyard/sandbox:bookworm", "tests": "tests"},
}


def _library_specs() -> dict[str, tuple[Scenario, CheckSpec]]:
    """One scenario of the built-in library per check type it uses, with that check."""
    found: dict[str, tuple[Scenario, CheckSpec]] = {}
    for name in ("starter", "hard", "sre-starter"):
        for scenario in load_benchmark(name).scenarios:
            for spec in scenario.checks:
                found.setdefault(spec.type, (scenario, spec))
    return found


def _extra_spec(kind: str) -> tuple[Scenario, CheckSpec]:
    check_types()[kind].params.model_validate(EXTRA_SPECS[kind])  # as the loader would
    scenario = Scenario.model_validate(
        {
            "id": f"fuzz-{kind}",
            "stimulus": "What is the capital of France?",
            "reference": "Paris",
            "checks": [{"type": kind, **EXTRA_SPECS[kind]}],
        }
    )
    return scenario, scenario.checks[0]


LIBRARY = _library_specs()
KINDS = sorted(check_types())


def _spec(kind: str) -> tuple[Scenario, CheckSpec]:
    return LIBRARY[kind] if kind in LIBRARY else _extra_spec(kind)


def test_every_check_type_is_fuzzed() -> None:
    missing = [kind for kind in KINDS if kind not in LIBRARY and kind not in EXTRA_SPECS]
    assert not missing, f"add parameters for {missing} to EXTRA_SPECS"


@dataclass
class HostileWorkspace:
    """A verification workspace whose every command prints the hostile text (as the agent's code,
    or tests it changed, could): what code checks read back is the answer here."""

    text: str
    workdir: Path
    io_dir: Path
    scenario_dir: Path
    patch: str = ""
    patch_error: str | None = None
    changes: tuple[FileChange, ...] = ()
    runs: list[Sequence[str]] = field(default_factory=list)

    async def run(
        self, argv: Sequence[str], *, timeout_sec: float, env: Mapping[str, str] | None = None
    ) -> ProcessOutcome:
        self.runs.append(argv)
        data = self.text.encode("utf-8", "surrogatepass")
        for name in ("report.json", "results.json", "reward.txt", "junit.xml"):
            (self.io_dir / name).write_bytes(data)
        return ProcessOutcome(len(self.runs) % 3, data, 0, data, 0)

    def write_file(self, relative: str, text: str) -> Path:
        path = self.workdir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        return path


@pytest.fixture(scope="module")
def judge_url() -> Iterator[str]:
    """A judge the answer steers: told to, it replies with what cannot be read."""
    script = {
        "replies": [
            {"match": "1e999999", "content": '{"same_meaning": 1e999999, "criteria": NaN}'},
            {"match": HUGE_INT[:50], "content": f'{{"criteria": [{HUGE_INT}]}}'},
            {"match": "NaN", "content": "Sure! It looks good to me."},
        ],
        "default": {"content": '{"same_meaning": false, "criteria": [], "explanation": "?"}'},
    }
    with FakeLLM(script) as llm:
        yield llm.url


def _trajectory(answer: str) -> list[Event]:
    """The answer as the agent's message, and as a tool call with it as arguments."""
    call = {"id": "c1", "name": "lookup", "arguments": answer}
    return [
        Event(kind="message", role="user", content="What is the capital of France?"),
        Event(kind="tool_call", role="assistant", content=answer, data=call),
        Event(kind="tool_result", role="tool", content=answer, data={"id": "c1"}),
        Event(
            kind="message",
            role="assistant",
            content=answer,
            data={"finish_reason": answer[:100], "ttft_sec": float("nan"), "cost_usd": 1e308},
        ),
    ]


async def _grade(kind: str, answer: str, judge_url: str, root: Path) -> CheckResult | None:
    scenario, spec = _spec(kind)
    judge = Judge(
        JudgeConfig(provider={"base_url": judge_url, "max_retries": 0}, model="j", parse_retries=0)
    )
    workdir, io_dir = root / "work", root / "io"
    workdir.mkdir()
    io_dir.mkdir()
    (root / "grader.py").write_text("def grade(answer, context):\n    return True\n")
    code = HostileWorkspace(answer, workdir, io_dir, root, patch=answer)
    evidence = Evidence(
        answer=answer,
        scenario=scenario,
        answers=[answer, answer],
        trajectory=_trajectory(answer),
        workdir=workdir,
        code=code,
        judge=judge,
    )
    try:
        return await run_check(spec, evidence)
    except AttemptFailure as failure:  # only what is held against the answer, never an error
        if check_types()[kind].needs_code and failure.kind == FailureKind.CHECK_ERROR:
            # The stub makes benchyard's own scripts print the hostile text too, which the agent
            # cannot do: a code check may take that for its machinery failing.
            return None
        assert failure.policy.counts and failure.policy.verdict == "failed", failure.message
        return None
    finally:
        await judge.aclose()


def _assert_a_verdict(kind: str, answer: str, judge_url: str) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        result = asyncio.run(_grade(kind, answer, judge_url, Path(scratch)))
    if result is not None:
        assert isinstance(result.passed, bool)
        assert 0.0 <= result.score <= 1.0, result
        assert isinstance(result.reason, str)
        json.dumps(result.details, allow_nan=False)  # what reports write must be JSON


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("answer", HOSTILE, ids=[f"hostile{n}" for n in range(len(HOSTILE))])
def test_a_known_hostile_answer_gets_a_verdict(kind: str, answer: str, judge_url: str) -> None:
    _assert_a_verdict(kind, answer, judge_url)


_numbers = st.one_of(
    st.just(HUGE_INT),
    st.just("1e999999"),
    st.just("-1e999999"),
    st.just("NaN"),
    st.just("Infinity"),
    st.integers().map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)
_json_ish = st.recursive(
    _numbers | st.text(max_size=20).map(json.dumps) | st.sampled_from(["true", "null", "{", "]"]),
    lambda inner: (
        st.lists(inner, max_size=4).map(lambda items: f"[{', '.join(items)}]")
        | st.dictionaries(
            st.sampled_from(["answer", "q", "root_causes", "name"]), inner, max_size=3
        ).map(lambda d: "{" + ", ".join(f'"{k}": {v}' for k, v in d.items()) + "}")
    ),
    max_leaves=12,
)
_answers = st.one_of(
    _json_ish,
    st.tuples(st.text(max_size=40), _json_ish, st.text(max_size=40)).map("".join),
    _json_ish.map(lambda body: f"```json\n{body}\n```"),
    st.text(max_size=200),
)


@pytest.mark.parametrize("kind", KINDS)
@settings(
    max_examples=int(os.environ.get("BENCHYARD_FUZZ_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(answer=_answers)
def test_a_generated_hostile_answer_gets_a_verdict(kind: str, answer: str, judge_url: str) -> None:
    _assert_a_verdict(kind, answer, judge_url)


AGENT = """
import os, sys
sid = os.environ["BENCHYARD_SCENARIO_ID"]
number = int(sid[1:])
if number < 15:
    print('{"answer": %d}' % number)
else:
    sys.stdout.write('{"answer": ' + sys.argv[1] + '}')
"""


@pytest.mark.parametrize("payload", ["9" * 5000, "1e999999", "NaN"])
def test_crashing_a_check_on_unknown_answers_does_not_raise_accuracy(
    tmp_path: Path, cli: Cli, store: Store, payload: str
) -> None:
    """15 of 30 known; for the rest the agent sends a number built to crash `contains_json`: it
    scores 50%, those 15 attempts fail with their cause, and `--fail-under 0.8` exits 1."""
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    scenarios = [
        {
            "id": f"q{n}",
            "stimulus": f"Reply with JSON: answer {n}",
            "checks": [
                {
                    "type": "contains_json",
                    "schema": {
                        "properties": {"answer": {"multipleOf": 0.5, "minimum": n, "maximum": n}},
                        "required": ["answer"],
                    },
                }
            ],
        }
        for n in range(30)
    ]
    bench = write_benchmark(tmp_path / "bench", scenarios)
    command = f"python3 {agent} '{payload}'"
    result = cli(
        "run", str(bench), "--agent-cmd", command, "-q", "--fail-under", "0.8", *UNSANDBOXED
    )
    assert result.exit_code == 1, result.output
    summary = json.loads(cli("report", "latest", "--format", "json").output)["summary"]
    assert (summary["passed"], summary["failed"], summary["errors"]) == (15, 15, 0)
    assert summary["accuracy"] == pytest.approx(0.5)
    failed = [a for a in store.attempts(store.resolve_run("latest").id) if a.verdict == "failed"]
    assert len(failed) == 15
    assert all(a.failure_kind is None or a.failure_kind == "ungradable_answer" for a in failed)
    assert all(a.cause for a in failed)
