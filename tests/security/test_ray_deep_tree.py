"""Issue 26, item 4, on Ray: an agent that leaves 5,000 nested directories in its workdir. Before,
`shutil.rmtree` raised RecursionError on the node and the attempt became an uncounted error
("internal error on Ray node ...: RecursionError"), a failure hidden. Now the node removes the
tree iteratively, as a local run does (test_harness_files.py): the attempt's change is refused
with its cause, counted against the agent, and the tree is gone from the node.

On a real one-node cluster with a PostgreSQL store; run once, in the PostgreSQL half of
`make test` (conftest.py), as tests/integration/ray's are."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchyard.executors.ray.local_cluster import LocalCluster, local_cluster
from benchyard.store.store import Store
from benchyard.untrusted import remove_tree, walk_tree
from tests.security.test_harness_files import CONTROL, DEEP_AGENT
from tests.support import Cli, write_benchmark

pytestmark = [pytest.mark.slow, pytest.mark.store_half]  # a PostgreSQL store of its own
RUN_LIMIT_SEC = 600  # far beyond what the run needs on a loaded machine: only a hang reaches it


@pytest.fixture
def work_root() -> Iterator[Path]:
    """Where the node puts its scratch directories, removed iteratively after."""
    directory = Path(tempfile.mkdtemp(prefix="byr-work-", dir="/tmp"))
    yield directory
    remove_tree(directory, ignore_errors=True)


@pytest.fixture
def cluster(work_root: Path) -> Iterator[LocalCluster]:
    """One node, whose attempts' scratch directories go under `work_root`."""
    cache = Path(tempfile.mkdtemp(prefix="byr-cache-", dir="/tmp"))
    env = {"BENCHYARD_RAY_CACHE": str(cache), "BENCHYARD_WORK_ROOT": str(work_root)}
    try:
        with (
            local_cluster({"head": (1, {})}, object_store_mb=80, env=env) as started,
            pytest.MonkeyPatch.context() as patch,
        ):
            for name, value in started.client_env.items():
                patch.setenv(name, value)
            yield started
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def test_a_deep_tree_on_a_ray_node_is_the_agent_s_own_failure(
    tmp_path: Path, cluster: LocalCluster, postgres_url: str, work_root: Path
) -> None:
    fixtures = tmp_path / "bench" / "scenarios" / "fixtures" / "repo"
    fixtures.mkdir(parents=True)
    (fixtures / "module.py").write_text("VALUE = 1\n", encoding="utf-8")
    coding = {
        "id": "deep-coding",
        "category": "coding",
        "stimulus": {"task": "change module.py"},
        "fixtures": {"files": [{"src": "fixtures/repo", "dest": "."}]},
        "checks": [{"type": "diff_quality", "protected_paths": []}],
    }
    bench = write_benchmark(tmp_path / "bench", [{**CONTROL, "id": "deep"}, coding])
    agent = tmp_path / "agent" / "deep.py"  # a directory of its own: shipped to the node
    agent.parent.mkdir()
    agent.write_text(DEEP_AGENT, encoding="utf-8")
    cli = Cli(postgres_url, tmp_path)
    command = [
        sys.executable, "-m", "benchyard", "run", str(bench), "--agent-cmd", f"python3 {agent}",
        "--executor", "ray", "--ray-address", cluster.address, "--retries", "0", "-q",
        "--db", postgres_url,
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=cli.cwd, capture_output=True, text=True, timeout=RUN_LIMIT_SEC, check=False
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    store = Store.open(postgres_url)
    try:
        run = store.resolve_run("latest")
        attempts = {a.scenario_id: a for a in store.attempts(run.id, with_evidence=True)}
    finally:
        store.close()
    assert attempts["deep"].verdict == "passed"
    deep = attempts["deep-coding"]
    assert deep.verdict == "failed"  # its own change: counted against it, never an error
    assert deep.failure_kind != "harness_error"
    reasons = (deep.cause or "") + str([check.reason for check in deep.checks])
    assert "RecursionError" not in reasons
    assert "levels deep" in reasons
    # The node keeps the run's scratch directory while its Ray worker process lives (for the
    # run's next tries); the attempt's workdir in it, with its 5,000 levels, is gone.
    kept = [path for path in work_root.iterdir() if run.id in path.name]
    left = [directory for path in kept for directory, _, _ in walk_tree(path)]
    assert len(left) < 20 and not [directory for directory in left if directory.name == "d"]
