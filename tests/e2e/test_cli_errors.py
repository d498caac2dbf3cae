"""Every command of the CLI, enumerated from the Typer app (a new command is walked too), given a
bad output path, a missing input file and an unknown run, as a real process: no traceback, the
exit status docs/exit-codes.md gives (2: refused), and one line on stderr naming the problem.

A parameter's part is read from the app: a `Path` parameter is an output when named like one
(OUTPUTS), else an input; run parameters are named RUNS. The other required parameters get a
working value from BASELINE, so that the one bad value is the only problem."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml

from benchyard.cli.app import full_app
from tests.support import Cli, scenario, write_benchmark

OUTPUTS = frozenset({"output", "out", "forecast_out", "directory", "work_root"})
"""`Path` parameters a command writes (a file, or a directory it creates)."""
RUNS = frozenset({"run_ref", "run_refs", "run_a", "run_b", "run", "runs"})
PATH_INPUTS = frozenset({("validate", "path"), ("verify", "benchmark"), ("run", "benchmark")})
"""Inputs typed `str` (a path or a built-in's name) that name a file or directory."""
EXTRA_ARGS: dict[str, list[str]] = {"rerun": ["--failed"], "run": ["--agent", "oracle"]}
"""What a command needs besides its required parameters to do anything at all."""
UNKNOWN_RUN = "nosuchrun"
TIMEOUT_SEC = 20


@dataclass(frozen=True)
class Param:
    name: str
    option: str | None  # the option's first long name; None for an argument
    required: bool
    is_path: bool
    many: bool  # takes several values (compare's runs)


@dataclass(frozen=True)
class Command:
    words: tuple[str, ...]
    params: tuple[Param, ...]
    has_db: bool

    @property
    def name(self) -> str:
        return " ".join(self.words)


def _takes_path(param: Any) -> bool:
    """Whether a parameter is a path: Typer up to 0.28 gives it a `path` type, 0.29 an
    annotation (pyproject.toml caps Typer below 0.29; either is read)."""
    annotation = str(getattr(getattr(param, "type_descriptor", None), "annotation", ""))
    return "Path" in annotation or getattr(getattr(param, "type", None), "name", "") == "path"


def _commands() -> Iterator[Command]:
    def walk(command: Any, words: tuple[str, ...]) -> Iterator[Command]:
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in subcommands.items():
                yield from walk(sub, (*words, name))
            return
        params = []
        for param in command.params:
            if param.name in ("help", "db"):
                continue
            longs = [o for o in param.opts if o.startswith("--")]
            option = (longs or list(param.opts))[0] if param.param_type_name == "option" else None
            many = param.nargs == -1
            params.append(Param(param.name, option, param.required, _takes_path(param), many))
        has_db = any(param.name == "db" for param in command.params)
        yield Command(words, tuple(params), has_db)

    yield from walk(typer.main.get_command(full_app()), ())


COMMANDS = list(_commands())


def _role(command: Command, param: Param) -> str | None:
    if param.name in RUNS:
        return "run"
    if param.is_path:
        return "output" if param.name in OUTPUTS else "input"
    if (command.words[0], param.name) in PATH_INPUTS:
        return "input"
    return None


@dataclass
class World:
    """What a working invocation needs: a benchmark, a finished run, files for every input."""

    cli: Cli
    root: Path
    run_id: str

    def baseline(self, command: Command, param: Param) -> str:
        values: dict[str, Callable[[], str]] = {
            "benchmark": lambda: str(self.root / "bench"),
            "path": lambda: str(self.root / "bench"),
            "policy": lambda: str(self.root / "policy.yaml"),
            "log": lambda: str(self.root / "log.json"),
            "source": lambda: str(self.root / "gsm8k.jsonl"),
            "format": lambda: "gsm8k",
            "instances": lambda: str(self.root / "instances.jsonl"),
            "predictions": lambda: str(self.root / "predictions.jsonl"),
            "agent": lambda: "oracle",
            "cron": lambda: "0 3 * * 1",
            "proposal": lambda: "nosuchproposal",
            "schedule": lambda: "nosuchschedule",
            "name": lambda: "nosuchwebhook",
            "output": lambda: tempfile.mkdtemp(dir=self.root),  # view-bundle's: new or empty
        }
        if param.name in RUNS:
            return self.run_id
        assert param.name in values, f"{command.name}: add a working value for {param.name}"
        return values[param.name]()

    def invoke(self, command: Command, bad: Param, value: str) -> subprocess.CompletedProcess[str]:
        args: list[str] = list(command.words)
        for param in command.params:
            if param is bad:
                given = value
            elif param.required:
                given = self.baseline(command, param)
            else:
                continue
            args += [param.option, given] if param.option else [given]
            if param.many:  # another, working: the bad value is the only problem
                args.append(self.baseline(command, param))
        args += EXTRA_ARGS.get(command.words[0], [])
        if command.has_db:
            args += ["--db", self.cli.db_url]
        return subprocess.run(
            [sys.executable, "-m", "benchyard", *args],
            cwd=self.cli.cwd,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SEC,
            stdin=subprocess.DEVNULL,
        )


@pytest.fixture
def world(tmp_path: Path, cli: Cli) -> World:
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "a"), scenario("b", "b")])
    ran = cli("run", str(bench), "--agent", "oracle", "-q")
    assert ran.exit_code == 0, ran.output
    run_id = ran.stdout.split()[1]
    policy = {"levels": {"full": {"min_accuracy": 0.5}}}
    (tmp_path / "policy.yaml").write_text(yaml.safe_dump(policy))
    (tmp_path / "gsm8k.jsonl").write_text(
        json.dumps({"question": "1+1?", "answer": "one and one\n#### 2"}) + "\n"
    )
    for name in ("instances.jsonl", "predictions.jsonl", "log.json"):
        (tmp_path / name).write_text("")
    (tmp_path / "plain-file").write_text("a file, not a directory\n")
    return World(cli, tmp_path, run_id)


def _problems(result: subprocess.CompletedProcess[str], names: str) -> list[str]:
    """What is wrong with how a command refused: its status, a traceback, not one line."""
    problems = []
    if result.returncode != 2:
        problems.append(f"exit {result.returncode}, documented 2")
    if "Traceback" in result.stdout + result.stderr:
        problems.append("a traceback")
    told = [line for line in result.stderr.splitlines() if line.strip()]
    if len(told) != 1 or not told[0].startswith("error: ") or names not in told[0]:
        problems.append(f"not one line naming {names!r}: {result.stderr[-400:]!r}")
    return problems


def _walk(world: World, role: str, value: Callable[[Command], str], names: str) -> None:
    failures, walked = [], []
    for command in COMMANDS:
        for param in command.params:
            if _role(command, param) != role:
                continue
            walked.append(f"{command.name} {param.option or param.name}")
            try:
                result = world.invoke(command, param, value(command))
            except subprocess.TimeoutExpired:
                failures.append(
                    f"{command.name} {param.option}: still running after {TIMEOUT_SEC}s"
                )
                continue
            problems = _problems(result, names)
            if problems:
                failures.append(f"{command.name} {param.option or param.name}: {problems}")
    assert walked, f"no command has a {role} parameter"
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(
    "under", ["plain-file/sub/out.json", "plain-file/out.json"], ids=["deeper", "directly"]
)
def test_every_command_refuses_an_output_path_it_cannot_create(world: World, under: str) -> None:
    """A path under a regular file (NotADirectoryError; FileExistsError where the command makes
    the file's parent), as a one-line error."""
    bad = str(world.root / under)
    _walk(world, "output", lambda command: bad, "plain-file")


def test_every_command_refuses_a_missing_input_file(world: World) -> None:
    missing = str(world.root / "missing-input.yaml")
    _walk(world, "input", lambda command: missing, "missing-input.yaml")


def test_every_command_refuses_an_unknown_run(world: World) -> None:
    _walk(world, "run", lambda command: UNKNOWN_RUN, UNKNOWN_RUN)


def test_every_path_parameter_has_a_part() -> None:
    """A new `Path` parameter is walked as an input unless named as an output; none is missed."""
    for command in COMMANDS:
        for param in command.params:
            if param.is_path:
                assert _role(command, param) in ("input", "output"), (command.name, param.name)


def test_show_refuses_an_unknown_scenario(world: World, cli: Cli) -> None:
    result = cli.process("show", world.run_id, "no-such-scenario")
    _, stderr = result.communicate(timeout=TIMEOUT_SEC)
    assert result.returncode == 2, stderr
    assert stderr.strip().splitlines() == [
        f"error: run {world.run_id[:8]} has no scenario 'no-such-scenario' (its scenarios: a, b)"
    ]
