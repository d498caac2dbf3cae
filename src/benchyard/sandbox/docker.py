"""The `docker` sandbox: one container per command, from the image the scenario or its benchmark
names (`sandbox: {image: ...}`), else benchyard's base image, built locally by
scripts/build-sandbox-image.sh; benchyard never pulls.

Each container: no network unless the scenario asks for it; memory (no swap), process-count, CPU
and CPU-time limits; a read-only root with private /tmp, /var/tmp and /run; never root: the
unprivileged sandbox user (sandbox/identity.py: uid 65534 when benchyard runs as root, else
benchyard's own uid), without capabilities and with no-new-privileges; the workdir and io dir
bind-mounted at their host paths, so the protocol's paths hold inside, and no other host path
but those of the same allow-list as bwrap's (sandbox/allowlist.py: the agent's own code, paths
declared readable; never the benchmark, the store or the project directory), read-only, unless
they lie in the image's system dirs. Only the variables of the command's environment (the
agent's minimal environment, a check's) are passed in, never the host's.

Containers carry the labels `benchyard.sandbox` and `benchyard.owner` (host, pid and start time
of the benchyard process) and are removed after the command, on timeout and on Ctrl-C; those of a
benchyard process that was killed are reaped when the next run opens the sandbox.
"""

from __future__ import annotations

import math
import os
import socket
import subprocess
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.sandbox.allowlist import HostPaths
from benchyard.sandbox.base import SYSTEM_PATH, SandboxUnavailable, installed
from benchyard.sandbox.identity import SandboxUser, sandbox_user
from benchyard.sandbox.limits import ResourceLimits, SandboxRequest
from benchyard.sandbox.process import ProcessOutcome, run_command
from benchyard.sandbox.workdir_memory import describe_hit, limits_left

if TYPE_CHECKING:
    import httpx

DEFAULT_IMAGE = "benchyard/sandbox:bookworm"
SYSTEM_DIRS = tuple(
    Path(name)
    for name in ("/bin", "/dev", "/etc", "/lib", "/lib64", "/proc", "/sbin", "/sys", "/usr")
)  # the image's own: never mounted from the host
LABEL = "benchyard.sandbox"
OWNER_LABEL = "benchyard.owner"
DOCKER_CALL_TIMEOUT_SEC = 60.0
DEFAULT_SOCKET = "/var/run/docker.sock"
NEVER_STARTED = "0001-01-01T00:00:00Z"
STDERR_TAIL_CHARS = 300


@dataclass(frozen=True)
class ContainerState:
    started: bool
    oom_killed: bool
    error: str


@dataclass(frozen=True)
class DockerSandbox:
    executable: str
    owner: str
    user: SandboxUser
    readable: tuple[Path, ...] = ()  # host paths mounted read-only at their own place
    covered: tuple[Path, ...] = ()  # sealed paths inside those, covered by an empty tmpfs
    request: SandboxRequest = field(default_factory=SandboxRequest)
    name: str = "docker"

    @classmethod
    def open(cls, host: HostPaths | None = None) -> DockerSandbox:
        """A docker sandbox talking to a running engine, after reaping leftover containers."""
        executable = installed(
            "docker",
            "docker is not installed, so the docker sandbox cannot run; install docker.io "
            "(scripts/ensure-sandboxes.sh) or choose --sandbox bwrap",
        )
        engine = os.environ.get("DOCKER_HOST", "")
        if engine and not engine.startswith("unix://"):
            raise SandboxUnavailable(
                f"the docker sandbox talks to a local engine over its unix socket, not "
                f"DOCKER_HOST={engine}; unset it or choose --sandbox bwrap"
            )
        version = _docker(executable, "version", "--format", "{{.Server.Version}}")
        if version.returncode != 0:
            raise SandboxUnavailable(
                f"the Docker engine is not reachable ({_tail(version.stderr)}); start dockerd "
                "(scripts/ensure-sandboxes.sh) or choose --sandbox bwrap"
            )
        reap_leftovers(executable)
        shown = host or HostPaths()
        mounted = tuple(
            path for path in shown.readable if not any(path.is_relative_to(d) for d in SYSTEM_DIRS)
        )
        return cls(executable, owner_tag(), sandbox_user(), mounted, shown.covered())

    def configured(self, request: SandboxRequest) -> DockerSandbox:
        return replace(self, request=request)

    def check_requests(self, requests: Iterable[SandboxRequest]) -> None:
        for image in sorted({request.image or DEFAULT_IMAGE for request in requests}):
            if _docker(self.executable, "image", "inspect", image).returncode != 0:
                hint = (
                    "build it with scripts/build-sandbox-image.sh"
                    if image == DEFAULT_IMAGE
                    else "build or load it with docker build / docker load"
                )
                raise SandboxUnavailable(
                    f"docker image '{image}' is not on this machine and benchyard never pulls; {hint}"
                )

    async def run(
        self,
        argv: list[str],
        *,
        workdir: Path,
        io_dir: Path,
        env: dict[str, str],
        timeout_sec: float,
        output_cap_bytes: int,
    ) -> ProcessOutcome:
        container = f"benchyard-{uuid.uuid4().hex[:16]}"
        limits, held_mb = limits_left(self.request.limits, workdir, io_dir)
        command = [*self._run_args(container, workdir, io_dir, env, limits), *argv]
        try:
            outcome = await run_command(
                command,
                cwd=workdir,
                env={**_client_environment(), **env},  # `--env NAME` takes each value from here
                timeout_sec=timeout_sec,
                output_cap_bytes=output_cap_bytes,
            )
            state = await self._state(container)
        finally:
            await self._remove(container)
        if state is None or not state.started:
            reason = state.error if state and state.error else _tail(outcome.stderr.decode())
            raise AttemptFailure(
                FailureKind.SANDBOX_START,
                f"docker could not start the container: {reason or 'no reason given'}",
            )
        if state.oom_killed:
            outcome.limit_hit = describe_hit(limits.describe_memory(), self.request.limits, held_mb)
        return outcome

    def _run_args(
        self,
        container: str,
        workdir: Path,
        io_dir: Path,
        env: dict[str, str],
        limits: ResourceLimits,
    ) -> list[str]:
        """`docker run` arguments; `limits` are the request's, less what the workdir holds in RAM
        (sandbox/workdir_memory.py)."""
        memory = f"{limits.memory_mb}m"
        args = [self.executable, "run", "--name", container, "--hostname", "sandbox"]
        args += ["--label", f"{LABEL}=1", "--label", f"{OWNER_LABEL}={self.owner}"]
        args += ["--pull", "never", "--log-driver", "none"]
        args += ["--network", "bridge" if self.request.network else "none"]
        args += ["--memory", memory, "--memory-swap", memory]
        args += ["--pids-limit", str(limits.max_processes)]
        if limits.cpus is not None:
            args += ["--cpus", f"{limits.cpus:g}"]
        if limits.cpu_sec is not None:
            args += ["--ulimit", f"cpu={math.ceil(limits.cpu_sec)}"]
        args += ["--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
        args += ["--user", f"{self.user.uid}:{self.user.gid}"]  # who owns the workdir on the host
        for private in ("/tmp", "/var/tmp", "/run"):
            args += ["--tmpfs", f"{private}:size={memory},mode=1777"]
        for shown in self.readable:
            args += ["--mount", f"type=bind,source={shown},target={shown},readonly"]
        for sealed in self.covered:
            args += ["--tmpfs", f"{sealed}:size=4k,mode=0755"]
        for writable in (workdir, io_dir):
            args += ["--mount", f"type=bind,source={writable},target={writable}"]
        args += ["--workdir", str(workdir)]
        for name in sorted(env):
            if name != "PATH" or env[name] != SYSTEM_PATH:  # else the image's own PATH
                args += ["--env", name]
        return [*args, self.request.image or DEFAULT_IMAGE]

    async def _state(self, container: str) -> ContainerState | None:
        inspected = await _engine("GET", f"/containers/{container}/json")
        if inspected is None or inspected.status_code != 200:
            return None
        state = inspected.json().get("State", {})
        return ContainerState(
            started=state.get("StartedAt", NEVER_STARTED) != NEVER_STARTED,
            oom_killed=bool(state.get("OOMKilled")),
            error=str(state.get("Error") or ""),
        )

    async def _remove(self, container: str) -> None:
        await _engine("DELETE", f"/containers/{container}?force=true&v=true")


def _client_environment() -> dict[str, str]:
    """What the docker client itself needs of benchyard's environment (never passed inside)."""
    return {
        name: value
        for name, value in os.environ.items()
        if name in ("PATH", "HOME", "DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CONTEXT")
    }


def owner_tag() -> str:
    """host:pid:start time of this process, which names its containers' owner."""
    return f"{socket.gethostname()}:{os.getpid()}:{_start_time(os.getpid())}"


def reap_leftovers(executable: str) -> None:
    """Remove the containers of benchyard processes on this host that no longer run."""
    listed = _docker(
        executable,
        *("ps", "--all", "--filter", f"label={LABEL}"),
        *("--format", f'{{{{.Names}}}}\t{{{{.Label "{OWNER_LABEL}"}}}}'),
    )
    orphans = []
    for line in listed.stdout.splitlines():
        name, _, owner = line.partition("\t")
        host, _, process = owner.partition(":")
        pid, _, started = process.partition(":")
        alive = pid.isdigit() and _start_time(int(pid)) == started
        if host == socket.gethostname() and not alive:
            orphans.append(name)
    if orphans:
        _docker(executable, "rm", "--force", "--volumes", *orphans)


def _start_time(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[1].split()[19]


def _docker(executable: str, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [executable, *args],
            capture_output=True,
            text=True,
            timeout=DOCKER_CALL_TIMEOUT_SEC,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return subprocess.CompletedProcess([executable, *args], 1, "", str(error))


async def _engine(method: str, path: str) -> httpx.Response | None:
    """One call to the Docker Engine API on its unix socket (a CLI call costs far more: a new
    process each time); None when the engine could not be reached."""
    import httpx

    transport = httpx.AsyncHTTPTransport(uds=engine_socket())
    try:
        async with httpx.AsyncClient(
            transport=transport, base_url="http://docker", timeout=DOCKER_CALL_TIMEOUT_SEC
        ) as client:
            return await client.request(method, path)
    except httpx.HTTPError:
        return None


def engine_socket() -> str:
    """The engine's unix socket: DOCKER_HOST's when it names one, else Docker's default."""
    host = os.environ.get("DOCKER_HOST", "")
    return host.removeprefix("unix://") if host.startswith("unix://") else DEFAULT_SOCKET


def _tail(text: str) -> str:
    return text.strip()[-STDERR_TAIL_CHARS:]
