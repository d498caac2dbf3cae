"""Harbor task directories (`task.toml`, `instruction.md`, `environment/Dockerfile`,
`tests/test.sh`, `solution/solve.sh`) and Terminal-Bench v1 ones (`task.yaml`, `Dockerfile`,
`run-tests.sh`, `solution.sh`, `tests/`): one scenario per task. The source is one task or a
directory of tasks.

- The task's image is built locally from its Dockerfile (never pulled; tagged by the content of
  its build context, so it is built once), and the agent works in a container of it: run with
  `--sandbox docker`. Its workdir stands for the task's working directory (the image's WORKDIR,
  else `/app`), which the instruction is told.
- The verifier (`harbor_verifier`) runs in a fresh container of the image, the agent's work copied
  over the working directory; the reward comes from `reward.txt` / `reward.json` (named rewards
  kept as scores), else from pytest's outcome.
- `solve.sh` is the reference: run once, at import, in a container of the image; the files it
  leaves in the working directory become the reference change that the oracle and `verify` use.
- Multi-container tasks (an `environment/docker-compose.yaml`) are not supported: a problem, or
  skipped with `--option skip_unsupported=true`.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import tarfile
import tomllib
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import Field

from benchyard.formats.harbor.check import REWARDS_PREFIX
from benchyard.importers.base import (
    BaseImporter,
    Imported,
    ImportedScenario,
    ImportOptions,
    Origin,
    ProblemList,
)

if TYPE_CHECKING:
    from benchyard.store.records import AttemptRecord

SOLUTION_TIMEOUT_SEC = 900
SOLUTION_CAP_BYTES = 64 * 1024 * 1024
DEFAULT_WORKDIR = "/app"


class HarborOptions(ImportOptions):
    build: bool = Field(
        default=True, description="Build each task's image (and run its solution) at import."
    )
    skip_unsupported: bool = Field(
        default=False, description="Skip multi-container tasks instead of reporting them."
    )
    workdir_note: bool = Field(
        default=True, description="Tell the agent that its workdir is the task's working directory."
    )


def _tag_name(text: str) -> str:
    return re.sub(r"[^a-z0-9_.-]+", "-", text.lower()).strip("-.")[:80] or "task"


def image_workdir(image: str) -> str:
    from benchyard.formats.containers import docker_executable

    result = subprocess.run(
        [docker_executable(), "image", "inspect", "-f", "{{.Config.WorkingDir}}", image],
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout.strip() or DEFAULT_WORKDIR


def solution_files(
    image: str, workdir: str, script: Path, solution_dir: Path | None
) -> dict[str, bytes]:
    """The files the solution script leaves in the working directory, run once in a fresh
    container of the image (no network); read from a tar stream: regular files only, no path
    leaving the directory, capped."""
    from benchyard.formats.containers import FILE_CAPABILITIES, docker_executable
    from benchyard.sandbox.docker import LABEL, OWNER_LABEL, owner_tag

    container = f"benchyard-solve-{uuid.uuid4().hex[:12]}"
    argv = [docker_executable(), "run", "--name", container, "--network", "none", "--pull", "never"]
    argv += [
        "--label",
        f"{LABEL}=1",
        "--label",
        f"{OWNER_LABEL}={owner_tag()}",
        "--cap-drop",
        "ALL",
    ]
    for capability in FILE_CAPABILITIES:
        argv += ["--cap-add", capability]
    argv += ["--mount", f"type=bind,source={script.parent},target=/benchyard-solution,readonly"]
    if solution_dir is not None:
        argv += ["--mount", f"type=bind,source={solution_dir},target=/solution,readonly"]
    quoted = workdir.replace("'", "'\\''")
    command = (
        f"mkdir -p '{quoted}' && cd '{quoted}' && bash /benchyard-solution/{script.name} >&2; "
        f"tar -C '{quoted}' -cf - ."
    )
    try:
        result = subprocess.run(
            [*argv, image, "bash", "-c", command],
            capture_output=True,
            timeout=SOLUTION_TIMEOUT_SEC,
            check=False,
        )
    finally:
        subprocess.run(
            [docker_executable(), "rm", "-f", container], capture_output=True, check=False
        )
    if len(result.stdout) > SOLUTION_CAP_BYTES:
        raise ValueError(f"the solution left more than {SOLUTION_CAP_BYTES >> 20} MiB")
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(result.stdout)) as archive:
        for member in archive.getmembers():
            name = PurePosixPath(member.name)
            if not member.isfile() or name.is_absolute() or ".." in name.parts:
                continue
            extracted = archive.extractfile(member)
            if extracted is not None:
                files[str(name).removeprefix("./")] = extracted.read()
    return files


class HarborImporter(BaseImporter):
    name = "harbor"
    format_version = "1"
    summary = "Harbor task directories: image built locally, verifier in a fresh container"
    source_kind = "directory"
    options = HarborOptions
    marker = "task.toml"

    def read(self, source: Path, options: Any) -> Imported:
        assert isinstance(options, HarborOptions)
        problems = ProblemList()
        tasks = (
            [source]
            if (source / self.marker).is_file()
            else sorted(path for path in source.iterdir() if (path / self.marker).is_file())
        )
        if not tasks:
            problems.add(source, None, "", f"no task here: no {self.marker} in it or its folders")
        scenarios = []
        files: dict[str, bytes] = {}
        links: dict[str, Path] = {}
        for task in tasks:
            scenario = self._task(task, options, problems, files, links)
            if scenario is not None:
                scenarios.append(scenario)
        problems.raise_if_any()
        return Imported(
            name=self.name,
            version="1",
            description=f"{self.name} tasks: an agent in a container of each task's image, graded "
            "by the task's verifier in a fresh one.",
            scenarios=scenarios,
            files=files,
            links=links,
        )

    def layout(self, task: Path, problems: ProblemList) -> dict[str, Any] | None:
        """The task's instruction, timeouts and paths."""
        config_file = task / "task.toml"
        try:
            config = tomllib.loads(config_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            problems.add(config_file, getattr(error, "lineno", None), "", f"not TOML: {error}")
            return None
        instruction_file = task / "instruction.md"
        if not instruction_file.is_file():
            problems.add(task, None, "instruction.md", "missing")
            return None
        return {
            "instruction": instruction_file.read_text(encoding="utf-8"),
            "environment": task / "environment",
            "tests": task / "tests",
            "test_script": task / "tests" / "test.sh",
            "solution": task / "solution" / "solve.sh",
            "solution_dir": task / "solution",
            "run_tests": None,
            "agent_timeout": (config.get("agent") or {}).get("timeout_sec"),
            "verifier_timeout": (config.get("verifier") or {}).get("timeout_sec"),
            "config_file": config_file,
            "layout": "harbor",
        }

    def _task(
        self,
        task: Path,
        options: HarborOptions,
        problems: ProblemList,
        files: dict[str, bytes],
        links: dict[str, Path],
    ) -> ImportedScenario | None:
        layout = self.layout(task, problems)
        if layout is None:
            return None
        environment: Path = layout["environment"]
        config_file: Path = layout["config_file"]
        dockerfile = environment / "Dockerfile"
        if not dockerfile.is_file():
            problems.add(
                task,
                None,
                "environment/Dockerfile" if layout["layout"] == "harbor" else "Dockerfile",
                "missing",
            )
            return None
        if layout["layout"] == "harbor" and (environment / "docker-compose.yaml").is_file():
            if not options.skip_unsupported:
                problems.add(
                    environment / "docker-compose.yaml",
                    None,
                    "",
                    "multi-container tasks are not supported (--option skip_unsupported=true "
                    "skips them)",
                )
            return None
        if not layout["test_script"].is_file():
            problems.add(task, None, str(layout["test_script"].relative_to(task)), "missing")
            return None
        from benchyard.formats.containers import ContainerUnavailable, build_image, context_tag

        name = _tag_name(task.name)
        tag = context_tag(f"benchyard-task/{name}", environment)
        workdir = DEFAULT_WORKDIR
        base = f"fixtures/{name}"
        data: dict[str, Any] = {"id": name, "category": self.name, "tags": [self.name]}
        if options.build:
            try:
                build_image(environment, tag)
                workdir = image_workdir(tag)
                solution: Path = layout["solution"]
                if solution.is_file():
                    solution_dir = (
                        layout["solution_dir"] if layout["solution_dir"].is_dir() else None
                    )
                    made = solution_files(tag, workdir, solution, solution_dir)
                    for relative, content in made.items():
                        files[f"{base}/solution/{relative}"] = content
                    if made:
                        data["reference_change"] = {
                            "files": [{"src": f"{base}/solution", "dest": "."}]
                        }
            except (
                ContainerUnavailable,
                ValueError,
                OSError,
                tarfile.TarError,
                subprocess.SubprocessError,
            ) as error:
                problems.add(dockerfile, None, "", str(error))
                return None
        links[f"{base}/tests"] = layout["tests"]
        instruction = str(layout["instruction"]).strip()
        if options.workdir_note:
            instruction += (
                f"\n\n(Your working directory is the task's {workdir}: what the task asks to find "
                f"in {workdir} goes there.)"
            )
        check: dict[str, Any] = {
            "type": "harbor_verifier",
            "image": tag,
            "tests": f"{base}/tests",
            "layout": layout["layout"],
            "workdir": workdir,
        }
        if layout["run_tests"] is not None:
            links[f"{base}/run-tests.sh"] = layout["run_tests"]
            check["run_tests"] = f"{base}/run-tests.sh"
        if layout["verifier_timeout"]:
            check["timeout_sec"] = float(layout["verifier_timeout"])
        data.update(
            {
                "stimulus": {"task": instruction},
                "sandbox": {"image": tag},
                "checks": [check],
            }
        )
        if layout["agent_timeout"]:
            data["limits"] = {"timeout_sec": float(layout["agent_timeout"])}
        return ImportedScenario(data, Origin(config_file, 1), self.name)

    def metrics(
        self, attempts: Sequence[AttemptRecord], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Each named reward's mean over the attempts whose verifier gave it."""
        totals: dict[str, list[float]] = {}
        for attempt in attempts:
            for check in attempt.checks:
                if check.check_type != "harbor_verifier" or not check.reason.startswith(
                    REWARDS_PREFIX
                ):
                    continue
                try:
                    rewards = json.loads(check.reason.removeprefix(REWARDS_PREFIX))
                except json.JSONDecodeError:
                    continue
                for key, value in rewards.items():
                    totals.setdefault(str(key), []).append(float(value))
        return (
            {
                "rewards": {
                    key: {"mean": sum(values) / len(values), "attempts": len(values)}
                    for key, values in sorted(totals.items())
                }
            }
            if totals
            else {}
        )


class TerminalBenchImporter(HarborImporter):
    name = "terminal-bench"
    summary = "Terminal-Bench v1 task directories: run-tests.sh, all pytest tests must pass"
    marker = "task.yaml"

    def layout(self, task: Path, problems: ProblemList) -> dict[str, Any] | None:
        config_file = task / "task.yaml"
        try:
            config = yaml.safe_load(config_file.read_text(encoding="utf-8")) or {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
            problems.add(config_file, None, "", f"not YAML: {error}")
            return None
        instruction = config.get("instruction") if isinstance(config, dict) else None
        if not isinstance(instruction, str):
            problems.add(config_file, None, "instruction", "required field is missing")
            return None
        return {
            "instruction": instruction,
            "environment": task,
            "tests": task / "tests",
            "test_script": task / "run-tests.sh",
            "solution": task / "solution.sh",
            "solution_dir": task,
            "run_tests": task / "run-tests.sh",
            "agent_timeout": config.get("max_agent_timeout_sec"),
            "verifier_timeout": config.get("max_test_timeout_sec"),
            "config_file": config_file,
            "layout": "terminal-bench",
        }


IMPORTER = HarborImporter()
TERMINAL_BENCH = TerminalBenchImporter()
