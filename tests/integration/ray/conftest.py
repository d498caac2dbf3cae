"""A real Ray cluster of two nodes on this machine, each `ray start` a process of its own, started
once per test module and always torn down; the Ray tests use a PostgreSQL store."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchyard.executors.ray.local_cluster import LocalCluster, local_cluster
from benchyard.store.store import Store
from tests.support import Cli

# They use a PostgreSQL store whatever the half of `make test`: they run once, in its PostgreSQL
# half. (`make test` installs Ray: without it they fail, they are never skipped.)
if os.environ.get("BENCHYARD_TEST_DB", "sqlite") == "sqlite":
    collect_ignore = ["test_ray_executor.py"]

HEAD, WORKER_NODE = (
    "head",
    "b",
)  # node names (ray start --node-name), each with a resource of its own


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    """Head node `head` (1 CPU, resource `head_node`) and worker node `b` (1 CPU, `b_node`); the
    nodes unpack what the worker ships under a cache of their own. The processes the tests start
    (workers, runs) get the cluster's token in their environment."""
    cache = Path(tempfile.mkdtemp(prefix="byr-cache-", dir="/tmp"))
    nodes = {HEAD: (1, {"head_node": 1.0}), WORKER_NODE: (1, {"b_node": 1.0})}
    try:
        with (
            local_cluster(nodes, object_store_mb=80, env={"BENCHYARD_RAY_CACHE": str(cache)}) as c,
            pytest.MonkeyPatch.context() as patch,
        ):
            for name, value in c.client_env.items():
                patch.setenv(name, value)
            yield c
    finally:
        shutil.rmtree(cache, ignore_errors=True)


@pytest.fixture
def pg_store(postgres_url: str) -> Iterator[Store]:
    opened = Store.open(postgres_url)
    yield opened
    opened.close()


@pytest.fixture
def pg_cli(postgres_url: str, tmp_path: Path) -> Cli:
    work = tmp_path / "work"
    work.mkdir()
    return Cli(postgres_url, work)
