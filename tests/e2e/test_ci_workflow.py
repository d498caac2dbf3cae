"""The GitHub Actions workflow of docs/ci.md, replayed (scripts/replay-workflow.py) as an
unprivileged user in real repositories with a base and a head commit, benchyard installed from a
wheel that `python -m build` made of this checkout into a fresh virtualenv; and that wheel alone
runs the starter benchmark with the oracle (a fresh machine's install)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from tests.conftest import TEST_DB

ROOT = Path(__file__).resolve().parents[2]
REPLAY = ROOT / "scripts" / "replay-workflow.py"
USER = "benchyard-ci"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        TEST_DB != "sqlite",
        reason="the workflow's replay keeps its own SQLite store whichever store the suite uses: "
        "it runs in the SQLite half of `make test` only",
    ),
]


def _replay_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("replay_workflow", REPLAY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Unprivileged:
    """Runs commands as the CI user (root drops to it; anyone else already is unprivileged)."""

    def __init__(self) -> None:
        self.root = os.geteuid() == 0
        self.entry = _replay_module().ensure_user(USER) if self.root else None

    def chown(self, path: Path) -> None:
        if self.entry is not None:
            subprocess.run(
                ["chown", "-R", f"{self.entry.pw_uid}:{self.entry.pw_gid}", str(path)], check=True
            )

    def run(self, argv: list[str], cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k.startswith(("PIP_", "SSL_", "REQUESTS_"))}
        home = self.entry.pw_dir if self.entry else os.environ.get("HOME", "/tmp")
        env.update(HOME=home, PATH="/usr/local/bin:/usr/bin:/bin", LANG="C.UTF-8")
        full = ["env", "-i", *(f"{k}={v}" for k, v in env.items()), *argv]
        if self.entry is not None:
            full = ["runuser", "-u", USER, "--", *full]
        return subprocess.run(full, cwd=cwd, text=True, capture_output=True, check=False, **kwargs)


@pytest.fixture(scope="session")
def ci_user() -> Unprivileged:
    return Unprivileged()


@pytest.fixture(scope="session")
def scratch(ci_user: Unprivileged) -> Iterator[Path]:
    """A directory the CI user owns (pytest's own temporary directories are root's alone)."""
    path = Path(tempfile.mkdtemp(prefix="benchyard-ci-"))
    path.chmod(0o755)
    ci_user.chown(path)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def dist(scratch: Path, ci_user: Unprivileged) -> Path:
    """The wheel and the sdist `python -m build` makes of this checkout (its tracked files and the
    untracked ones git does not ignore), built once per session."""
    source = scratch / "source"
    listed = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    out = scratch / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    ci_user.chown(out)
    return out


def _wheel(dist: Path) -> Path:
    (wheel,) = dist.glob("benchyard-*-py3-none-any.whl")
    return wheel


@pytest.fixture(scope="session")
def venv(scratch: Path, ci_user: Unprivileged) -> Path:
    """A fresh virtualenv of the CI user's (setup-python's stand-in), nothing installed in it."""
    for python in ("python3.13", "python3.12", "python3.11", "/usr/bin/python3", sys.executable):
        made = ci_user.run([python, "-m", "venv", str(scratch / "venv")], cwd=scratch)
        if made.returncode == 0:
            version = ci_user.run(
                [
                    str(scratch / "venv" / "bin" / "python"),
                    "-c",
                    "import sys; print(sys.version_info >= (3, 11))",
                ],
                cwd=scratch,
            )
            if version.stdout.strip() == "True":
                return scratch / "venv" / "bin"
        shutil.rmtree(scratch / "venv", ignore_errors=True)
    pytest.fail(
        f"no Python 3.11+ that {USER} may run makes a virtualenv (python3.11+ or /usr/bin/python3)"
    )


@pytest.fixture(scope="session")
def installed(venv: Path, dist: Path, scratch: Path, ci_user: Unprivileged) -> Path:
    """The wheel installed into the fresh virtualenv with pip, by the CI user."""
    done = ci_user.run(
        [str(venv / "python"), "-m", "pip", "install", "-q", str(_wheel(dist))], cwd=scratch
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return venv


# --- the package -------------------------------------------------------------------------------


def test_the_wheel_and_the_sdist_hold_every_file_of_the_package(dist: Path) -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "src/benchyard"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert len(tracked) > 300 and any("/library/" in name for name in tracked)
    in_wheel = set(zipfile.ZipFile(_wheel(dist)).namelist())
    (sdist,) = dist.glob("benchyard-*.tar.gz")
    with tarfile.open(sdist) as archive:
        in_sdist = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert [name for name in tracked if name.removeprefix("src/") not in in_wheel] == []
    assert [name for name in tracked if name not in in_sdist] == []
    for part in (
        "library/starter/benchmark.yaml",
        "store/migrations/",
        "web/templates/",
        "web/static/",
    ):
        assert any(name.startswith(f"benchyard/{part}") for name in in_wheel), part


def test_the_wheel_in_a_clean_venv_runs_starter_with_the_oracle(
    installed: Path, scratch: Path, ci_user: Unprivileged
) -> None:
    work = scratch / "oracle"
    work.mkdir()
    ci_user.chown(work)
    where = ci_user.run(
        [str(installed / "python"), "-c", "import benchyard; print(benchyard.__file__)"], cwd=work
    )
    assert where.stdout.startswith(str(installed.parent)), (
        where.stdout + where.stderr
    )  # not this checkout
    ran = ci_user.run(
        [str(installed / "benchyard"), "run", "starter", "--agent", "oracle", "-q"], cwd=work
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    runs = ci_user.run([str(installed / "benchyard"), "runs", "--format", "json"], cwd=work)
    (run,) = json.loads(runs.stdout)
    assert run["status"] == "finished" and run["benchmark"]["name"] == "starter"
    assert run["passed"] == run["planned_attempts"] == run["finished_attempts"] > 50


# --- the workflow ------------------------------------------------------------------------------

GOOD_AGENT = "#!/bin/sh\nsed -n 's/^say //p' \"$BENCHYARD_INSTRUCTION_FILE\"\n"
BROKEN_AGENT = "#!/bin/sh\necho nonsense\n"
CONFIG = "agents:\n  mine:\n    kind: command\n    command: sh agents/mine.sh\n"


def _benchmark(words: list[str]) -> dict[str, str]:
    scenarios = [
        {
            "id": f"s-{word}",
            "category": "echo",
            "stimulus": f"say {word}",
            "checks": [{"type": "equals", "value": word}],
            "reference": word,
        }
        for word in words
    ]
    return {
        "bench/benchmark.yaml": yaml.safe_dump({"name": "ci-bench", "version": "1.0"}),
        "bench/scenarios/main.yaml": yaml.safe_dump(scenarios, sort_keys=False),
    }


WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]
PROJECT = {
    ".gitignore": ".benchyard/\n",
    "benchyard.yaml": CONFIG,
    "agents/mine.sh": GOOD_AGENT,
    **_benchmark(WORDS),
}


def _project(
    root: Path, base: dict[str, str], head: dict[str, str | None], user: Unprivileged
) -> tuple[str, str]:
    """A repository whose base commit holds `base` and head commit `base` changed by `head`
    (None removes a file); HEAD is the head commit, as a pull request's merge ref would be."""
    root.mkdir()
    git = ["git", "-c", "user.name=ci", "-c", "user.email=ci@example.com"]

    def commit(files: dict[str, str | None], message: str) -> str:
        for name, text in files.items():
            if text is None:
                (root / name).unlink()
            else:
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text, encoding="utf-8")
        subprocess.run([*git, "add", "-A"], cwd=root, check=True)
        subprocess.run([*git, "commit", "-q", "-m", message], cwd=root, check=True)
        return subprocess.run(
            [*git, "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()

    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=root, check=True)
    shas = commit(dict(base), "base"), commit(dict(head), "head")
    user.chown(root)
    return shas


def _replay(
    name: str,
    base: dict[str, str],
    head: dict[str, str | None],
    scratch: Path,
    dist: Path,
    installed: Path,
    ci_user: Unprivileged,
) -> tuple[int, dict[str, Any], Path, tuple[str, str]]:
    case = scratch / name
    case.mkdir()
    ci_user.chown(case)
    shas = _project(case / "project", base, head, ci_user)
    done = subprocess.run(
        [
            sys.executable,
            str(REPLAY),
            "--repo",
            str(case / "project"),
            "--base",
            shas[0],
            "--head",
            shas[1],
            "--workspace",
            str(case / "workspace"),
            "--out",
            str(case / "out"),
            "--python-bin",
            str(installed),
            "--user",
            USER,
            "--input",
            f"benchyard-package={_wheel(dist)}",
            "--input",
            "benchmark=bench",  # the workflow's starter, replaced by the project's own
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    print(done.stdout[-6000:], done.stderr[-6000:])
    report = json.loads((case / "out" / "replay.json").read_text(encoding="utf-8"))
    return done.returncode, report, case / "out", shas


def _steps(report: dict[str, Any]) -> dict[str, tuple[str, int | None]]:
    return {step["name"]: (step["outcome"], step["exit"]) for step in report["steps"]}


def _runs(store: Path) -> list[dict[str, Any]]:
    shown = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchyard",
            "runs",
            "--format",
            "json",
            "--db",
            f"sqlite:///{store}",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return list(reversed(json.loads(shown.stdout)))


def test_the_workflow_runs_base_and_head_as_an_unprivileged_user_and_fails_on_a_regression(
    scratch: Path, dist: Path, installed: Path, ci_user: Unprivileged
) -> None:
    status, report, out, (base, head) = _replay(
        "regression", PROJECT, {"agents/mine.sh": BROKEN_AGENT}, scratch, dist, installed, ci_user
    )
    steps = _steps(report)
    assert status == 1 and report["outcome"] == "failure"
    assert report["user"] == (USER if os.geteuid() == 0 else None)
    assert steps["Install bubblewrap and let it make namespaces"] == ("success", 0)
    assert steps["Install benchyard"] == ("success", 0)
    assert steps["Run the benchmark at the base"] == ("success", 0)
    assert steps["Run the benchmark at the head"] == ("success", 0)
    assert steps["Reports"] == ("success", 0)
    assert steps["Compare the head with the base"] == ("failure", 1)  # --fail-on-regression
    assert steps["Upload the reports and the store"][0] == "success"  # if: always()
    artifact = out / "artifacts" / "benchyard"
    # both runs recorded, each tagged with its commit, in the store the artifact holds (hidden)
    runs = _runs(artifact / ".benchyard" / "benchyard.db")
    assert [(r["agent"]["name"], r["agent"]["commit"], r["passed"]) for r in runs] == [
        ("mine", base, 7),
        ("mine", head, 0),
    ]
    assert report["env"] == {
        "BENCHYARD_BASE_RUN": runs[0]["id"],
        "BENCHYARD_HEAD_RUN": runs[1]["id"],
    }
    junit = (artifact / "benchyard-junit.xml").read_text(encoding="utf-8")
    assert junit.count("<testcase") == 7 and junit.count("<failure") == 7
    summary = (out / "step-summary.md").read_text(encoding="utf-8")
    assert "s-alpha" in summary and runs[1]["id"][:8] in summary  # the report and the comparison
    assert "benchmark changed" not in summary
    assert (artifact / "benchyard-compare.md").read_text(encoding="utf-8") in summary


@pytest.mark.parametrize(
    ("base", "why"),
    [
        ({"README.md": "a project\n"}, "has no benchyard.yaml (this pull request adds it)"),
        (
            {name: text for name, text in PROJECT.items() if not name.startswith("bench/")},
            "has no benchmark 'bench' (this pull request adds it)",
        ),
    ],
    ids=["no-benchyard-yaml", "no-benchmark"],
)
def test_the_first_pull_request_skips_the_base_run_and_passes(
    base: dict[str, str],
    why: str,
    scratch: Path,
    dist: Path,
    installed: Path,
    ci_user: Unprivileged,
) -> None:
    added: dict[str, str | None] = {
        name: text for name, text in PROJECT.items() if name not in base
    }
    status, report, out, (_, head) = _replay(
        f"first-pr-{len(base)}", base, added, scratch, dist, installed, ci_user
    )
    steps = _steps(report)
    assert status == 0 and report["outcome"] == "success", report
    assert steps["Run the benchmark at the base"] == ("success", 0)
    assert steps["Compare the head with the base"] == ("success", 0)
    assert "BENCHYARD_BASE_RUN" not in report["env"]
    summary = (out / "step-summary.md").read_text(encoding="utf-8")
    assert why in summary
    assert "no base run, nothing compared" in summary
    (run,) = _runs(out / "artifacts" / "benchyard" / ".benchyard" / "benchyard.db")
    assert (run["agent"]["commit"], run["passed"]) == (head, 7)
    assert (out / "artifacts" / "benchyard" / "benchyard-junit.xml").is_file()


def test_a_pull_request_that_edits_the_benchmark_is_compared_on_the_scenarios_both_have(
    scratch: Path, dist: Path, installed: Path, ci_user: Unprivileged
) -> None:
    edited = _benchmark([*WORDS[1:], "hotel"])  # alpha removed, hotel added
    status, report, out, _ = _replay(
        "edited", PROJECT, dict(edited), scratch, dist, installed, ci_user
    )
    steps = _steps(report)
    assert status == 0 and report["outcome"] == "success", report
    assert steps["Compare the head with the base"] == ("success", 0)
    runs = _runs(out / "artifacts" / "benchyard" / ".benchyard" / "benchyard.db")
    assert len(runs) == 2 and runs[0]["benchmark"]["hash"] != runs[1]["benchmark"]["hash"]
    summary = (out / "step-summary.md").read_text(encoding="utf-8")
    assert "the benchmark changed in this pull request" in summary
    assert "--allow-version-mismatch" in summary
    compared = (out / "artifacts" / "benchyard" / "benchyard-compare.md").read_text(
        encoding="utf-8"
    )
    rows = {
        row.split("|")[1].strip(): row for row in compared.splitlines() if row.startswith("| s-")
    }
    assert rows["s-alpha"].rstrip(" |").endswith("passed | —")  # removed at the head
    assert rows["s-hotel"].rstrip(" |").endswith("— | passed")  # added at the head


def test_the_docs_workflow_uses_the_action_and_the_action_uploads_hidden_files() -> None:
    workflow = _replay_module().load_workflow(ROOT / "docs" / "ci.md")
    assert "pull_request" in workflow["on"]
    (job,) = workflow["jobs"].values()
    checkout, action = job["steps"]
    assert checkout["uses"].startswith("actions/checkout@") and checkout["with"]["fetch-depth"] == 0
    assert action["uses"] == "OWNER/benchyard@main"
    definition = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert definition["runs"]["using"] == "composite"
    steps = definition["runs"]["steps"]
    script = "\n".join(step.get("run", "") for step in steps)
    assert (
        "--fail-on-regression" in script
        and "--format junit" in script
        and "GITHUB_STEP_SUMMARY" in script
    )
    assert "apparmor_restrict_unprivileged_userns=0" in script and "apt-get update" in script
    (upload,) = [
        step for step in steps if str(step.get("uses", "")).startswith("actions/upload-artifact@")
    ]
    assert (
        upload["with"]["include-hidden-files"] is True and ".benchyard/" in upload["with"]["path"]
    )
    for step in steps:  # inputs reach scripts through env:, never pasted into them
        assert "${{" not in step.get("run", ""), step.get("name")
        assert "run" not in step or step.get("shell") == "bash", step.get("name")  # composite
    documented = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    for name in definition["inputs"]:
        assert f"`{name}`" in documented, name
