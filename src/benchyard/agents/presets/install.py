"""Installing a preset once, into a cache the sandbox may read.

A pip package goes into a virtualenv made by the system's `python3` (found on the sandbox's own
PATH, so that its interpreter chain stays inside what the sandbox shows), an npm package under
`npm install --prefix`. The cache is `$BENCHYARD_AGENT_CACHE`, else `$XDG_CACHE_HOME/benchyard/
agents`, else `~/.cache/benchyard/agents`, one directory per `<kind>-<version>` (never under
/tmp, which the sandbox hides). A directory counts as installed only once its marker file is
written, after the installer succeeded; a lock file keeps two installs of one version apart.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

from benchyard.agents.presets.definitions import Preset
from benchyard.sandbox.base import SYSTEM_PATH

CACHE_VARIABLE = "BENCHYARD_AGENT_CACHE"
MARKER = ".benchyard-installed"
INSTALL_TIMEOUT_SEC = 1800.0
ERROR_TAIL_CHARS = 400


class InstallFailed(Exception):
    """The installer failed; the message says which command and how."""


def cache_root() -> Path:
    configured = os.environ.get(CACHE_VARIABLE)
    if configured:
        return Path(configured).expanduser().absolute()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base.absolute() / "benchyard" / "agents"


def install_dir(preset: Preset, version: str) -> Path:
    return cache_root() / f"{preset.kind}-{version}"


def program_path(preset: Preset, version: str) -> Path:
    return install_dir(preset, version) / preset.program


def is_installed(preset: Preset, version: str) -> bool:
    directory = install_dir(preset, version)
    return (directory / MARKER).is_file() and (directory / preset.program).exists()


def install(preset: Preset, version: str) -> Path:
    """Install `preset` at `version` unless it is installed; its program's path. Raises
    InstallFailed (the partial directory removed)."""
    directory = install_dir(preset, version)
    directory.parent.mkdir(parents=True, exist_ok=True)
    with open(directory.parent / f".{directory.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_installed(preset, version):
            return directory / preset.program
        shutil.rmtree(directory, ignore_errors=True)
        try:
            for command in _commands(preset, version, directory):
                _run(command)
            if not (directory / preset.program).exists():
                raise InstallFailed(f"{preset.package} {version} installed no {preset.program}")
        except InstallFailed:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        (directory / MARKER).write_text(f"{preset.package}=={version}\n", encoding="utf-8")
    return directory / preset.program


def _commands(preset: Preset, version: str, directory: Path) -> list[list[str]]:
    if preset.installer == "pip":
        python = shutil.which("python3", path=SYSTEM_PATH)
        if python is None:
            raise InstallFailed(f"no python3 on {SYSTEM_PATH} to make {preset.kind}'s virtualenv")
        pip = str(directory / "bin" / "pip")
        return [
            [python, "-m", "venv", str(directory)],
            [pip, "install", "--disable-pip-version-check", f"{preset.package}=={version}"],
        ]
    npm = shutil.which("npm")
    if npm is None:
        raise InstallFailed(f"no npm on PATH to install {preset.package}")
    return [
        [npm, "install", "--prefix", str(directory), "--no-audit", "--no-fund", "--silent",
         f"{preset.package}@{version}"],
    ]  # fmt: skip


def _run(command: list[str]) -> None:
    """Run an installer step; its output is shown only when it fails."""
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=INSTALL_TIMEOUT_SEC,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise InstallFailed(f"{' '.join(command[:3])} ...: {error}") from error
    output = done.stdout.decode("utf-8", errors="replace")
    if done.returncode != 0:
        raise InstallFailed(f"{' '.join(command)} exited with {done.returncode}: {_why(output)}")


def _why(output: str) -> str:
    """The installer's error lines (pip's `ERROR: ...`, npm's `npm error ...`), else the end of
    its output, on one line."""
    lines = [line.strip() for line in output.splitlines()]
    errors = [line for line in lines if line.upper().startswith(("ERROR", "NPM ERR"))]
    if errors:  # each shown from its start: "ERROR: No matching distribution found for ..."
        return " ".join(line[: ERROR_TAIL_CHARS // 2] for line in errors[-2:])
    return " ".join(output.split())[-ERROR_TAIL_CHARS:]
