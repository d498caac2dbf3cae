"""SWE-bench: patches graded as the official harness grades them, in real containers of a tiny
instance image built here from the base image (git and patch added once); `grade-patches` and its
official report fields, a patch that does not apply, and an imported instance verified through
the two-phase path with its repository as the agent's workdir."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchyard.formats.containers import build_image, image_exists
from tests.support import Cli
from tests.unit.importers.sources import write_jsonl

TOOLS_IMAGE = "benchyard-test/swebench-tools:1"
CALC = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
TESTS = "from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n"
GOLD = "\n".join(
    [
        "diff --git a/calc.py b/calc.py",
        "--- a/calc.py",
        "+++ b/calc.py",
        "@@ -1,5 +1,5 @@",
        " def add(a, b):",
        "-    return a - b",
        "+    return a + b",
        " ",
        " ",
        " def sub(a, b):",
        "",
    ]
)
TEST_PATCH = "\n".join(
    [
        "diff --git a/tests/test_calc.py b/tests/test_calc.py",
        "--- a/tests/test_calc.py",
        "+++ b/tests/test_calc.py",
        "@@ -1,5 +1,9 @@",
        "-from calc import sub",
        "+from calc import add, sub",
        " ",
        " ",
        " def test_sub():",
        "     assert sub(3, 1) == 2",
        "+",
        "+",
        "+def test_add():",
        "+    assert add(2, 2) == 4",
        "",
    ]
)
WRONG = GOLD.replace("+    return a + b", "+    return a * b + 1")
STALE = GOLD.replace("-    return a - b", "-    return a - b - 0")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


@pytest.fixture(scope="module")
def instance_image(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, str]:
    """The instance image (the repository at /testbed), its clone here and the base commit."""
    work = tmp_path_factory.mktemp("swe")
    if not image_exists(TOOLS_IMAGE):
        tools = work / "tools"
        tools.mkdir()
        (tools / "Dockerfile").write_text(
            "FROM benchyard/sandbox:bookworm\n"
            "RUN apt-get update -q && apt-get install -y -q --no-install-recommends git patch "
            "&& rm -rf /var/lib/apt/lists/*\n"
        )
        build_image(tools, TOOLS_IMAGE)
    repo = work / "clones" / "toy__calc"
    (repo / "tests").mkdir(parents=True)
    (repo / "calc.py").write_text(CALC)
    (repo / "tests" / "test_calc.py").write_text(TESTS)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    commit = _git(repo, "rev-parse", "HEAD")
    context = work / "image"
    subprocess.run(["cp", "-a", str(repo), str(context)], check=True)
    (context / "Dockerfile").write_text(f"FROM {TOOLS_IMAGE}\nCOPY . /testbed\n")
    (context / ".dockerignore").write_text("Dockerfile\n")
    tag = build_image(context, f"benchyard-test/swebench-toy:{commit[:12]}")
    return tag, work / "clones", commit


def _instances(path: Path, commit: str) -> Path:
    return write_jsonl(
        path,
        [
            {
                "instance_id": "toy__calc-1",
                "repo": "toy/calc",
                "base_commit": commit,
                "patch": GOLD,
                "test_patch": TEST_PATCH,
                "problem_statement": "add() subtracts instead of adding.",
                "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_add"]),
                "PASS_TO_PASS": json.dumps(["tests/test_calc.py::test_sub"]),
            }
        ],
    )


@pytest.mark.parametrize(
    ("patch", "applied", "resolved"),
    [(GOLD, True, True), (WRONG, True, False), (STALE, False, False), ("", False, False)],
)
def test_grade_patches_writes_the_official_report(
    storeless_cli: Cli,
    tmp_path: Path,
    instance_image: tuple[str, Path, str],
    patch: str,
    applied: bool,
    resolved: bool,
) -> None:
    image, _, commit = instance_image
    instances = _instances(tmp_path / "instances.jsonl", commit)
    predictions = write_jsonl(
        tmp_path / "preds.jsonl",
        [{"instance_id": "toy__calc-1", "model_patch": patch, "model_name_or_path": "toy-model"}],
    )
    out = tmp_path / "report.json"
    result = storeless_cli(
        "grade-patches",
        str(instances),
        str(predictions),
        "--option",
        f"image={image}",
        "-o",
        str(out),
        db=False,
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())["toy__calc-1"]
    assert report["patch_exists"] is bool(patch)
    assert report["patch_successfully_applied"] is applied
    assert report["resolved"] is resolved
    status = report["tests_status"]
    if applied:
        assert status["PASS_TO_PASS"] == {
            "success": ["tests/test_calc.py::test_sub"],
            "failure": [],
        }
        expected = "success" if resolved else "failure"
        assert status["FAIL_TO_PASS"][expected] == ["tests/test_calc.py::test_add"]
    assert f"resolved {int(resolved)}/1" in result.output


def test_grade_patches_names_an_unknown_instance(storeless_cli: Cli, tmp_path: Path) -> None:
    instances = _instances(tmp_path / "instances.jsonl", "abc")
    predictions = write_jsonl(
        tmp_path / "preds.jsonl", [{"instance_id": "nope", "model_patch": GOLD}]
    )
    result = storeless_cli("grade-patches", str(instances), str(predictions))
    assert result.exit_code == 1
    assert f"{predictions}:1: instance_id: no instance 'nope'" in result.output


def test_an_imported_instance_verifies_through_both_phases(
    storeless_cli: Cli, tmp_path: Path, instance_image: tuple[str, Path, str]
) -> None:
    image, clones, commit = instance_image
    instances = _instances(tmp_path / "instances.jsonl", commit)
    out = tmp_path / "swe"
    result = storeless_cli(
        "import",
        "swe-bench",
        str(instances),
        "-o",
        str(out),
        "--option",
        f"image={image}",
        "--option",
        f"repos={clones}",
        db=False,
    )
    assert result.exit_code == 0, result.output
    assert (out / "scenarios" / "fixtures" / "toy__calc-1" / "repo" / "calc.py").read_text() == CALC
    verified = storeless_cli("verify", str(out))
    assert verified.exit_code == 0, verified.output
    assert "1 scenario verified, 0 broken" in verified.output
