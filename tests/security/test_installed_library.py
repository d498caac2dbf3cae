"""Attack class 1 again, through an installed benchyard: with benchyard installed system-wide
(/usr/local, which the bwrap sandbox shows as part of its system) or into the virtualenv the
agent's interpreter comes from (which every sandbox shows as the agent's own code), an agent that
searched the filesystem read the built-in library's scenario files and answered the `starter`
benchmark with their references (61/74 passed). Each copy of the library must now be covered."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import benchyard
from benchyard.store.store import Store
from tests.support import Cli

PACKAGE = Path(benchyard.__file__).resolve().parent
SYSTEM_PYTHON = Path("/usr/bin/python3")
SEARCH = """
import os, re, sys
found, package = [], []
for directory, subdirectories, files in os.walk("/"):
    if directory in ("/proc", "/sys", "/dev"):
        subdirectories.clear()
        continue
    for name in files:
        path = os.path.join(directory, name)
        if name == "__init__.py" and directory.endswith("-packages/benchyard"):
            package.append(directory)
        if "/library/" in path and name.endswith(".yaml"):
            try:
                text = open(path, encoding="utf-8", errors="replace").read()
            except OSError:
                continue
            if "reference" in text or "scenarios" in text:
                found.append(path)
for path in sorted(set(package)):
    print("package", path)
for path in found:
    print("FOUND", path)
"""


def _copy_package(site: Path) -> None:
    """benchyard installed into the site directory `site`, as `pip install --no-deps --target`
    lays it out (the package and its data, library included)."""
    shutil.copytree(PACKAGE, site / "benchyard", ignore=shutil.ignore_patterns("__pycache__"))


def _system_site() -> Path:
    """The system Python's first site directory (/usr/local/lib/python3.X/dist-packages)."""
    if not SYSTEM_PYTHON.exists():
        pytest.skip("no system Python at /usr/bin/python3")
    return Path(
        subprocess.run(
            [str(SYSTEM_PYTHON), "-c", "import site; print(site.getsitepackages()[0])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )


@pytest.fixture
def system_install(tmp_path: Path) -> tuple[Path, Path]:
    """The system site directory, and a private one to be mounted over it holding benchyard, as
    installed system-wide (`in_system_install`): other test sessions on this machine, whose
    sandboxes show /usr/local too, never see it come and go."""
    site = _system_site()
    if (site / "benchyard").exists():
        pytest.skip(f"benchyard is really installed in {site}: not covering it")
    private = tmp_path / "dist-packages"
    private.mkdir()
    _copy_package(private)
    return site, private


def in_system_install(system_install: tuple[Path, Path], command: list[str]) -> list[str]:
    """`command` in a mount namespace of its own where `site` shows the private site directory."""
    site, private = system_install
    mount = 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
    namespace = ["unshare", "--mount", "--propagation", "private", "sh", "-c", mount, "sh"]
    return [*namespace, str(private), str(site), *command]


@pytest.fixture
def agent_venv(project: Path) -> Path:
    """A virtualenv of the system Python, with benchyard installed into it, that the agent's
    interpreter comes from."""
    venv = project / "venv"
    subprocess.run(
        [str(SYSTEM_PYTHON), "-m", "venv", "--without-pip", str(venv)],
        check=True,
        capture_output=True,
    )
    version = sysconfig.get_python_version()
    sites = list(venv.glob("lib/python3*/site-packages"))
    assert sites, f"no site-packages in {venv} ({version})"
    _copy_package(sites[0])
    return venv


def _attack_args(benchmark: str, command: str, sandbox: str) -> list[str]:
    return ["run", benchmark, "--agent-cmd", command, "--sandbox", sandbox, "--limit", "2", "-q"]


def _attack(cli: Cli, benchmark: str, command: str, sandbox: str) -> list[str]:
    result = cli(*_attack_args(benchmark, command, sandbox))
    assert result.exit_code in (0, 1), result.output
    return _outputs(cli.db_url)


def _outputs(db_url: str) -> list[str]:
    """The stdout of each attempt of the latest run."""
    store = Store.open(db_url)
    try:
        run = store.resolve_run("latest")
        return [a.stdout or "" for a in store.attempts(run.id, with_evidence=True)]
    finally:
        store.close()


@pytest.mark.parametrize("benchmark", ["starter", "hard"])
def test_a_system_wide_install_shows_no_reference_to_a_bwrap_agent(
    benchmark: str, project: Path, db_url: str, system_install: tuple[Path, Path]
) -> None:
    agent = project / "search.py"
    agent.write_text(SEARCH, encoding="utf-8")
    args = _attack_args(benchmark, f"{SYSTEM_PYTHON} {agent}", "bwrap")
    benchyard_run = [sys.executable, "-m", "benchyard", *args, "--db", db_url]
    run = subprocess.run(
        in_system_install(system_install, benchyard_run),
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert run.returncode in (0, 1), run.stdout + run.stderr
    outputs = _outputs(db_url)
    assert len(outputs) == 2
    site, _ = system_install
    for stdout in outputs:
        assert f"package {site / 'benchyard'}" in stdout  # the installed package is in view ...
        assert "FOUND" not in stdout  # ... but not one file of its library


@pytest.mark.parametrize("sandbox", ["bwrap", "docker"])
@pytest.mark.parametrize("benchmark", ["starter", "hard"])
def test_an_install_in_the_agent_s_virtualenv_shows_no_reference(
    benchmark: str, sandbox: str, project: Path, db_url: str, agent_venv: Path
) -> None:
    agent = project / "agent" / "search.py"
    agent.parent.mkdir()
    agent.write_text(SEARCH, encoding="utf-8")
    outputs = _attack(Cli(db_url, project), benchmark, f"{agent_venv}/bin/python {agent}", sandbox)
    assert len(outputs) == 2
    for stdout in outputs:
        assert f"package {agent_venv}/lib/" in stdout
        assert "FOUND" not in stdout
