"""HumanEval and MBPP graded in the real bwrap sandbox: the official program split across the
two processes of code_exec, verdicts as the official evaluators give them, `import`, `verify`,
`run` and the report through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchyard.benchmarks.loader import load_benchmark
from benchyard.runner.execute import RunSettings
from benchyard.runner.loop import run_async
from benchyard.runner.two_phase import ChangeGrader
from benchyard.spec.loader import Benchmark
from tests.support import Cli
from tests.unit.checks.code_helpers import code_sandbox
from tests.unit.importers.sources import (
    GSM8K,
    HUMANEVAL,
    IFEVAL,
    MBPP,
    direct_benchmark,
    write_jsonl,
)


@pytest.fixture(autouse=True)
def _bwrap() -> None:
    code_sandbox("bwrap")  # fails (never skips) with how to install it


async def _no_change(workdir: Path) -> None:
    return None


def grade(benchmark: Benchmark, scenario_id: str, answer: str) -> tuple[bool, str]:
    scenario = next(s for s in benchmark.scenarios if s.id == scenario_id)
    with ChangeGrader(benchmark, RunSettings(sandbox="bwrap")) as grader:
        result = run_async(grader.grade(scenario, [answer], [], _no_change))
    return result.passed, result.cause or "passed"


@pytest.fixture
def humaneval(tmp_path: Path) -> Benchmark:
    source = write_jsonl(tmp_path / "HumanEval.jsonl.gz", HUMANEVAL, gz=True)
    return load_benchmark(direct_benchmark(tmp_path / "he", "humaneval", source))


def test_humaneval_verdicts_follow_the_official_program(humaneval: Benchmark) -> None:
    # a body continuing the prompt, using the prompt's helper (the test calls it too)
    assert grade(humaneval, "Toy-0", "    return double(double(x))\n")[0]
    # the same, its first indentation stripped (as agents' answers are), or a whole function
    assert grade(humaneval, "Toy-0", "return double(2 * x)")[0]
    assert grade(humaneval, "Toy-0", "```python\ndef quadruple(x):\n    return 4 * x\n```")[0]
    passed, cause = grade(humaneval, "Toy-0", "    return 3 * x\n")
    assert not passed and "AssertionError" in cause and "separate process" in cause
    # an entry point named like the solution's module, and one named like a stdlib module
    assert grade(humaneval, "Toy-1", "    return sorted(items)\n")[0]
    assert not grade(humaneval, "Toy-1", "    return items\n")[0]
    assert grade(humaneval, "Toy-2", "    return str(n)\n")[0]
    # `pass` fails; the reliability guard disables os.system; 3 s is the limit
    assert not grade(humaneval, "Toy-2", "    pass\n")[0]
    passed, cause = grade(
        humaneval, "Toy-1", "    import os\n    os.system('true')\n    return sorted(items)\n"
    )
    assert not passed and "NoneType" in cause
    # ... and shutil.rmtree, though shutil is imported only by the completion
    passed, cause = grade(
        humaneval, "Toy-1", "    import shutil\n    shutil.rmtree('x')\n    return sorted(items)\n"
    )
    assert not passed and "NoneType" in cause
    passed, cause = grade(humaneval, "Toy-1", "    while True:\n        pass\n")
    assert not passed and "timed out (limit 3s)" in cause


def test_mbpp_honours_setup_code_and_imports(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "mbpp.jsonl", MBPP)
    benchmark = load_benchmark(direct_benchmark(tmp_path / "mb", "mbpp", source))
    first = next(s for s in benchmark.scenarios if s.id == "mbpp-11")
    assert "count_nodes(Node(1, Node(2, Node(3)))) == 3" in first.stimulus.turns[0]
    assert first.tags == ["mbpp", "coding", "split:test"]
    # the asserts build Node objects of the setup code, which the solution walks
    assert grade(benchmark, "mbpp-11", MBPP[0]["code"])[0]
    passed, cause = grade(benchmark, "mbpp-11", "def count_nodes(head):\n    return 3\n")
    assert not passed and "assert count_nodes(None) == 0" in cause  # every assert is graded
    assert grade(benchmark, "mbpp-12", "[BEGIN]\n" + MBPP[1]["code"] + "[DONE]")[0]


def test_import_verify_run_and_report(cli: Cli, tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "HumanEval.jsonl.gz", HUMANEVAL, gz=True)
    out = tmp_path / "imported"
    result = cli("import", "humaneval", str(source), "-o", str(out), db=False)
    assert result.exit_code == 0, result.output
    assert "3 scenarios" in result.output and "humaneval format 1" in result.output
    assert cli("validate", str(out), db=False).exit_code == 0
    verified = cli("verify", str(out), db=False)
    assert verified.exit_code == 0 and "3 scenarios verified, 0 broken" in verified.output
    ran = cli("run", str(out), "--agent", "oracle")
    assert ran.exit_code == 0, ran.output
    report = json.loads(cli("report", "latest", "--format", "json").output)
    assert report["summary"]["passed"] == 3
    provenance = report["run"]["benchmark"]["provenance"]
    assert provenance["format"] == "humaneval" and provenance["source_sha256"].startswith("sha256:")
    assert report["format_metrics"]["format"] == "humaneval"


def test_answer_rule_and_ifeval_figures_in_the_report(cli: Cli, tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text("print('so many hens\\n#### 1,234')\n", encoding="utf-8")
    gsm8k = direct_benchmark(tmp_path / "gsm8k", "gsm8k", write_jsonl(tmp_path / "g.jsonl", GSM8K))
    assert cli("run", str(gsm8k), "--agent-cmd", f"python3 {agent}").exit_code == 0
    report = json.loads(cli("report", "latest", "--format", "json").output)
    assert report["summary"]["passed"] == 1 and report["summary"]["failed"] == 1
    assert report["format_metrics"]["answer_rule"].startswith("official:")
    table = cli("report", "latest", "--format", "md").output
    assert "answer rule: official" in table

    agent.write_text("print('a cat is soft and it naps')\n", encoding="utf-8")
    ifeval = direct_benchmark(
        tmp_path / "ifeval", "ifeval", write_jsonl(tmp_path / "i.jsonl", IFEVAL)
    )
    assert cli("run", str(ifeval), "--agent-cmd", f"python3 {agent}").exit_code == 0
    figures = json.loads(cli("report", "latest", "--format", "json").output)["format_metrics"]
    assert figures["strict"]["prompt_level_raw"] == "1/2"
    assert figures["strict"]["instruction_level_raw"] == "3/4"  # the end phrase is missing
    assert figures["loose"]["instruction_level_raw"] == "3/4"
