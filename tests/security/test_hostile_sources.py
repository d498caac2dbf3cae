"""Hostile sources turned against the host: datasets and task directories given to
`benchyard import`, and logs given to `benchyard import-run`.

Before: a SWE-bench `instance_id` of `../../..` wrote the gold patch and the repository's files
outside the output directory (under /root), and the import failed only afterwards, leaving what it
had written; a Harbor task's `tests` link copied the host directory it pointed at into the
benchmark. Now every name that becomes a path is checked before anything is written, the
benchmark is written beside its output directory and renamed at the end, and a failed import
leaves nothing behind."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support import Cli
from tests.unit.importers.sources import write_jsonl

LIMIT_SEC = 300


def _finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=LIMIT_SEC)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"the command hung for {LIMIT_SEC} s")
    return process.returncode, out, err


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def _clone(root: Path) -> str:
    """A repository `acme/calc` under `root/clones` (as `acme__calc`); its commit."""
    repo = root / "clones" / "acme__calc"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    return _git(repo, "rev-parse", "HEAD")


def _instance(instance_id: str, commit: str) -> dict[str, object]:
    return {
        "instance_id": instance_id,
        "repo": "acme/calc",
        "base_commit": commit,
        "patch": "diff --git a/calc.py b/calc.py\n",
        "test_patch": "",
        "problem_statement": "add adds",
        "FAIL_TO_PASS": ["test_add"],
        "PASS_TO_PASS": [],
    }


def _leftovers(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def test_a_swe_bench_instance_id_never_writes_outside_the_output(
    tmp_path: Path, project: Path, project_cli: Cli
) -> None:
    commit = _clone(tmp_path)
    victim = tmp_path / "victim"  # out/scenarios/fixtures/../../../victim
    source = write_jsonl(
        tmp_path / "instances.jsonl",
        [_instance("acme__calc-1", commit), _instance("../../../victim", commit)],
    )
    before = _leftovers(tmp_path)
    out = tmp_path / "out"
    code, _, err = _finish(
        project_cli.process(
            "import", "swe-bench", str(source), "-o", str(out),
            "--option", f"repos={tmp_path / 'clones'}", db=False,
        )
    )  # fmt: skip
    assert "Traceback" not in err, err
    assert code == 1, err
    assert f"{source}:2: instance_id: '../../../victim' leads out of its directory" in err
    assert not victim.exists()
    assert _leftovers(tmp_path) == before  # no output, no staging directory


def test_an_import_that_fails_to_load_leaves_nothing(
    tmp_path: Path, project: Path, project_cli: Cli
) -> None:
    """Written in full, then refused by the loader (two instances with one id): removed again."""
    commit = _clone(tmp_path)
    source = write_jsonl(
        tmp_path / "instances.jsonl",
        [_instance("acme__calc-1", commit), _instance("acme__calc-1", commit)],
    )
    before = _leftovers(tmp_path)
    out = tmp_path / "out"
    code, _, err = _finish(
        project_cli.process(
            "import", "swe-bench", str(source), "-o", str(out),
            "--option", f"repos={tmp_path / 'clones'}", db=False,
        )
    )  # fmt: skip
    assert "Traceback" not in err, err
    assert code == 1, err
    assert "acme__calc-1" in err
    assert _leftovers(tmp_path) == before


def test_a_harbor_task_link_copies_no_host_directory(
    tmp_path: Path, project: Path, project_cli: Cli
) -> None:
    """A task whose `tests` is a link to a host directory: refused, nothing copied."""
    secret = tmp_path / "host-secrets"
    secret.mkdir()
    (secret / "id_rsa").write_text("PRIVATE KEY")
    (secret / "test.sh").write_text("exit 0\n")
    task = tmp_path / "tasks" / "leak"
    (task / "environment").mkdir(parents=True)
    (task / "environment" / "Dockerfile").write_text("FROM scratch\n")
    (task / "task.toml").write_text("[agent]\ntimeout_sec = 60\n")
    (task / "instruction.md").write_text("Do it.")
    (task / "tests").symlink_to(secret)
    out = tmp_path / "out"
    code, _, err = _finish(
        project_cli.process(
            "import", "harbor", str(tmp_path / "tasks"), "-o", str(out),
            "--option", "build=false", db=False,
        )
    )  # fmt: skip
    assert "Traceback" not in err, err
    assert code == 1, err
    assert f"{task / 'tests'}: is a link" in err
    assert not out.exists()
    found = subprocess.run(
        ["grep", "-r", "PRIVATE KEY", str(tmp_path), "--exclude-dir=host-secrets"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.stdout == ""
