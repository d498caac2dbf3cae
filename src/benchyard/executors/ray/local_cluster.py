"""A Ray cluster of separate processes on this machine: a head node and worker nodes, each one
`ray start --block` of its own, for the tests, `bench/ray.py` and trying the Ray executor.

The cluster requires token authentication, with a token of its own (Ray would otherwise pick one
up from `~/.ray/auth_token` for the head only, and the other nodes could not join): processes
that join it (a `benchyard worker --executor ray`) need `client_env` in their environment.

Every process of the cluster (the `ray start` processes, the GCS, each raylet, its workers and
agents) inherits two variables, `BENCHYARD_RAY_CLUSTER` (this cluster) and `BENCHYARD_RAY_NODE`
(its node), so that one node can be killed with SIGKILL as a lost machine would be, and the whole
cluster torn down, by process id, without touching any other Ray cluster on the machine (which
`ray stop --force` would: it kills every Ray process it finds by name).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

CLUSTER_VARIABLE = "BENCHYARD_RAY_CLUSTER"
NODE_VARIABLE = "BENCHYARD_RAY_NODE"
START_TIMEOUT_SEC = 180.0
START_TRIES = 3


class ClusterFailed(RuntimeError):
    """A node of the local cluster did not start."""


@dataclass(frozen=True)
class LocalNode:
    name: str  # benchyard's name for it (head, n1, ...), also in its processes' environment
    process: subprocess.Popen[bytes]
    log: Path


class LocalCluster:
    """Start with `start()`, add nodes with `add_node()`, kill one with `kill_node()`, and always
    `stop()` (or use it as a context manager). Its temporary directory is short (`/tmp/byr-*`):
    Ray's socket paths live there and must fit in 107 bytes."""

    def __init__(
        self,
        ray_program: str | None = None,
        object_store_mb: int = 80,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.ray = ray_program or str(Path(sys.executable).with_name("ray"))
        self.env = dict(env or {})  # for every node's processes (BENCHYARD_RAY_CACHE, ...)
        self.token = uuid.uuid4().hex[:12]
        self.root = Path(tempfile.mkdtemp(prefix="byr-", dir="/tmp"))
        self.object_store_bytes = object_store_mb * 1024 * 1024
        self.nodes: dict[str, LocalNode] = {}
        self.address = ""
        token = self.root / "auth_token"
        token.write_text(secrets.token_hex(32), encoding="ascii")
        token.chmod(0o600)
        self.client_env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- starting ---------------------------------------------------------------------------

    def start(
        self,
        num_cpus: int = 1,
        resources: Mapping[str, float] | None = None,
        name: str = "head",
    ) -> str:
        """Start the head node; returns the cluster's address (`host:port`)."""

        def role() -> list[str]:
            port = free_port()
            self.address = f"{node_ip()}:{port}"
            return [
                "--head",
                f"--port={port}",
                f"--temp-dir={self.root / 'ray'}",
                "--include-dashboard=false",
            ]

        self._started(name, role, num_cpus, resources)
        return self.address

    def add_node(
        self, name: str, num_cpus: int = 1, resources: Mapping[str, float] | None = None
    ) -> LocalNode:
        """Start a worker node that joins the head."""
        if not self.address:
            raise ClusterFailed("start the head node first")
        return self._started(name, lambda: [f"--address={self.address}"], num_cpus, resources)

    def _started(
        self,
        name: str,
        role: Callable[[], list[str]],
        num_cpus: int,
        resources: Mapping[str, float] | None,
    ) -> LocalNode:
        """Start a node, again (after killing what the failed start left) when it times out: a
        busy machine sometimes keeps a raylet from registering in time."""
        for attempt in range(1, START_TRIES + 1):
            try:
                return self._start(name, role(), num_cpus, resources)
            except ClusterFailed:
                self.kill_node(name)
                if attempt == START_TRIES:
                    raise
        raise AssertionError("unreachable")

    def _start(
        self,
        name: str,
        role: list[str],
        num_cpus: int,
        resources: Mapping[str, float] | None,
    ) -> LocalNode:
        log = self.root / f"{name}.log"
        command = [
            self.ray,
            "start",
            *role,
            "--block",
            f"--node-name={name}",
            f"--num-cpus={num_cpus}",
            f"--object-store-memory={self.object_store_bytes}",
            f"--resources={json.dumps(dict(resources or {}))}",
            f"--dashboard-agent-listen-port={free_port()}",
            f"--dashboard-agent-grpc-port={free_port()}",
            f"--runtime-env-agent-port={free_port()}",
            f"--metrics-export-port={free_port()}",
            "--disable-usage-stats",
        ]
        environment = {
            **os.environ,
            **self.env,
            **self.client_env,
            CLUSTER_VARIABLE: self.token,
            NODE_VARIABLE: name,
            "RAY_USAGE_STATS_ENABLED": "0",
        }
        with log.open("ab") as sink:
            process = subprocess.Popen(
                command,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=environment,
                start_new_session=True,
            )
        node = LocalNode(name, process, log)
        self.nodes[name] = node
        self._wait_started(node)
        return node

    def _wait_started(self, node: LocalNode) -> None:
        deadline = time.monotonic() + START_TIMEOUT_SEC
        while time.monotonic() < deadline:
            text = node.log.read_text(errors="replace")
            if "Ray runtime started" in text:
                return
            if node.process.poll() is not None:
                raise ClusterFailed(f"ray node {node.name} exited: {text[-2000:]}")
            time.sleep(0.2)
        raise ClusterFailed(f"ray node {node.name} did not start in {START_TIMEOUT_SEC:.0f} s")

    # ---- stopping ---------------------------------------------------------------------------

    def processes(self, node: str | None = None) -> list[int]:
        """The live processes of this cluster (of one node, when named), found by environment."""
        wanted = {f"{CLUSTER_VARIABLE}={self.token}".encode()}
        if node is not None:
            wanted.add(f"{NODE_VARIABLE}={node}".encode())
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                variables = set((entry / "environ").read_bytes().split(b"\0"))
            except OSError:
                continue
            if wanted <= variables:
                found.append(int(entry.name))
        return found

    def kill_node(self, name: str) -> list[int]:
        """SIGKILL every process of node `name` at once, as a machine that died; returns them."""
        killed = self.processes(name)
        for pid in killed:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        node = self.nodes.pop(name, None)
        if node is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(timeout=10)
        return killed

    def stop(self) -> None:
        """Kill every process of the cluster (a few rounds: dying raylets may start workers) and
        remove its directory."""
        for _ in range(5):
            left = self.processes()
            if not left:
                break
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)
        for node in self.nodes.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(timeout=10)
        self.nodes.clear()
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def local_cluster(
    nodes: Mapping[str, tuple[int, Mapping[str, float]]],
    object_store_mb: int = 80,
    env: Mapping[str, str] | None = None,
) -> Iterator[LocalCluster]:
    """A cluster whose first node in `nodes` (name: (CPUs, custom resources)) is the head."""
    cluster = LocalCluster(object_store_mb=object_store_mb, env=env)
    try:
        for index, (name, (cpus, resources)) in enumerate(nodes.items()):
            if index == 0:
                cluster.start(cpus, resources, name)
            else:
                cluster.add_node(name, cpus, resources)
        yield cluster
    finally:
        cluster.stop()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("", 0))
        return int(probe.getsockname()[1])


def node_ip() -> str:
    """The address Ray picks for this machine (the one that routes outward), else loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: nothing is sent
            return str(probe.getsockname()[0])
        except OSError:
            return "127.0.0.1"
