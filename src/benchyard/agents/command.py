"""The command agent: any shell command, speaking the protocol in docs/agent-protocol.md."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import time
from collections.abc import AsyncIterator, Awaitable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchyard import secrets
from benchyard.agents.base import AgentResult, AgentTask
from benchyard.agents.self_report import model_calls, read_agent_events
from benchyard.agents.toolbox import ToolBox
from benchyard.providers.config import ModelConfig, ModelPrice, redacted_model_config
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.trajectory import message
from benchyard.sandbox.base import SYSTEM_PATH
from benchyard.sandbox.identity import sandbox_user
from benchyard.sandbox.process import ProcessOutcome
from benchyard.untrusted import read_capped, remove_entry, write_fresh

if TYPE_CHECKING:
    from benchyard.bridge.egress import EgressSession
    from benchyard.bridge.server import BridgeSession
    from benchyard.runner.trajectory import Event

IO_FILES = ("instruction.txt", "messages.json", "trajectory.jsonl", "output.txt")
EXIT_TEMPFAIL = 75  # sysexits.h EX_TEMPFAIL: the agent's own transient fault, retried
EXIT_NOT_RUNNABLE = (126, 127)  # the shell could not find or execute the command
STDERR_TAIL_CHARS = 300
STORE_VARIABLE = "BENCHYARD_DB"  # the store's URL: never an agent's
HOME_DIR = "home"  # the agent's own HOME, in its io dir


class AttemptBudget(BaseModel):
    """What one attempt's model calls through the bridge may spend; past it the bridge stops the
    attempt live (`attempt_budget`, counted as failed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tokens: int | None = Field(
        default=None, ge=1, description="Prompt and completion tokens of all its calls."
    )
    cost_usd: float | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,
        description="Their cost in USD, from the bridge model's price (`prices:`).",
    )


class CommandAgentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = "command"
    command: str = Field(min_length=1)
    env: dict[str, str] = Field(
        default_factory=dict, description="Variables set for the command, with their values."
    )
    pass_env: list[str] = Field(
        default_factory=list,
        description="Host variables passed to the command by name (an API key the agent needs); "
        "their values are scrubbed from everything benchyard stores or prints.",
    )
    readable: list[str] = Field(
        default_factory=list,
        description="Host paths the command may read in its sandbox besides its own code "
        "(absolute, or relative to benchyard.yaml); nothing else of the host is shown.",
    )
    bridge: ModelConfig | None = Field(
        default=None,
        description="The model behind the attempt's model bridge (`provider: NAME`, `model`, "
        "...): the agent's OpenAI- and Anthropic-style calls go to it through benchyard, which "
        "holds the key and records every call (docs/agent-protocol.md#the-model-bridge).",
    )
    attempt_budget: AttemptBudget | None = Field(
        default=None,
        description="What each attempt's calls through the bridge may spend (`tokens`, "
        "`cost_usd`): the bridge stops the attempt live past it.",
    )
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="USD per million tokens by model (benchyard.yaml's `prices:`, filled in when "
        "the agent is loaded): the tokens the agent reports for a model call are priced by the "
        "model it names.",
    )

    @field_validator("env", "pass_env")
    @classmethod
    def _never_the_store_variable(cls, value: dict[str, str] | list[str]) -> Any:
        if STORE_VARIABLE in value:
            raise ValueError(
                f"{STORE_VARIABLE} is never given to an agent: with the store's URL, an agent "
                "could rewrite its own verdicts"
            )
        return value

    @model_validator(mode="after")
    def _budget_has_a_bridge(self) -> CommandAgentConfig:
        budget = self.attempt_budget
        if budget is None:
            return self
        if self.bridge is None:
            raise ValueError(
                "attempt_budget needs a bridge: only the calls made through it are counted live"
            )
        if budget.cost_usd is not None and self.bridge.price is None:
            raise ValueError(
                f"attempt_budget.cost_usd needs a price for the bridge's model "
                f"'{self.bridge.model}' (prices: in benchyard.yaml)"
            )
        return self

    @model_validator(mode="after")
    def _never_the_store_url(self) -> CommandAgentConfig:
        problem = self.store_url_problem([os.environ.get(STORE_VARIABLE)])
        if problem:
            raise ValueError(problem)
        return self

    def store_url_problem(self, store_urls: Iterable[str | None]) -> str | None:
        """What is wrong when a variable given to the agent (`env`, or a host variable named in
        `pass_env`) holds one of `store_urls`; None when none does."""
        given = {**{name: os.environ.get(name, "") for name in self.pass_env}, **self.env}
        for url in filter(None, store_urls):
            for name, value in given.items():
                if url in value:
                    return (
                        f"{name} holds the store's URL, which is never given to an agent: with "
                        "it, an agent could rewrite its own verdicts"
                    )
        return None


class CommandAgent:
    needs_workdir = True

    def __init__(self, name: str, config: CommandAgentConfig) -> None:
        from benchyard.providers.client import ProviderClient

        self.name = name
        self.config = config
        self.client = ProviderClient(config.bridge, "bridge") if config.bridge else None

    def describe(self) -> dict[str, Any]:
        """The configuration a run records (without `bridge` or `attempt_budget` when there is
        none, as before they existed); the bridge's credential headers redacted, its key only by
        name."""
        described = self.config.model_dump(mode="json")
        for unset in ("prices", "attempt_budget"):
            if not described[unset]:
                del described[unset]
        bridge = described.pop("bridge")
        if bridge is not None:
            described["bridge"] = redacted_model_config(bridge)
        return described

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.aclose()

    @property
    def readable_paths(self) -> tuple[Path, ...]:
        """The existing absolute paths the command names (its script, its interpreter), from which
        a sandbox works out the agent's own code (sandbox/allowlist.py)."""
        return named_paths(self.config.command)

    @property
    def declared_readable(self) -> tuple[Path, ...]:
        """The host paths its configuration declares readable (made absolute when loaded)."""
        return tuple(Path(path) for path in self.config.readable)

    async def run(self, task: AgentTask) -> AgentResult:
        from benchyard.agents.tool_server import serve_tools  # its server loads only when run

        assert task.workdir is not None and task.io_dir is not None
        deadline = time.monotonic() + task.timeout_sec
        result = AgentResult()
        toolbox: ToolBox | None = ToolBox.for_scenario(task.scenario, result.trajectory)
        if toolbox is not None and not toolbox.tools:
            toolbox = None
        async with (
            serve_tools(toolbox, task.io_dir) as tools_env,
            self._bridge(task, result) as bridge,
            _egress(task, result.trajectory) as egress,
        ):
            if toolbox is not None:
                _refuse_unreachable_tools(task, tools_env)
            await self._turns(task, deadline, result, toolbox, tools_env, bridge, egress)
        _count_turns(result, bridge.bridge.calls if bridge else 0, task.max_turns)
        return result

    @asynccontextmanager
    async def _bridge(
        self, task: AgentTask, result: AgentResult
    ) -> AsyncIterator[BridgeSession | None]:
        """The attempt's model bridge while the block runs; None when the agent has none, or the
        run's network mode is `none`."""
        request = getattr(task.sandbox, "request", None)
        if self.client is None or (request is not None and not request.bridge):
            yield None
            return
        from benchyard.bridge.canned import provider_client
        from benchyard.bridge.server import Bridge, serve_bridge

        assert task.io_dir is not None
        budget = self.config.attempt_budget or AttemptBudget()
        own_network = request is not None and not request.network
        async with provider_client(self.client) as client:
            bridge = Bridge(
                client,
                result.trajectory,
                task.max_turns,
                budget.tokens,
                budget.cost_usd,
                task.run_spend,
            )
            async with serve_bridge(bridge, task.io_dir, own_network=own_network) as session:
                yield session

    async def _turns(
        self,
        task: AgentTask,
        deadline: float,
        result: AgentResult,
        toolbox: ToolBox | None,
        tools_env: dict[str, str],
        bridge: BridgeSession | None,
        egress: EgressSession | None,
    ) -> None:
        assert task.workdir is not None and task.io_dir is not None
        conversation = _opening_messages(task)
        trajectory_offset = 0
        for turn_number, user_text in enumerate(task.scenario.stimulus.turns, start=1):
            if toolbox is not None:
                toolbox.turn = turn_number
            conversation.append({"role": "user", "content": user_text})
            result.trajectory.append(message("user", user_text))
            files = _write_turn_files(task.io_dir, user_text, conversation)
            argv = ["/bin/sh", "-c", self.config.command]
            if egress is not None:
                argv = egress.wrap(argv)
            outcome = await _watched(
                task.sandbox.run(
                    bridge.wrap(argv) if bridge else argv,
                    workdir=task.workdir,
                    io_dir=task.io_dir,
                    env={
                        **self._environment(task, turn_number, files),
                        **tools_env,
                        **(bridge.env if bridge else {}),
                        **(egress.env if egress else {}),
                    },
                    timeout_sec=max(deadline - time.monotonic(), 0.001),
                    output_cap_bytes=task.output_cap_bytes,
                ),
                bridge,
            )
            if outcome is not None:
                _append_output(result, outcome)
            trajectory_offset = read_agent_events(
                files["trajectory"], trajectory_offset, result.trajectory, self.config.prices
            )
            failure = bridge.bridge.failure if bridge else None
            if bridge and outcome is not None and outcome.timed_out and failure is None:
                failure = bridge.bridge.provider_fault_at_deadline(task.timeout_sec)
            if failure is not None:
                _count_turns(result, bridge.bridge.calls if bridge else 0, task.max_turns)
                failure.partial = result
                raise failure
            assert outcome is not None
            _raise_on_failure(outcome, task, result)
            answer = _answer(files["output"], outcome, task.output_cap_bytes)
            result.answers.append(answer)
            result.trajectory.append(message("assistant", answer))
            conversation.append({"role": "assistant", "content": answer})

    def _environment(self, task: AgentTask, turn: int, files: dict[str, Path]) -> dict[str, str]:
        """The command's whole environment: a minimal base, the agent's configured `env` and
        `pass_env`, the protocol's variables; never benchyard's own environment (its keys, the
        store's URL)."""
        assert task.io_dir is not None
        return {
            **_base_environment(_private_home(task.io_dir, create=turn == 1)),
            **self.config.env,
            **_passed_variables(self.config.pass_env),
            "BENCHYARD_INSTRUCTION_FILE": str(files["instruction"]),
            "BENCHYARD_MESSAGES_FILE": str(files["messages"]),
            "BENCHYARD_TRAJECTORY_FILE": str(files["trajectory"]),
            "BENCHYARD_OUTPUT_FILE": str(files["output"]),
            "BENCHYARD_SCENARIO_ID": task.scenario.id,
            "BENCHYARD_ATTEMPT_ID": task.attempt_id,
            "BENCHYARD_TURN": str(turn),
            "BENCHYARD_WORKDIR": str(task.workdir),
        }


async def _watched(
    running: Awaitable[ProcessOutcome], bridge: BridgeSession | None
) -> ProcessOutcome | None:
    """The command's outcome; None when the model bridge stopped the attempt first (a limit
    reached, the provider down): the command's whole tree is then killed at once."""
    if bridge is None:
        return await running
    command = asyncio.ensure_future(running)
    stopped = asyncio.ensure_future(bridge.bridge.stopped.wait())
    try:
        await asyncio.wait({command, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in (stopped, command) if not command.done() else (stopped,):
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
    return command.result() if not command.cancelled() else None


def _base_environment(home: Path) -> dict[str, str]:
    """What every agent command gets, whatever the host's environment holds."""
    return {
        "PATH": SYSTEM_PATH,
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
    }


def _private_home(io_dir: Path, *, create: bool) -> Path:
    """The agent's HOME: a directory of its own in the io dir (outside the workdir, so that what
    tools write there never mixes with a coding scenario's change), made before its first turn."""
    home = io_dir / HOME_DIR
    if create:
        try:
            home.mkdir(mode=0o700)
        except FileExistsError:
            return home
        sandbox_user().hand_over(home)
    return home


def _passed_variables(names: list[str]) -> dict[str, str]:
    """The host variables named in `pass_env` that are set, registered as secrets to scrub."""
    passed = {name: os.environ[name] for name in names if name in os.environ}
    secrets.register(*passed.values())
    store = os.environ.get(STORE_VARIABLE)
    return {name: value for name, value in passed.items() if not (store and store in value)}


_WORD = re.compile(r"(?<!\S)[^\s;|&()<>'\"$`=]+(?=$|[\s;|&)])")


def anchor_relative_paths(command: str, base: Path) -> str:
    """Make words of `command` that name existing files under `base` absolute.

    The agent runs with its workdir as cwd, so `python3 agents/mine.py`, written from the project
    directory, would otherwise not find its script.
    """

    def anchored(match: re.Match[str]) -> str:
        word = match.group(0)
        if word.startswith(("/", "-")) or not ("/" in word or "." in word):
            return word
        candidate = base / word
        return shlex.quote(str(candidate.resolve())) if candidate.exists() else word

    return _WORD.sub(anchored, command)


def named_paths(command: str) -> tuple[Path, ...]:
    """The existing absolute paths among the words of a shell command."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:  # unbalanced quotes: the shell will say so when it runs
        words = command.split()
    found = {Path(word) for word in words if word.startswith("/") and len(word) > 1}
    return tuple(sorted(path for path in found if path.exists()))


def _opening_messages(task: AgentTask) -> list[dict[str, str]]:
    system = task.scenario.stimulus.system
    return [{"role": "system", "content": system}] if system else []


def _write_turn_files(
    io_dir: Path, user_text: str, conversation: list[dict[str, str]]
) -> dict[str, Path]:
    """Write this turn's input files, each created anew (never through a name the agent left:
    a link, a FIFO); the trajectory and output files are the agent's to create."""
    files = {name.split(".")[0]: io_dir / name for name in IO_FILES}
    write_fresh(files["instruction"], user_text.encode("utf-8"))
    write_fresh(files["messages"], json.dumps(conversation, ensure_ascii=False).encode("utf-8"))
    directory = os.open(io_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        remove_entry(directory, files["output"].name)  # an earlier turn's answer is not this one's
    finally:
        os.close(directory)
    return files


def _append_output(result: AgentResult, outcome: ProcessOutcome) -> None:
    for captured, data, dropped in (
        (result.stdout, outcome.stdout, outcome.stdout_dropped),
        (result.stderr, outcome.stderr, outcome.stderr_dropped),
    ):
        captured.text += data.decode("utf-8", errors="replace")
        captured.dropped_bytes += dropped


def _count_turns(result: AgentResult, observed: int, max_turns: int) -> None:
    """The attempt's turns are its model calls: those the model bridge observed; else those the
    agent reported (a claim: past max_turns, a review flag, never a failure after the fact); else
    the user turns it answered."""
    reported = model_calls(result.trajectory)
    if observed or not reported:
        result.turns = observed or len(result.answers)
        return
    result.turns = reported
    result.claimed_over_max_turns = reported > max_turns


def _raise_on_failure(outcome: ProcessOutcome, task: AgentTask, result: AgentResult) -> None:
    limit = f" ({outcome.limit_hit} reached)" if outcome.limit_hit else ""
    if outcome.timed_out:
        raise AttemptFailure(
            FailureKind.AGENT_TIMEOUT,
            f"timed out after {task.timeout_sec:g}s; process tree killed{limit}",
            result,
        )
    code = outcome.returncode
    if code == 0:
        return
    tail = outcome.stderr.decode("utf-8", errors="replace").strip()[-STDERR_TAIL_CHARS:]
    detail = f": {tail}" if tail else ""
    if limit:
        raise AttemptFailure(
            FailureKind.RESOURCE_LIMIT, f"agent exited with code {code}{limit}{detail}", result
        )
    if code == EXIT_TEMPFAIL:
        raise AttemptFailure(
            FailureKind.AGENT_TEMPFAIL,
            f"agent reported a transient fault (exit 75){detail}",
            result,
        )
    if code in EXIT_NOT_RUNNABLE:
        raise AttemptFailure(
            FailureKind.AGENT_START, f"agent command could not run (exit {code}){detail}", result
        )
    reason = (
        f"killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
    )
    raise AttemptFailure(FailureKind.AGENT_CRASH, f"agent {reason}{detail}", result)


def _answer(output_file: Path, outcome: ProcessOutcome, cap: int) -> str:
    """The output file when the agent wrote one, else stdout, exactly as written (whitespace
    included: official graders such as IFEval's read the response as given)."""
    try:
        written = read_capped(output_file, cap)
    except OSError:  # none, or not a regular file (a link, a FIFO): the answer is on stdout
        written = b""
    data = written if written.strip() else outcome.stdout
    return data.decode("utf-8", errors="replace")


@asynccontextmanager
async def _egress(task: AgentTask, trajectory: list[Event]) -> AsyncIterator[EgressSession | None]:
    """The attempt's egress proxy while the block runs (bridge/egress.py), its connections
    recorded in `trajectory`; None unless `--network` names destinations."""
    request = getattr(task.sandbox, "request", None)
    if request is None or getattr(request, "egress", None) is None:
        yield None
        return
    from benchyard.bridge.egress import serve_egress

    assert task.io_dir is not None
    own_network = not request.network
    served = serve_egress(request.egress, task.io_dir, trajectory, own_network=own_network)
    async with served as session:
        yield session


def _refuse_unreachable_tools(task: AgentTask, tools_env: dict[str, str]) -> None:
    """A sandbox without a network reaches the tool server only over its Unix socket, whose path
    (under the work root) may be too long to make one: then the attempt cannot be run fairly, and
    says why, instead of counting the agent's missing tools against it."""
    request = getattr(task.sandbox, "request", None)
    networked = request is None or bool(getattr(request, "network", True))
    if "BENCHYARD_TOOLS_SOCKET" in tools_env or networked:
        return
    from benchyard.agents.tool_server import MAX_SOCKET_PATH, SOCKET_NAME

    assert task.io_dir is not None
    path = task.io_dir / SOCKET_NAME
    raise AttemptFailure(
        FailureKind.SANDBOX_START,
        f"the tool server's socket path {path} is {len(str(path))} bytes, over the "
        f"{MAX_SOCKET_PATH} a Unix socket's path can hold, and this sandbox has no network for "
        "its loopback URL: give a shorter --work-root",
    )
