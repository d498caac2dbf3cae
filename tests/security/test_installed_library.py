"""Attack class 1 again, through an installed benchyard: with benchyard installed system-wide
(/usr/local, which the bwrap sandbox shows as part of its system) or into the virtualenv the
agent's interpreter comes from (which every sandbox shows as the agent's own code), an agent that
searched the filesystem read the built-in library's scenario files and answered the `starter`
benchmark with their references (61/74 passed). Each copy of the library must now be covered."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sysconfig
from collections.abc import Iterator
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


@contextlib.contextmanager
def _system_site_lock(site: Path, mode: int) -> Iterator[None]:
    """The lock that serialises these tests across test sessions on one machine: a system-wide
    install holds it exclusively, and a test whose sandbox sees the system site directory (every
    sandbox scans it for library copies) holds it shared, so that no other session's install
    appears or vanishes under it."""
    with (site.parent / ".benchyard-security-test.lock").open("w") as lock:
        fcntl.flock(lock, mode)
        yield


@pytest.fixture
def system_install() -> Iterator[Path]:
    """benchyard in the system Python's /usr/local site directory for this test, removed after
    (serialised with any other session's)."""
    site = _system_site()
    if not site.is_relative_to("/usr/local") or not os.access(site.parent, os.W_OK):
        pytest.skip(f"cannot install into the system site directory {site}")
    site.mkdir(parents=True, exist_ok=True)
    with _system_site_lock(site, fcntl.LOCK_EX):
        if (site / "benchyard").exists():
            pytest.skip(f"benchyard is really installed in {site}: not touching it")
        _copy_package(site)
        try:
            yield site / "benchyard"
        finally:
            shutil.rmtree(site / "benchyard", ignore_errors=True)


@pytest.fixture
def no_system_install_meanwhile() -> Iterator[None]:
    """No other session's system-wide install comes or goes while the test runs."""
    site = _system_site()
    if not site.parent.is_dir() or not os.access(site.parent, os.W_OK):
        yield
        return
    with _system_site_lock(site, fcntl.LOCK_SH):
        yield


@pytest.fixture
def agent_venv(project: Path, no_system_install_meanwhile: None) -> Path:
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


def _attack(cli: Cli, benchmark: str, command: str, sandbox: str) -> list[str]:
    result = cli(
        "run", benchmark, "--agent-cmd", command, "--sandbox", sandbox, "--limit", "2", "-q"
    )
    assert result.exit_code in (0, 1), result.output
    store = Store.open(cli.db_url)
    try:
        run = store.resolve_run("latest")
        return [a.stdout or "" for a in store.attempts(run.id, with_evidence=True)]
    finally:
        store.close()


@pytest.mark.parametrize("benchmark", ["starter", "hard"])
def test_a_system_wide_install_shows_no_reference_to_a_bwrap_agent(
    benchmark: str, project: Path, db_url: str, system_install: Path
) -> None:
    agent = project / "search.py"
    agent.write_text(SEARCH, encoding="utf-8")
    outputs = _attack(Cli(db_url, project), benchmark, f"{SYSTEM_PYTHON} {agent}", "bwrap")
    assert len(outputs) == 2
    for stdout in outputs:
        assert f"package {system_install}" in stdout  # the installed package is in view ...
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
