"""The broken-benchmark corpus: every case under tests/fixtures/broken/ is rejected with exactly the
problems listed for it in expected.yaml, each naming its file, line and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from benchyard.benchmarks.loader import load_benchmark
from benchyard.spec import source_files
from benchyard.spec.problems import BenchmarkInvalid
from tests.support import Cli

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "broken"
EXPECTED: dict[str, dict[str, Any]] = yaml.safe_load(
    (CORPUS / "expected.yaml").read_text(encoding="utf-8")
)
CASES = sorted(EXPECTED)
CLI_CASES = [name for name in CASES if EXPECTED[name].get("cli")]
USES_LIBYAML = source_files._Loader is getattr(yaml, "CSafeLoader", None)


def comparable(name: str, problems: list[str]) -> list[str]:
    """The problems as compared: PyYAML's own parser (used without libyaml) words syntax errors
    differently from libyaml, so for those cases only the file and line are compared."""
    if EXPECTED[name].get("libyaml") and not USES_LIBYAML:
        return [problem.split(": invalid YAML: ")[0] for problem in problems]
    return problems


def test_every_case_directory_has_expectations() -> None:
    directories = sorted(path.name for path in CORPUS.iterdir() if path.is_dir())
    assert directories == CASES
    assert len(CASES) >= 18
    assert len(CLI_CASES) >= 5


@pytest.mark.parametrize("name", CASES)
def test_case_is_rejected_with_exactly_its_problems(name: str) -> None:
    with pytest.raises(BenchmarkInvalid) as raised:
        load_benchmark(CORPUS / name)
    problems = [str(problem) for problem in raised.value.problems]
    assert comparable(name, problems) == comparable(name, EXPECTED[name]["problems"])
    assert str(raised.value) == "\n".join(problems)


@pytest.mark.parametrize("name", CASES)
def test_every_problem_names_file_line_and_field(name: str) -> None:
    """A line is missing only where the problem is about the whole of benchmark.yaml's scenario
    patterns and no `scenarios:` key was written; a field only for syntax or whole-document ones."""
    with pytest.raises(BenchmarkInvalid) as raised:
        load_benchmark(CORPUS / name)
    for problem in raised.value.problems:
        assert (CORPUS / name / problem.file).is_file(), problem
        assert problem.line is not None or problem.field == "scenarios", problem
        whole = problem.message.startswith(
            ("invalid YAML", "invalid JSON", "not UTF-8", "expected a scenario")
        )
        assert problem.field or whole, problem


@pytest.mark.parametrize("name", CLI_CASES)
def test_validate_prints_every_problem_and_exits_1(storeless_cli: Cli, name: str) -> None:
    result = storeless_cli("validate", str(CORPUS / name))
    expected: list[str] = EXPECTED[name]["problems"]
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert comparable(name, lines[:-1]) == comparable(name, expected)
    assert lines[-1] == f"{len(expected)} problem{'' if len(expected) == 1 else 's'} found"
    assert result.stdout == ""
    assert "Traceback" not in result.output


def test_validate_accepts_a_manifest_path_as_well_as_its_directory(storeless_cli: Cli) -> None:
    result = storeless_cli("validate", str(CORPUS / "check-type-typo" / "benchmark.yaml"))
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        *EXPECTED["check-type-typo"]["problems"],
        "1 problem found",
    ]
