"""The `bwrap` sandbox: each command runs under bubblewrap in namespaces of its own.

What the command sees and may do:

- an allow-list of the host, read-only: the system directories (sandbox/hostview.py) and the
  paths the run shows (the agent's own code, paths declared readable: sandbox/allowlist.py), with
  the benchmark, the store and the work root covered where they lie inside a shown path; a
  private /var and private, empty /tmp, /var/tmp, /run and /dev/shm, a fresh /proc and a minimal
  /dev. Not /home, /root, /srv, the host's /run or /var, nor the project directory;
- its workdir and io dir writable, and nothing else;
- no network (a private loopback only) unless the scenario asks for it; its own pid, IPC and UTS
  namespaces;
- never host root. When benchyard runs as root, bwrap itself runs privileged (so that it can bind
  whatever the allow-list names) without a user namespace, and the command is started through
  `setpriv`, which drops to the unprivileged sandbox user (sandbox/identity.py: uid 65534 by
  default), clearing groups, capabilities and the bounding set and setting no_new_privs, before
  anything of the command runs. When benchyard is a normal user, bwrap runs unprivileged in a
  user namespace of its own (uid 1000 inside, benchyard's uid outside), without capabilities and
  without further user namespaces;
- limits: memory and process count in a cgroup of its own (binding root too), else RLIMIT_AS and
  RLIMIT_NPROC; the files the workdir and io dir already hold in RAM are taken from the memory
  limit (sandbox/workdir_memory.py); CPU time per process with RLIMIT_CPU; output capped by the
  reader; the wall-clock deadline kills bwrap, whose death takes the whole pid namespace with it.
  bwrap starts held: the harness puts the sandbox's first process in the cgroup and sets its
  rlimits before bwrap runs anything of the command (sandbox/held_start.py).

A command that bwrap could not start (a bad mount, no user namespaces) is told apart from one that
failed by bwrap's own status, which reports the command's exit only when it started the command.

`/bin/sh -c COMMAND` where COMMAND is plain words (no expansion, redirection, operator, glob,
assignment or shell keyword or builtin: see without_shell) runs as those words: one shell fewer
per command, with the same outcome.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import os
import re
import shlex
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.sandbox.allowlist import HostPaths
from benchyard.sandbox.base import SandboxUnavailable, installed
from benchyard.sandbox.cgroups import Cgroup, CgroupPool
from benchyard.sandbox.held_start import HeldStart
from benchyard.sandbox.hostview import (
    SYSTEM_ROOTS,
    parent_dirs_args,
    shown_path_args,
    system_view_args,
)
from benchyard.sandbox.identity import SandboxUser, sandbox_user
from benchyard.sandbox.limits import ResourceLimits, SandboxRequest, process_rlimits
from benchyard.sandbox.process import ProcessOutcome, run_command
from benchyard.sandbox.workdir_memory import describe_hit, limits_left

SANDBOX_UID = 1000  # the sandbox user's uid inside its user namespace (benchyard not root)
# Private, writable by the sandbox user; /var/tmp links to /tmp.
TMPFS_DIRS = (("/tmp", "1777"), ("/run", "0755"), ("/dev/shm", "1777"))
# The directories in the view before the host paths and the writable ones are bound.
PROVIDED = frozenset(("/", "/var", "/dev", "/proc", "/sys", *(path for path, _ in TMPFS_DIRS)))
KERNEL_DIRS = ("/dev", "/proc", "/sys")  # the sandbox's own: never bound from the host
SYSTEM_PATHS = tuple(map(Path, SYSTEM_ROOTS))  # shown whole: sealed paths inside are covered
DNS_DIRS = ("/run/systemd/resolve", "/run/resolvconf")  # resolv.conf targets, for the network
# What bwrap leaves the command's first program (setpriv) of root's powers, for it to drop them:
# changing uid, gid and the bounding set.
DROP_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
SETPRIV = "/usr/bin/setpriv"
PROBE_TIMEOUT_SEC = 10.0
STDERR_TAIL_CHARS = 300
# bwrap's own process in the command's cgroup (the namespace's init; its monitor stays outside, to
# report the command's exit whatever the limits kill), allowed on top of the scenario's process
# limit.
BWRAP_PROCESSES = 1
# A word the shell takes as it is, once its quotes are gone: unquoted characters that nothing
# expands, single-quoted text, double-quoted text without $, `, \ or !.
_PLAIN_WORD = r"""(?:[A-Za-z0-9_@%+=:,./-]|'[^']*'|"[^"$`\\!]*")+"""
_PLAIN_COMMAND = re.compile(rf"[ \t]*{_PLAIN_WORD}(?:[ \t]+{_PLAIN_WORD})*[ \t]*")
# What a shell runs itself rather than a program of that name, or takes as syntax.
_SHELL_WORDS_TEXT = (
    "! { } case do done elif else esac fi for function if in select then time until while "
    ". : [ [[ alias bg break builtin cd chdir command continue declare echo eval exec exit "
    "export false fc fg getopts hash jobs kill let local printf pwd read readonly return set "
    "shift source test times trap true type typeset ulimit umask unalias unset wait"
)
SHELL_WORDS = frozenset(_SHELL_WORDS_TEXT.split())
COMMANDS_KEPT = 256  # command lines kept split into words


@dataclass(frozen=True)
class BubblewrapSandbox:
    executable: str
    cgroups: CgroupPool | None
    system: tuple[str, ...]  # bwrap arguments binding the system directories (sandbox/hostview.py)
    shown: tuple[str, ...]  # ... binding the other host paths shown, covering the sealed ones
    user: SandboxUser
    request: SandboxRequest = field(default_factory=SandboxRequest)
    name: str = "bwrap"

    @classmethod
    def open(cls, host: HostPaths | None = None) -> BubblewrapSandbox:
        """A working bwrap sandbox, or SandboxUnavailable saying why there is none."""
        executable = installed(
            "bwrap",
            "bubblewrap is not installed (apt-get install bubblewrap), so the bwrap sandbox "
            "cannot run; install it or choose --sandbox docker",
        )
        user = sandbox_user()
        cgroups = shared_cgroup_pool()
        if cgroups is None and not user.is_benchyard:
            raise SandboxUnavailable(
                "the bwrap sandbox cannot create cgroups under /sys/fs/cgroup, and running as root "
                "it could not limit processes and memory without them; run benchyard as a normal "
                "user, or choose --sandbox docker"
            )
        if not user.is_benchyard and not os.access(SETPRIV, os.X_OK):
            raise SandboxUnavailable(
                f"{SETPRIV} (util-linux) is needed to drop root in the bwrap sandbox; install "
                "util-linux, run benchyard as a normal user, or choose --sandbox docker"
            )
        shown = tuple(_shown_args(host or HostPaths()))
        sandbox = cls(executable, cgroups, tuple(system_view_args()), shown, user)
        sandbox.probe()
        return sandbox

    def probe(self) -> None:
        """Start one empty sandbox, so that a machine where bwrap cannot work says so up front."""
        argv = [*self._namespace_args(), *self.system, *self.shown, "--", *self._drop_root()]
        try:
            done = subprocess.run(
                [*argv, "/bin/true"],
                capture_output=True,
                text=True,
                timeout=PROBE_TIMEOUT_SEC,
                check=False,
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
        argv = without_shell(argv)
        limits, held_mb = limits_left(self.request.limits, workdir, io_dir)
        unlimited = self.cgroups is None  # else a cgroup of its own, or AttemptFailure
        rlimits = process_rlimits(limits, address_space=unlimited, process_count=unlimited)
        held = HeldStart(rlimits, start_timeout_sec=timeout_sec)
        try:
            held.cgroup = await self._new_cgroup(limits)
            command = [*self._bwrap_args(workdir, io_dir, held), *self._drop_root(), *argv]
            outcome = await run_command(
                command,
                cwd=workdir,
                env=env,
                timeout_sec=timeout_sec,
                output_cap_bytes=output_cap_bytes,
                pass_fds=held.child_fds,
                on_start=held.release,
            )
            # Killed at the deadline, bwrap reports nothing; the sandbox had long started then.
            started = held.failure is None and (outcome.timed_out or held.command_started())
        finally:
            held.close()
            limit_hit = held.cgroup.limit_hit() if held.cgroup else None
            if held.cgroup:
                await held.cgroup.kill_and_remove_async()
        if not started:
            tail = outcome.stderr.decode("utf-8", errors="replace").strip()[-STDERR_TAIL_CHARS:]
            raise AttemptFailure(
                FailureKind.SANDBOX_START,
                f"bwrap could not start the sandbox: {held.failure or tail or 'no reason given'}",
            )
        outcome.limit_hit = describe_hit(limit_hit, self.request.limits, held_mb)
        return outcome

    async def _new_cgroup(self, limits: ResourceLimits) -> Cgroup | None:
        """The command's cgroup, made in a worker thread: mkdir in a cgroup hierarchy waits on a
        kernel lock that every sandbox starting or ending takes, and would stall the loop."""
        if self.cgroups is None:
            return None
        making = asyncio.ensure_future(
            asyncio.to_thread(self.cgroups.create, limits, BWRAP_PROCESSES)
        )
        try:
            return await asyncio.shield(making)
        except asyncio.CancelledError:
            making.add_done_callback(_remove_abandoned)
            raise
        except OSError as error:
            raise AttemptFailure(
                FailureKind.SANDBOX_START, f"could not create the sandbox's cgroup: {error}"
            ) from error

    def _namespace_args(self) -> list[str]:
        args = [self.executable]
        if self.user.is_benchyard:
            args += ["--unshare-all", "--unshare-user", "--disable-userns"]
            args += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
        else:
            # Privileged bwrap, no user namespace: setpriv drops to the sandbox user (_drop_root).
            args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
            args += ["--unshare-cgroup-try", "--cap-drop", "ALL"]
            for capability in DROP_CAPS:
                args += ["--cap-add", capability]
        args += ["--hostname", "sandbox", "--die-with-parent", "--new-session"]
        if self.request.network:
            args += ["--share-net"]
        return args

    def _bwrap_args(self, workdir: Path, io_dir: Path, held: HeldStart) -> list[str]:
        size = str(self.request.limits.memory_mb * 1024 * 1024)
        args = [*self._namespace_args(), *held.bwrap_args(), *self.system]
        args += ["--dev", "/dev", "--proc", "/proc"]
        for private, mode in TMPFS_DIRS:
            args += ["--perms", mode, "--size", size, "--tmpfs", private]
        args += self.shown  # after the private directories: an agent's script may be in /tmp
        if self.request.network:
            for directory in DNS_DIRS:
                args += ["--ro-bind-try", directory, directory]
        made = set(PROVIDED)
        for writable in (workdir, io_dir):
            args += parent_dirs_args(writable, made)
            args += ["--bind", str(writable), str(writable)]
        return [*args, "--remount-ro", "/", "--chdir", str(workdir), "--"]

    def _drop_root(self) -> list[str]:
        """The program that runs the command as the sandbox user; none when benchyard is not
        root (bwrap's user namespace makes it the sandbox user)."""
        if self.user.is_benchyard:
            return []
        return [
            SETPRIV,
            f"--reuid={self.user.uid}",
            f"--regid={self.user.gid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]


def _shown_args(host: HostPaths) -> list[str]:
    """Binds of the host paths shown beyond the system directories, and covers over the sealed
    paths inside them."""
    outside_system = [
        path
        for path in host.readable
        if not any(path.is_relative_to(root) for root in (*SYSTEM_ROOTS, *KERNEL_DIRS))
    ]
    args = shown_path_args(outside_system, PROVIDED)
    covered = host.covered(SYSTEM_PATHS)
    for sealed in covered:
        if sealed.is_dir():
            args += ["--perms", "0755", "--tmpfs", str(sealed)]
        elif sealed.exists():
            args += ["--ro-bind", "/dev/null", str(sealed)]
    # A path shown on purpose inside a covered one (a benchmark's declared `readable`) on top.
    again = [path for path in host.readable if any(path.is_relative_to(c) for c in covered)]
    for path in again:
        args += ["--ro-bind-try", str(path), str(path)]
    return args


def without_shell(argv: list[str]) -> list[str]:
    """`/bin/sh -c COMMAND` as COMMAND's words when it is plain words whose first is a program
    (no shell keyword or builtin, no assignment, no option), which the shell would run as they
    are; any other argv as it is."""
    if len(argv) != 3 or argv[:2] != ["/bin/sh", "-c"]:
        return argv
    words = _program_words(argv[2])
    return argv if words is None else list(words)


@functools.lru_cache(maxsize=COMMANDS_KEPT)
def _program_words(command: str) -> tuple[str, ...] | None:
    """The words of a plain command whose first is a program, else None. Kept for the last
    COMMANDS_KEPT command lines, as a function of the text alone: an agent's command line is the
    same at every attempt, and shlex takes 50 us to split it."""
    if _PLAIN_COMMAND.fullmatch(command) is None:
        return None
    words = shlex.split(command)
    first = command.split()[0]
    if not words[0] or words[0].startswith("-") or words[0] in SHELL_WORDS or "=" in first:
        return None
    return tuple(words)


def _remove_abandoned(making: asyncio.Future[Cgroup]) -> None:
    """Remove a cgroup made for an attempt cancelled meanwhile: nothing ever ran in it."""
    if not making.cancelled() and making.exception() is None:
        making.result().kill_and_remove()


@functools.cache
def shared_cgroup_pool() -> CgroupPool | None:
    """This process's cgroup pool, made once and removed at exit."""
    pool = CgroupPool.discover()
    if pool is not None:
        atexit.register(pool.close)
    return pool
