"""Task containers: images built locally from a task's Dockerfile (never pulled), and one-off
containers that run an evaluation script in them (SWE-bench's harness, Harbor's verifier).

Unlike the `docker` sandbox's, these containers have a writable root and run as the image's user
(the official evaluators run as root in the task image): what they run is the task's own test
script, on the patched repository or the agent's workdir. They get no network, memory and process
limits, no capabilities beyond the file ones a root build step needs, and `no-new-privileges`;
they carry the sandbox's labels, so a killed benchyard's leftovers are reaped the same way.
Their output is read capped, and files they leave are read with untrusted.py.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path

from benchyard.errors import BenchyardError
from benchyard.sandbox.docker import LABEL, OWNER_LABEL, owner_tag
from benchyard.sandbox.process import ProcessOutcome, run_command
from benchyard.untrusted import walk_tree

OUTPUT_CAP_BYTES = 4 * 1024 * 1024
BUILD_TIMEOUT_SEC = 1800.0
FILE_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID")


class ContainerUnavailable(BenchyardError):
    """Docker is missing, an image is missing, or a build failed."""


def docker_executable() -> str:
    found = shutil.which("docker")
    if found is None:
        raise ContainerUnavailable(
            "docker is not installed; task images are built and run with it "
            "(scripts/ensure-sandboxes.sh installs it)"
        )
    return found


def image_exists(image: str) -> bool:
    result = subprocess.run(
        [docker_executable(), "image", "inspect", image], capture_output=True, check=False
    )
    return result.returncode == 0


def require_image(image: str) -> None:
    if not image_exists(image):
        raise ContainerUnavailable(
            f"docker image '{image}' is not on this machine and benchyard never pulls; "
            "build or load it (docker build / docker load), or give a Dockerfile to build"
        )


def context_tag(prefix: str, context: Path, dockerfile: Path | None = None) -> str:
    """A tag naming the image of a build context by its content, so it is built once."""
    digest = hashlib.sha256()
    files = sorted(
        directory / name
        for directory, _, names in walk_tree(context)  # iterative: a task's tree of any depth
        for name in names
        if (directory / name).is_file() and not (directory / name).is_symlink()
    )
    for path in [*files, *([dockerfile] if dockerfile else [])]:
        digest.update(
            str(path.relative_to(context) if path.is_relative_to(context) else path.name).encode()
        )
        digest.update(path.read_bytes())
    return f"{prefix}:{digest.hexdigest()[:16]}"


def build_image(
    context: Path,
    tag: str,
    *,
    dockerfile: Path | None = None,
    build_args: Mapping[str, str] | None = None,
) -> str:
    """Build `context` into `tag` unless it is there already; never pulls a base image."""
    if image_exists(tag):
        return tag
    argv = [docker_executable(), "build", "--pull=false", "-t", tag]
    if dockerfile is not None:
        argv += ["-f", str(dockerfile)]
    for key, value in (build_args or {}).items():
        argv += ["--build-arg", f"{key}={value}"]
    try:
        result = subprocess.run(
            [*argv, str(context)],
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_SEC,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ContainerUnavailable(
            f"building {tag} from {context} took over {BUILD_TIMEOUT_SEC:g} s"
        ) from None
    if result.returncode != 0:
        tail = " ".join((result.stderr or result.stdout).split())[-400:]
        raise ContainerUnavailable(f"building {tag} from {context} failed: {tail}")
    return tag


async def run_script(
    image: str,
    script: str,
    *,
    files: Mapping[str, bytes] | None = None,
    timeout_sec: float,
    memory_mb: int = 4096,
    out_dir: Path | None = None,
    out_target: str = "/benchyard-out",
    mounts: Mapping[Path, str] | None = None,
) -> ProcessOutcome:
    """Run `script` with bash in a fresh container of `image`, the `files` under /benchyard and
    `mounts` (host directory -> container path) read-only, and `out_dir` (if given) writable at
    `out_target`. The container is removed afterwards, at the deadline too."""
    executable = docker_executable()
    container = f"benchyard-task-{uuid.uuid4().hex[:16]}"
    with tempfile.TemporaryDirectory(prefix="benchyard-task-") as scratch:
        inputs = Path(scratch)
        (inputs / "run.sh").write_text(script, encoding="utf-8")
        for name, content in (files or {}).items():
            (inputs / name).write_bytes(content)
        inputs.chmod(0o755)
        for path in inputs.iterdir():
            path.chmod(0o644)
        argv = [executable, "run", "--name", container, "--hostname", "task"]
        argv += ["--label", f"{LABEL}=1", "--label", f"{OWNER_LABEL}={owner_tag()}"]
        argv += ["--pull", "never", "--network", "none"]
        argv += ["--memory", f"{memory_mb}m", "--memory-swap", f"{memory_mb}m"]
        argv += ["--pids-limit", "1024", "--cap-drop", "ALL"]
        for capability in FILE_CAPABILITIES:
            argv += ["--cap-add", capability]
        argv += ["--security-opt", "no-new-privileges"]
        argv += ["--mount", f"type=bind,source={inputs},target=/benchyard,readonly"]
        for host, target in (mounts or {}).items():
            argv += ["--mount", f"type=bind,source={host},target={target},readonly"]
        if out_dir is not None:
            argv += ["--mount", f"type=bind,source={out_dir},target={out_target}"]
        argv += [image, "bash", "/benchyard/run.sh"]
        try:
            return await run_command(
                argv,
                cwd=inputs,
                env={"PATH": "/usr/local/bin:/usr/bin:/bin"},
                timeout_sec=timeout_sec,
                output_cap_bytes=OUTPUT_CAP_BYTES,
            )
        finally:
            subprocess.run(
                [executable, "rm", "--force", "--volumes", container],
                capture_output=True,
                check=False,
                timeout=60,
            )
