"""Agreement with the official evaluators: each importer on the real data in shared/datasets
(read each SOURCE.md there), graded by benchyard, against the official verdicts kept beside it.

- HumanEval: `reference_verdicts/` (canonical solutions: all pass; `pass` bodies: all fail), and
  the repository's example samples (a destructive call, a sleep, input(), three indentations).
- IFEval: `reference_verdicts/` (echo and lower-cased responses), strict and loose, per
  instruction, with prompt-level and instruction-level accuracy side by side.
- BFCL: `reference_runs/` (gold, gold with optional parameters left out, wrong), per category,
  prompt-mode outputs decoded and checked as the official evaluator does; with how many outputs
  hold arithmetic (which the official decoder `eval`s and benchyard does not run, see
  docs/importers.md).
- GSM8K: `example_model_solutions.jsonl` (OpenAI's labels on 4 models' solutions), the final
  `A: ` line read as the official `#### ` line.

Every disagreement is printed with its reason. Exit 1 when any format disagrees.
Run: .venv/bin/python bench/agreement.py [--datasets DIR] [--only humaneval,ifeval,bfcl,gsm8k]
                                         [--sandbox bwrap|docker] [-j 4]
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/ holds a `queue.py`: keep this directory off the path, or it hides the standard library's.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import argparse  # noqa: E402
import ast  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Awaitable, Callable, Iterable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

from benchyard.benchmarks.loader import load_benchmark  # noqa: E402
from benchyard.runner.execute import RunSettings  # noqa: E402
from benchyard.runner.grading import Grade, grade  # noqa: E402
from benchyard.runner.loop import run_async  # noqa: E402
from benchyard.runner.two_phase import ChangeGrader  # noqa: E402
from benchyard.spec.loader import Benchmark  # noqa: E402
from benchyard.spec.models import Scenario  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATASETS = ROOT.parent / "shared" / "datasets"
FORMATS = ("humaneval", "ifeval", "bfcl", "gsm8k", "terminal-bench")
SHOWN_DISAGREEMENTS = 40


@dataclass
class Tally:
    """Agreement of one set of verdicts."""

    label: str
    total: int = 0
    agree: int = 0
    disagreements: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, item: str, ours: bool, official: bool, reason: str = "") -> None:
        self.total += 1
        if ours == official:
            self.agree += 1
        else:
            self.disagreements.append(
                f"{item}: benchyard {'pass' if ours else 'fail'}, official "
                f"{'pass' if official else 'fail'}" + (f" ({reason})" if reason else "")
            )

    def line(self) -> str:
        share = f"{100 * self.agree / self.total:.2f}%" if self.total else "n/a"
        return f"  {self.label:<46} {self.agree:>5}/{self.total:<5} {share:>8}"


def direct_benchmark(work: Path, format_name: str, source: Path, **options: Any) -> Benchmark:
    """The benchmark read straight from `source` (`format:` + `source:` in a benchmark.yaml)."""
    root = work / f"{format_name}-{len(list(work.iterdir()))}"
    root.mkdir()
    lines = [f"name: {format_name}", "version: '1'", f"format: {format_name}", f"source: {source}"]
    if options:
        lines.append(f"options: {json.dumps(options)}")
    (root / "benchmark.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_benchmark(root)


async def _no_change(workdir: Path) -> None:
    return None


async def gather_limited(jobs: Iterable[Callable[[], Awaitable[Any]]], limit: int) -> list[Any]:
    semaphore = asyncio.Semaphore(limit)

    async def one(job: Callable[[], Awaitable[Any]]) -> Any:
        async with semaphore:
            return await job()

    return await asyncio.gather(*(one(job) for job in jobs))


# ---- HumanEval --------------------------------------------------------------------------------

EXAMPLE_EXPECTED = [False, False, False, True, True, True]
"""The official results of human-eval's example_samples.jsonl, as its README shows them: a
subprocess call (disabled by the reliability guard), a 10 s sleep (timed out) and input() fail;
`return 1` indented with 4 spaces, 2 spaces or a tab passes."""


def humaneval(datasets: Path, work: Path, sandbox: str | None, jobs: int) -> list[Tally]:
    folder = datasets / "humaneval"
    benchmark = direct_benchmark(work, "humaneval", folder / "HumanEval.jsonl.gz")
    by_task = {s.description.split(" ")[0]: s for s in benchmark.scenarios}
    example = direct_benchmark(work, "humaneval", folder / "example_problem.jsonl")
    by_task.update({s.description.split(" ")[0]: s for s in example.scenarios})
    sets: list[tuple[str, list[dict[str, Any]], list[bool]]] = []
    for name, file in (
        ("canonical solutions", "canonical_samples.jsonl_results.jsonl"),
        ("`pass` bodies (negative control)", "pass_body_samples.jsonl_results.jsonl"),
    ):
        rows = [json.loads(line) for line in (folder / "reference_verdicts" / file).open()]
        sets.append((name, rows, [bool(row["passed"]) for row in rows]))
    samples = [json.loads(line) for line in (folder / "example_samples.jsonl").open()]
    sets.append(("example samples (README results)", samples, EXAMPLE_EXPECTED))
    settings = RunSettings(sandbox=sandbox) if sandbox else RunSettings()
    tallies = []
    with ChangeGrader(benchmark, settings) as grader, ChangeGrader(example, settings) as other:

        async def grade_one(row: dict[str, Any]) -> Grade:
            scenario = by_task[row["task_id"]]
            use = other if row["task_id"].startswith("test/") else grader
            return await use.grade(scenario, [row["completion"]], [], _no_change)

        for name, rows, official in sets:
            started = time.perf_counter()
            grades = run_async(gather_limited([lambda r=r: grade_one(r) for r in rows], jobs))
            tally = Tally(f"HumanEval {name}")
            for row, result, expected in zip(rows, grades, official, strict=True):
                tally.add(row["task_id"], result.passed, expected, result.cause or "")
            tally.notes.append(f"{time.perf_counter() - started:.0f} s")
            tallies.append(tally)
    return tallies


# ---- IFEval -----------------------------------------------------------------------------------


def ifeval(datasets: Path, work: Path) -> list[Tally]:
    folder = datasets / "ifeval"
    benchmark = direct_benchmark(work, "ifeval", folder / "input_data.jsonl")
    by_prompt = {scenario_prompt(s): s for s in benchmark.scenarios}
    tallies = []
    for responses in ("echo", "lower"):
        for mode in ("strict", "loose"):
            rows = [
                json.loads(line)
                for line in (
                    folder / "reference_verdicts" / f"{responses}_eval_results_{mode}.jsonl"
                ).open()
            ]
            instructions = Tally(f"IFEval {responses} {mode}: instruction-level")
            prompts = Tally(f"IFEval {responses} {mode}: prompt-level")
            ours_followed = official_followed = ours_prompts = official_prompts = 0
            for row in rows:
                scenario = by_prompt[row["prompt"]]
                result = run_async(grade(scenario, [row["response"]], [], None))
                mine = [c.passed for c in result.checks if c.label.startswith(f"{mode} ")]
                for instruction, ours, official in zip(
                    row["instruction_id_list"], mine, row["follow_instruction_list"], strict=True
                ):
                    instructions.add(f"{scenario.id} {instruction}", ours, official)
                prompts.add(scenario.id, all(mine), row["follow_all_instructions"])
                ours_followed += sum(mine)
                official_followed += sum(row["follow_instruction_list"])
                ours_prompts += all(mine)
                official_prompts += row["follow_all_instructions"]
            total = sum(len(row["instruction_id_list"]) for row in rows)
            prompts.notes.append(
                f"accuracy: benchyard {ours_prompts / len(rows):.5f}, "
                f"official {official_prompts / len(rows):.5f}"
            )
            instructions.notes.append(
                f"accuracy: benchyard {ours_followed / total:.5f}, "
                f"official {official_followed / total:.5f}"
            )
            tallies += [prompts, instructions]
    return tallies


def scenario_prompt(scenario: Scenario) -> str:
    return scenario.stimulus.turns[0]


# ---- BFCL -------------------------------------------------------------------------------------

BFCL_CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")


def bfcl(datasets: Path, work: Path) -> list[Tally]:
    folder = datasets / "bfcl"
    benchmark = direct_benchmark(work, "bfcl", folder, mode="prompt")
    by_id = {s.id: s for s in benchmark.scenarios}
    tallies = []
    for run in ("gold", "gold_omit", "wrong"):
        for category in BFCL_CATEGORIES:
            runs = folder / "reference_runs" / run
            results = {
                row["id"]: row["result"]
                for row in map(json.loads, (runs / f"BFCL_v4_{category}_result.json").open())
            }
            tally = Tally(f"BFCL {run} {category}")
            official_passed = ours_passed = 0
            for line in (runs / f"BFCL_v4_{category}_verdicts.jsonl").open():
                verdict = json.loads(line)
                scenario = by_id[verdict["id"]]
                result = run_async(grade(scenario, [results[verdict["id"]]], [], None))
                tally.add(verdict["id"], result.passed, bool(verdict["valid"]), result.cause or "")
                official_passed += bool(verdict["valid"])
                ours_passed += result.passed
            tally.notes.append(f"passed: benchyard {ours_passed}, official {official_passed}")
            arithmetic = sum(holds_arithmetic(output) for output in results.values())
            tally.notes.append(f"outputs holding arithmetic (not run by benchyard): {arithmetic}")
            tallies.append(tally)
    return tallies


def holds_arithmetic(output: object) -> bool:
    """Whether a prompt-mode output holds arithmetic, which the official decoder `eval`s and
    benchyard computes only on constants, within bounds."""
    if not isinstance(output, str):
        return False
    try:
        tree = ast.parse(output.strip("`\n "), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(node, ast.BinOp) for node in ast.walk(tree))


# ---- GSM8K ------------------------------------------------------------------------------------

GSM8K_MODELS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")


def as_official(solution: str) -> str:
    """The model solutions end in `A: N`; the last such line is their final answer, written as the
    official `#### N` (only that one: `A: ` may also appear earlier in a solution)."""
    head, sep, tail = solution.rpartition("A: ")
    return f"{head}#### {tail}" if sep else solution


def gsm8k(datasets: Path, work: Path) -> list[Tally]:
    folder = datasets / "gsm8k"
    benchmark = direct_benchmark(work, "gsm8k", folder / "test.jsonl")
    by_question = {s.stimulus.turns[0]: s for s in benchmark.scenarios}
    tally = Tally("GSM8K model solutions (official rule)")
    lenient = Tally("GSM8K model solutions (numeric rule, for contrast)")
    numeric = direct_benchmark(work, "gsm8k", folder / "test.jsonl", rule="numeric")
    numeric_by_id = {s.id: s for s in numeric.scenarios}
    for index, line in enumerate((folder / "example_model_solutions.jsonl").open()):
        row = json.loads(line)
        scenario = by_question[row["question"]]
        for model in GSM8K_MODELS:
            entry = row[model]
            answer = as_official(entry["solution"])
            result = run_async(grade(scenario, [answer], [], None))
            tally.add(
                f"item {index} {model}",
                result.passed,
                bool(entry["is_correct"]),
                result.cause or "",
            )
            other = run_async(grade(numeric_by_id[scenario.id], [entry["solution"]], [], None))
            lenient.add(
                f"item {index} {model}", other.passed, bool(entry["is_correct"]), other.cause or ""
            )
    lenient.notes.append("not an agreement target: the lenient rule differs from the official one")
    return [tally, lenient]


# ---- Harbor cookbook ----------------------------------------------------------------------------


def harbor(datasets: Path, work: Path) -> list[Tally]:
    """The cookbook tasks kept in shared/: imported without building, to say what is missing."""
    from benchyard.importers import SourceInvalid, read_source

    tally = Tally("Harbor cookbook tasks importable here")
    cookbook = datasets / "terminal-bench" / "harbor-cookbook"
    try:
        result = read_source("harbor", cookbook, {"build": False, "skip_unsupported": True})
        tally.total = tally.agree = len(result.imported.scenarios)
    except SourceInvalid as invalid:
        tally.total = len({Path(p.file).name for p in invalid.problems if p.file})
        tally.notes.append(
            "not importable: " + "; ".join(sorted({str(p) for p in invalid.problems})[:6])
        )
        tally.notes.append(
            "not an agreement target: shared/ keeps no Dockerfiles, tests or solutions"
        )
    return [tally]


# ---- main -------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--datasets",
        type=Path,
        default=Path(os.environ.get("BENCHYARD_DATASETS", DEFAULT_DATASETS)),
    )
    parser.add_argument("--only", default=",".join(FORMATS))
    parser.add_argument("--sandbox", default=None)
    parser.add_argument("-j", "--jobs", type=int, default=4)
    args = parser.parse_args(argv)
    if not args.datasets.is_dir():
        print(f"no datasets at {args.datasets}: nothing to compare (give --datasets DIR)")
        return 0
    wanted = [name.strip() for name in args.only.split(",") if name.strip()]
    tallies: list[Tally] = []
    with tempfile.TemporaryDirectory(prefix="benchyard-agreement-") as scratch:
        work = Path(scratch)
        for name in wanted:
            if not (args.datasets / name).is_dir():
                print(f"{name}: no data in {args.datasets / name}, skipped")
                continue
            started = time.perf_counter()
            if name == "humaneval":
                found = humaneval(args.datasets, work, args.sandbox, args.jobs)
            elif name == "ifeval":
                found = ifeval(args.datasets, work)
            elif name == "bfcl":
                found = bfcl(args.datasets, work)
            elif name == "gsm8k":
                found = gsm8k(args.datasets, work)
            elif name == "terminal-bench":
                found = harbor(args.datasets, work)
            else:
                print(f"unknown format {name}")
                return 2
            print(f"{name} ({time.perf_counter() - started:.0f} s)")
            for tally in found:
                print(tally.line() + ("   " + "; ".join(tally.notes) if tally.notes else ""))
                for text in tally.disagreements[:SHOWN_DISAGREEMENTS]:
                    print(f"      disagreement: {text}")
                if len(tally.disagreements) > SHOWN_DISAGREEMENTS:
                    print(f"      ... and {len(tally.disagreements) - SHOWN_DISAGREEMENTS} more")
            tallies += found
    targets = [t for t in tallies if not any(n.startswith("not an agreement") for n in t.notes)]
    disagreeing = sum(len(t.disagreements) for t in targets)
    print(
        f"total: {sum(t.agree for t in targets)}/{sum(t.total for t in targets)} verdicts agree, "
        f"{disagreeing} disagreement(s)"
    )
    return 1 if disagreeing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
