"""IFEval graded on the answer exactly as the agent or model gave it, as the official grader
(google-research `instruction_following_eval` at commit 19638399, `evaluation_lib.py`) reads the
response: `response.split("\\n")` then has an empty last line after a trailing newline, or an
empty first paragraph after a leading blank line, and the official verdict depends on them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from benchyard.store.store import Store
from tests.integration.providers.conftest import StartFake, write_project
from tests.support import Cli, write_benchmark

NO_COMMA_ANSWER = "I did the work.\n\nFirst, second, third.\n"
"""Official loose mode: the 8 variants are the response, without its first line, without its last
(the empty line after the newline: the comma stays), without both, and those with `*` removed:
every one has a comma, so `punctuation:no_comma` is not followed. Without the trailing newline,
"without its last line" is `I did the work.`, which has none."""

OPENING_BLANK_ANSWER = "\n\nHello world.\n\nSecond part."
"""Official strict mode: paragraphs split on `\\n\\n` are `""`, `Hello world.`, `Second part.`:
two non-empty ones, but the first is empty, so `nth_paragraph_first_word` (1st is `hello`) is not
followed. Stripped, the first paragraph would be `Hello world.`."""


def _ifeval_scenario(instruction: str, mode: str, **kwargs: Any) -> dict[str, Any]:
    return {
        "id": "ifeval",
        "stimulus": "write",
        "checks": [{"type": "ifeval", "instruction": instruction, "mode": mode, "kwargs": kwargs}],
    }


def test_ifeval_official_19638399_loose_no_comma_reads_the_command_agents_trailing_newline(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(f"import sys\nsys.stdout.write({NO_COMMA_ANSWER!r})\n", encoding="utf-8")
    bench = write_benchmark(tmp_path / "bench", [_ifeval_scenario("punctuation:no_comma", "loose")])
    cli("run", str(bench), "--agent-cmd", f"{sys.executable} {agent}", "-q")
    (attempt,) = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    assert attempt.answer == NO_COMMA_ANSWER
    assert attempt.verdict == "failed", attempt.cause


def test_ifeval_official_19638399_strict_nth_paragraph_reads_the_models_opening_blank_line(
    tmp_path: Path, cli: Cli, store: Store, fake_llm: StartFake
) -> None:
    llm = fake_llm({"default": {"content": OPENING_BLANK_ANSWER}})
    write_project(cli.cwd, llm.url)
    scenario = _ifeval_scenario(
        "length_constraints:nth_paragraph_first_word",
        "strict",
        num_paragraphs=2,
        nth_paragraph=1,
        first_word="hello",
    )
    bench = write_benchmark(tmp_path / "bench", [scenario])
    cli("run", str(bench), "--agent", "model", "-q")
    (attempt,) = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    assert attempt.answer == OPENING_BLANK_ANSWER
    assert attempt.verdict == "failed", attempt.cause
