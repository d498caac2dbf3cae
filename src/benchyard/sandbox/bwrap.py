"""The `bwrap` sandbox: each command runs under bubblewrap in namespaces of its own.

What the command sees and may do:

- the host's filesystem read-only (its /usr, /bin, /lib*, /etc, /home, the agent's code and
  virtualenv: sandbox/hostview.py), with a private /var and private, empty /tmp, /var/tmp, /run
  and /dev/shm, a fresh /proc and a minimal /dev;
- its workdir and io dir writable, and nothing else; the benchmark's own directory (which holds
  the references) and benchyard's work root (other attempts' workdirs) hidden; the paths the
  agent's command names (its script) shown read-only, also in /tmp (not in a hidden directory);
- no network (a private loopback only) unless the scenario asks for it; its own pid, IPC and UTS
  namespaces; uid 1000 in a user namespace of its own, with no capabilities;
- limits: memory and process count in a cgroup of its own (binding root too), else RLIMIT_AS and
  RLIMIT_NPROC; CPU time per process with RLIMIT_CPU; output capped by the reader; the wall-clock
  deadline kills bwrap, whose death takes the whole pid namespace with it.

A command that bwrap could not start (a bad mount, no user namespaces) is told apart from one that
failed by a marker the shell inside writes just before it runs the command.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shlex
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.sandbox.base import SandboxUnavailable, installed
from benchyard.sandbox.cgroups import Cgroup, CgroupPool
from benchyard.sandbox.hostview import host_view_args
from benchyard.sandbox.limits import SandboxRequest, ulimit_lines
from benchyard.sandbox.process import ProcessOutcome, run_command

SANDBOX_UID = 1000
TMPFS_DIRS = ("/tmp", "/run")  # /var/tmp links to /tmp; /dev/shm is in bwrap's own /dev
NOT_FROM_HOST = tuple(map(Path, ("/tmp", "/run", "/var", "/dev", "/proc", "/sys")))
NAMED_FILES_IN = tuple(map(Path, ("/tmp", "/var", "/dev/shm")))  # where an agent's script may be
DNS_DIRS = ("/run/systemd/resolve", "/run/resolvconf")  # resolv.conf targets, for the network
PROBE_TIMEOUT_SEC = 10.0
STDERR_TAIL_CHARS = 300


@dataclass(frozen=True)
class BubblewrapSandbox:
    executable: str
    cgroups: CgroupPool | None
    host_view: tuple[str, ...]  # bwrap arguments binding the host read-only (sandbox/hostview.py)
    hidden: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()
    request: SandboxRequest = field(default_factory=SandboxRequest)
    name: str = "bwrap"

    @classmethod
    def open(cls, hidden: Sequence[Path] = (), readable: Sequence[Path] = ()) -> BubblewrapSandbox:
        """A working bwrap sandbox, or SandboxUnavailable saying why there is none."""
        executable = installed(
            "bwrap",
            "bubblewrap is not installed (apt-get install bubblewrap), so the bwrap sandbox "
            "cannot run; install it or choose --sandbox docker",
        )
        cgroups = shared_cgroup_pool()
        if cgroups is None and os.geteuid() == 0:
            raise SandboxUnavailable(
                "the bwrap sandbox cannot create cgroups under /sys/fs/cgroup, and running as root "
                "it could not limit processes and memory without them; run benchyard as a normal "
                "user, or choose --sandbox docker"
            )
        hides = [path.resolve() for path in hidden]
        shown = tuple(
            path for path in readable if _inside(path, NAMED_FILES_IN) and not _inside(path, hides)
        )
        covered = tuple(path for path in hides if not _inside(path, NOT_FROM_HOST))
        sandbox = cls(executable, cgroups, tuple(host_view_args()), covered, shown)
        sandbox.probe()
        return sandbox

    def probe(self) -> None:
        """Start one empty sandbox, so that a machine where bwrap cannot work says so up front."""
        argv = [*self._namespace_args(), *self.host_view, "--", "/bin/true"]
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_SEC, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise SandboxUnavailable(f"bubblewrap could not start a sandbox: {error}") from None
        if done.returncode != 0:
            reason = done.stderr.strip()[-STDERR_TAIL_CHARS:] or f"exit {done.returncode}"
            raise SandboxUnavailable(f"bubblewrap cannot make a sandbox on this machine: {reason}")

    def configured(self, request: SandboxRequest) -> BubblewrapSandbox:
        return replace(self, request=request)

    def check_requests(self, requests: Iterable[SandboxRequest]) -> None:
        pass  # bwrap runs the host's own system: no image to look for

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
        cgroup = self._new_cgroup()
        ready_read, ready_write = os.pipe()
        try:
            command = [
                *self._bwrap_args(workdir, io_dir, cgroup),
                *self._inner_shell(ready_write, cgroup),
                *argv,
            ]
            outcome = await run_command(
                command,
                cwd=workdir,
                env=env,
                timeout_sec=timeout_sec,
                output_cap_bytes=output_cap_bytes,
                pass_fds=(ready_write,),
            )
        finally:
            os.close(ready_write)
            started = _marker_written(ready_read)
            limit_hit = cgroup.limit_hit() if cgroup else None
            if cgroup:
                await cgroup.kill_and_remove_async()
        if not started:
            tail = outcome.stderr.decode("utf-8", errors="replace").strip()[-STDERR_TAIL_CHARS:]
            raise AttemptFailure(
                FailureKind.SANDBOX_START,
                f"bwrap could not start the sandbox: {tail or 'no reason given'}",
            )
        outcome.limit_hit = limit_hit
        return outcome

    def _new_cgroup(self) -> Cgroup | None:
        if self.cgroups is None:
            return None
        try:
            return self.cgroups.create(self.request.limits)
        except OSError as error:
            raise AttemptFailure(
                FailureKind.SANDBOX_START, f"could not create the sandbox's cgroup: {error}"
            ) from error

    def _namespace_args(self) -> list[str]:
        args = [self.executable, "--unshare-all", "--unshare-user", "--disable-userns"]
        args += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
        args += ["--hostname", "sandbox", "--die-with-parent", "--new-session"]
        return [*args, "--share-net"] if self.request.network else args

    def _bwrap_args(self, workdir: Path, io_dir: Path, cgroup: Cgroup | None) -> list[str]:
        size = str(self.request.limits.memory_mb * 1024 * 1024)
        args = [*self._namespace_args(), *self.host_view, "--dev", "/dev", "--proc", "/proc"]
        for private in TMPFS_DIRS:
            args += ["--size", size, "--tmpfs", private]
        if self.request.network:
            for directory in DNS_DIRS:
                args += ["--ro-bind-try", directory, directory]
        for hidden in self.hidden:
            if hidden.is_dir():
                args += ["--tmpfs", str(hidden)]
        for shown in self.readable:
            args += ["--ro-bind-try", str(shown), str(shown)]
        # The cgroup's procs files only: its limits stay read-only, like the rest of /sys.
        for writable in (workdir, io_dir, *(cgroup.procs_files if cgroup else ())):
            args += ["--bind", str(writable), str(writable)]
        return [*args, "--remount-ro", "/", "--chdir", str(workdir), "--"]

    def _inner_shell(self, ready_fd: int, cgroup: Cgroup | None) -> list[str]:
        """`sh -c` that moves itself into the cgroup (writing 0 moves the writer; only this cgroup
        is writable in the sandbox, and only to move in), sets the per-process limits, writes the
        started marker and becomes the command."""
        lines = ["set -e"]
        lines += (
            [f"echo 0 > {shlex.quote(str(path))}" for path in cgroup.procs_files] if cgroup else []
        )
        lines += ulimit_lines(self.request.limits, address_space=cgroup is None)
        lines += [f"printf x > /proc/self/fd/{ready_fd}", 'exec "$@"']
        return ["/bin/sh", "-c", "\n".join(lines), "sh"]


def _inside(path: Path, directories: Iterable[Path]) -> bool:
    return any(path.is_relative_to(directory) for directory in directories)


def _marker_written(ready_read: int) -> bool:
    try:
        os.set_blocking(ready_read, False)
        with contextlib.suppress(BlockingIOError):
            return os.read(ready_read, 1) == b"x"
        return False
    finally:
        os.close(ready_read)


@functools.cache
def shared_cgroup_pool() -> CgroupPool | None:
    """This process's cgroup pool, made once and removed at exit."""
    pool = CgroupPool.discover()
    if pool is not None:
        atexit.register(pool.close)
    return pool
