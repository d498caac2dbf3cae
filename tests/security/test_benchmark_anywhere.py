"""Attack class 1 again (issue 26, item 1), through where a user's benchmark lies: a benchmark
under /usr/local (a system directory the bwrap sandbox shows) was shown to the agent with its
references, as an installed copy of the built-in library was (test_installed_library.py). No
benchmark directory is in an agent's view, wherever it sits on disk: an agent that walks the whole
filesystem finds none of its references, here with the benchmark under /usr/local/share and inside
the agent's own code directory."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchyard.store.store import Store
from tests.support import Cli, write_benchmark

SECRET = f"SECRET-{uuid.uuid4().hex}"
SEARCH = f"""
import os, sys
found, saw = [], False
for directory, subdirectories, files in os.walk("/"):
    if directory in ("/proc", "/sys", "/dev"):
        subdirectories.clear()
        continue
    saw = saw or directory == sys.argv[1]
    for name in files:
        if not name.endswith((".yaml", ".yml", ".json", ".jsonl")):
            continue
        try:
            with open(os.path.join(directory, name), "rb") as handle:
                if {SECRET.encode()!r} in handle.read(1 << 20):
                    found.append(os.path.join(directory, name))
        except OSError:
            pass
print("saw", sys.argv[1]) if saw else None
print("FOUND", found) if found else print("nothing found")
"""


@pytest.fixture
def system_share() -> Iterator[Path]:
    """A directory of this test's own under /usr/local/share, removed after."""
    share = Path("/usr/local/share")
    if not share.is_dir() or not os.access(share, os.W_OK):
        pytest.skip("cannot write under /usr/local/share")
    directory = share / f"benchyard-security-{uuid.uuid4().hex[:12]}"
    directory.mkdir(mode=0o755)
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _attack(project: Path, db_url: str, bench: Path, agent: Path, sandbox: str) -> list[str]:
    """Run the benchmark at `bench` (2 scenarios) with the searching `agent`: its stdouts. The
    agent says whether it walked through the directory that holds the benchmark."""
    write_benchmark(
        bench,
        [
            {
                "id": f"q{n}",
                "stimulus": f"question {n}",
                "checks": [{"type": "equals", "value": f"{SECRET}-{n}"}],
                "reference": f"{SECRET}-{n}",
            }
            for n in range(2)
        ],
    )
    for path in (bench, *bench.rglob("*")):  # readable by all, as an installed benchmark is
        path.chmod(0o755 if path.is_dir() else 0o644)
    agent.parent.mkdir(parents=True, exist_ok=True)
    agent.write_text(SEARCH, encoding="utf-8")
    cli = Cli(db_url, project)
    command = f"python3 {agent} {bench.parent}"
    result = cli("run", str(bench), "--agent-cmd", command, "--sandbox", sandbox, "-q")
    assert result.exit_code == 0, result.output
    store = Store.open(db_url)
    try:
        attempts = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    finally:
        store.close()
    assert [a.verdict for a in attempts] == ["failed", "failed"]
    return [a.stdout or "" for a in attempts]


@pytest.mark.parametrize("sandbox", ["bwrap", "docker"])
def test_a_benchmark_in_a_system_directory_is_out_of_reach(
    sandbox: str, project: Path, db_url: str, system_share: Path
) -> None:
    outputs = _attack(project, db_url, system_share / "bench", project / "agent.py", sandbox)
    assert all("nothing found" in stdout for stdout in outputs), outputs
    if sandbox == "bwrap":  # bwrap shows /usr: the directory is there, the benchmark is not
        assert all(f"saw {system_share}" in stdout for stdout in outputs), outputs


@pytest.mark.parametrize("sandbox", ["bwrap", "docker"])
def test_a_benchmark_inside_the_agent_s_own_code_is_out_of_reach(
    sandbox: str, project: Path, db_url: str
) -> None:
    code = project / "agent"
    outputs = _attack(project, db_url, code / "bench", code / "search.py", sandbox)
    assert all("nothing found" in stdout for stdout in outputs), outputs
    assert all(f"saw {code}" in stdout for stdout in outputs), outputs  # its code is shown
