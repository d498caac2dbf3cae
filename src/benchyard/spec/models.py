"""Pydantic models of the benchmark format: `benchmark.yaml` and scenario files."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from benchyard.spec.haystack import HaystackSpec, expand
from benchyard.spec.problems import format_field
from benchyard.spec.profile_spec import PROFILE_NAME, ProfileSpec
from benchyard.spec.tools import ToolReference, ToolSpec, numbers_as_text

SCENARIO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
RESOURCE_NAME = r"^[A-Za-z][A-Za-z0-9_.-]{0,99}$"  # a Ray resource a scenario may ask for

# The longest text the store keeps for fields that land in its length-limited columns
# (store/schema.py; tests/unit/spec/test_limits.py holds the two together).
MAX_SCENARIO_ID = 200  # attempts.scenario_id, attempt_queue.scenario_id
MAX_CATEGORY = 200  # attempts.category
MAX_CHECK_TYPE = 100  # check_results.check_type
MAX_CHECK_NAME = 200  # check_results.label (a check's name, else its type)
MAX_BENCHMARK_NAME = 200  # runs.benchmark_name
MAX_BENCHMARK_VERSION = 100  # runs.benchmark_version

DEFER_TURN_CHECKS = "defer_turn_checks"
"""Validation context key: leave the turn checks to `Scenario.turn_problems` (the loader's way)."""

Difficulty = Literal["easy", "medium", "hard"]
StimulusKind = Literal["message", "conversation", "task"]


class SpecModel(BaseModel):
    """Base of every spec model: unknown keys are errors, so typos never pass silently."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Limits(SpecModel):
    timeout_sec: float | None = Field(
        default=None, gt=0, description="Wall-clock limit of one attempt."
    )
    max_turns: int | None = Field(
        default=None, ge=1, description="Most agent turns in one attempt."
    )
    memory_mb: int | None = Field(
        default=None, ge=16, description="Memory of everything the attempt runs in its sandbox."
    )
    max_processes: int | None = Field(
        default=None, ge=1, description="Processes and threads at once in the attempt's sandbox."
    )
    cpu_sec: float | None = Field(
        default=None, gt=0, description="CPU time of each process in the attempt's sandbox."
    )
    cpus: float | None = Field(
        default=None, gt=0, description="CPU cores the attempt may use at once (docker sandbox)."
    )
    resources: dict[Annotated[str, Field(pattern=RESOURCE_NAME)], Annotated[float, Field(gt=0)]] = (
        Field(
            default_factory=dict,
            description="What the attempt needs of the machine it runs on, by name and amount "
            "(docker, gpu, or a resource of your own): where the Ray executor places it "
            "(docs/distributed.md); a local worker ignores it.",
        )
    )


class Defaults(Limits):
    """Benchmark-wide defaults; a scenario's own `limits` win."""


class SandboxSpec(SpecModel):
    """What a benchmark or a scenario asks of its sandbox; a scenario's own keys win."""

    image: str | None = Field(
        default=None, min_length=1, description="Docker image the docker sandbox runs."
    )
    network: bool | None = Field(
        default=None, description="Give the attempt network access (default: none)."
    )


class BenchmarkSandboxSpec(SandboxSpec):
    """The benchmark's `sandbox:`: a scenario's keys, and the host paths its sandboxes may read."""

    readable: list[str] = Field(
        default_factory=list,
        description="Host paths (absolute, or relative to the benchmark's directory) that agents "
        "and model-written code may read; nothing else of the host is shown beyond its system.",
    )


def _inside_the_benchmark(pattern: str) -> str:
    """A scenario-file pattern names files inside the benchmark directory, and some file."""
    if pattern.startswith("/") or ".." in pattern.split("/"):
        raise ValueError(
            f"'{pattern}' must stay inside the benchmark directory (a relative pattern, no '..')"
        )
    if not PurePosixPath(pattern).parts:
        raise ValueError(f"'{pattern}' names no file (e.g. scenarios/*.yaml)")
    return pattern


ScenarioPattern = Annotated[str, Field(min_length=1), AfterValidator(_inside_the_benchmark)]


class BenchmarkManifest(SpecModel):
    """`benchmark.yaml`: the benchmark's identity and defaults."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=MAX_BENCHMARK_NAME)
    version: str = Field(min_length=1, max_length=MAX_BENCHMARK_VERSION)
    description: str = ""
    defaults: Defaults = Field(default_factory=Defaults)
    sandbox: BenchmarkSandboxSpec = Field(default_factory=BenchmarkSandboxSpec)
    scenarios: list[ScenarioPattern] = Field(
        default_factory=lambda: [
            "scenarios/**/*.yaml",
            "scenarios/**/*.yml",
            "scenarios/**/*.jsonl",
        ],
        description="Glob patterns, relative to the benchmark directory, of the scenario files.",
    )
    format: str | None = Field(
        default=None,
        description="Read the scenarios from `source` in this published format (see "
        "docs/importers.md) instead of from scenario files.",
    )
    source: str | None = Field(
        default=None,
        description="The file or directory `format` reads, relative to the benchmark directory.",
    )
    options: dict[str, Any] = Field(
        default_factory=dict, description="The format's import options."
    )
    provenance: dict[str, Any] | None = Field(
        default=None,
        description="Where an imported benchmark came from (format, its version, the source's "
        "sha256); written by `benchyard import`, recorded with every run.",
    )
    profiles: dict[Annotated[str, Field(pattern=PROFILE_NAME)], ProfileSpec] = Field(
        default_factory=dict,
        description="Named subsets for `--profile` (spec/profiles.py); quick, standard and full "
        "exist without being defined.",
    )

    @model_validator(mode="after")
    def _format_with_source(self) -> BenchmarkManifest:
        if (self.format is None) != (self.source is None):
            raise ValueError("give both 'format' and 'source' (or neither)")
        if self.options and self.format is None:
            raise ValueError("'options' needs a 'format'")
        return self

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int | float) else value


class Stimulus(SpecModel):
    """What the agent receives: user turns (one for a message or a task), optional system prompt."""

    kind: StimulusKind = "message"
    turns: list[str] = Field(min_length=1)
    system: str | None = None
    haystack: HaystackSpec | None = Field(
        default=None,
        description="Long text generated from a seed at load, put where a turn says "
        "{{haystack}} (spec/haystack.py).",
    )

    @model_validator(mode="after")
    def _expand_haystack(self) -> Stimulus:
        if self.haystack is not None:  # the turns hold the text from here on (frozen otherwise)
            object.__setattr__(self, "turns", expand(self.turns, self.haystack))
        return self

    @model_validator(mode="before")
    @classmethod
    def _from_short_forms(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"kind": "message", "turns": [value]}
        if isinstance(value, dict):
            value = dict(value)
            if "message" in value:
                value.setdefault("kind", "message")
                value["turns"] = [value.pop("message")]
            elif "task" in value:
                value.setdefault("kind", "task")
                value["turns"] = [value.pop("task")]
            elif "turns" in value:
                value.setdefault("kind", "conversation")
        return value


class Derivation(SpecModel):
    """A program, run by `verify` in the sandbox with the stimulus in `stimulus.json` (its turns
    and system prompt) in its working directory, whose last line of output must be the reference
    answer (equal as JSON when both are JSON, else as text with whitespace normalised)."""

    python: str = Field(min_length=1, description="Python source, run with the sandbox's python3.")
    timeout_sec: float = Field(default=60.0, gt=0)

    @field_validator("python")
    @classmethod
    def _compiles(cls, source: str) -> str:
        try:
            compile(source, "<derive>", "exec", dont_inherit=True)
        except SyntaxError as error:
            raise ValueError(f"derive line {error.lineno}: {error.msg}") from None
        return source


class FixtureFile(SpecModel):
    """A file copied into the attempt's workdir, from `src` (relative to the scenario file) or inline `content`."""

    dest: str
    src: str | None = None
    content: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_path(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"src": value, "dest": value.rstrip("/").rsplit("/", 1)[-1]}
        if isinstance(value, dict) and "dest" not in value and isinstance(value.get("src"), str):
            return {**value, "dest": value["src"].rstrip("/").rsplit("/", 1)[-1]}
        return value

    @field_validator("dest")
    @classmethod
    def _inside_workdir(cls, dest: str) -> str:
        if dest.startswith("/") or ".." in dest.split("/"):
            raise ValueError(f"'{dest}' must stay inside the workdir (a relative path, no '..')")
        return dest

    @model_validator(mode="after")
    def _exactly_one_source(self) -> FixtureFile:
        if (self.src is None) == (self.content is None):
            raise ValueError("give exactly one of 'src' or 'content'")
        return self


class Fixtures(SpecModel):
    files: list[FixtureFile] = Field(default_factory=list)
    verification: list[FixtureFile] = Field(
        default_factory=list,
        description="Files copied only into the fresh verification workdir of a coding scenario "
        "(hidden tests), over the agent's change; the agent never sees them.",
    )


class ReferenceChange(SpecModel):
    """The reference solution of a coding scenario: files written over the workdir, then a patch."""

    files: list[FixtureFile] = Field(default_factory=list)
    patch: str | None = Field(
        default=None,
        description="A unified diff (git format), relative to the scenario file, applied to the workdir.",
    )

    @model_validator(mode="after")
    def _not_empty(self) -> ReferenceChange:
        if not self.files and self.patch is None:
            raise ValueError("give 'files', 'patch' or both")
        return self


COMMON_CHECK_KEYS = frozenset({"type", "name", "weight", "negate", "turn"})


class CheckSpec(SpecModel):
    """One check as written in a scenario: the common keys, plus the check type's own parameters."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: str = Field(max_length=MAX_CHECK_TYPE)
    name: str | None = Field(default=None, max_length=MAX_CHECK_NAME)
    weight: float = Field(default=1.0, ge=0)
    negate: bool = False
    turn: int | None = Field(
        default=None,
        ge=1,
        description="Which answer to check (1 = the first turn); default the last.",
    )

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})

    @property
    def label(self) -> str:
        return self.name or self.type


class EnvironmentSpec(SpecModel):
    """A simulated environment whose tools the agent gets (agents/environments.py): its `type`
    and that type's own parameters (validated by the type when the benchmark loads)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: str = Field(min_length=1, max_length=100)

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


# The defaults of a scenario that gives no `fixtures`, `limits` or `sandbox`: one instance of each,
# shared by every such scenario (frozen, and nothing changes their lists or mappings in place), so
# that a benchmark of many scenarios does not hold as many equal copies (issue 16).
_NO_FIXTURES = Fixtures()
_NO_LIMITS = Limits()
_NO_SANDBOX = SandboxSpec()


class Scenario(SpecModel):
    id: str = Field(max_length=MAX_SCENARIO_ID)
    category: str = Field(default="general", max_length=MAX_CATEGORY)
    tags: list[str] = Field(default_factory=list)
    difficulty: Difficulty = "medium"
    description: str = ""
    stimulus: Stimulus
    fixtures: Fixtures = Field(default_factory=lambda: _NO_FIXTURES)
    tools: list[ToolSpec] = Field(
        default_factory=list, description="Simulated tools offered to the agent (see spec.tools)."
    )
    environment: EnvironmentSpec | None = Field(
        default=None,
        description="A simulated environment (e.g. an SRE incident) whose tools the agent gets.",
    )
    checks: list[CheckSpec] = Field(min_length=1)
    reference: str | list[str] | ToolReference | None = None
    reference_change: ReferenceChange | None = Field(
        default=None,
        description="The reference solution of a coding scenario, as a change to the workdir.",
    )
    limits: Limits = Field(default_factory=lambda: _NO_LIMITS)
    sandbox: SandboxSpec = Field(default_factory=lambda: _NO_SANDBOX)
    threshold: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Pass when the weighted score reaches this; default: every check passes.",
    )
    negative: bool = Field(
        default=False,
        description="The right behaviour is to find or do nothing; a failed attempt here is a false positive.",
    )
    derive: Derivation | None = Field(
        default=None,
        description="A program that works the reference answer out again (brute force, a "
        "solver, a search of the stimulus); `verify` runs it in the sandbox.",
    )
    decoys: list[str | list[str] | ToolReference] = Field(
        default_factory=list,
        description="Known-wrong answers (a quadratic solution, a forbidden tool call): `verify` "
        "grades each, and a decoy that passes is a broken case.",
    )

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("reference", mode="before")
    @classmethod
    def _numbers_as_text(cls, value: Any) -> Any:
        """`reference: 42` means the answer "42"."""
        return numbers_as_text(value)

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not SCENARIO_ID.match(value):
            raise ValueError(f"'{value}' is not a valid id (letters, digits, '_', '.', ':', '-')")
        return value

    @model_validator(mode="after")
    def _reference_per_turn(self, info: ValidationInfo) -> Scenario:
        # The loader passes this context to report each problem at its own field and line.
        if isinstance(info.context, dict) and info.context.get(DEFER_TURN_CHECKS):
            return self
        problems = self.turn_problems()
        if problems:
            raise ValueError("; ".join(f"{format_field(path)}: {text}" for path, text in problems))
        return self

    def turn_problems(
        self, environment_tools: Sequence[str] | None = None
    ) -> list[tuple[tuple[str | int, ...], str]]:
        """Each (field path, message) where the reference or a check disagrees with the turns,
        or the reference's tool calls with the scenario's tools and `environment_tools`, those of
        its environment (the loader passes them; when not given, calls are not checked against
        an environment's tools)."""
        turns = len(self.stimulus.turns)
        problems: list[tuple[tuple[str | int, ...], str]] = []
        answers = self.reference
        answers_path: tuple[str, ...] = ("reference",)
        if isinstance(self.reference, ToolReference):
            answers, answers_path = self.reference.answer, ("reference", "answer")
        if isinstance(answers, list) and len(answers) != turns:
            problems.append(
                (
                    answers_path,
                    f"{_count(len(answers), 'answer')} for {_count(turns, 'user turn')}: "
                    "give one answer per turn, or only the last one as a string",
                )
            )
        problems += self._tool_problems(turns, environment_tools)
        for index, check in enumerate(self.checks):
            if check.turn is not None and check.turn > turns:
                problems.append(
                    (
                        ("checks", index, "turn"),
                        f"turn {check.turn} does not exist: the stimulus has "
                        f"{_count(turns, 'user turn')}",
                    )
                )
        return problems

    def _tool_problems(
        self, turns: int, environment_tools: Sequence[str] | None
    ) -> list[tuple[tuple[str | int, ...], str]]:
        problems: list[tuple[tuple[str | int, ...], str]] = []
        names = [tool.name for tool in self.tools] + list(environment_tools or ())
        tools_unknown = self.environment is not None and environment_tools is None
        for index, name in enumerate(names):
            if name in names[:index]:
                problems.append((("tools", index, "name"), f"tool '{name}' is defined twice"))
        calls = self.reference.tool_calls if isinstance(self.reference, ToolReference) else []
        for index, call in enumerate(calls):
            path: tuple[str | int, ...] = ("reference", "tool_calls", index)
            if call.name not in names and not tools_unknown:
                offered = ", ".join(names) or "none"
                problems.append(
                    ((*path, "name"), f"no tool named '{call.name}' (tools: {offered})")
                )
            if call.turn is not None and call.turn > turns:
                problems.append(
                    (
                        (*path, "turn"),
                        f"turn {call.turn} does not exist: the stimulus has "
                        f"{_count(turns, 'user turn')}",
                    )
                )
        return problems

    def tool(self, name: str) -> ToolSpec | None:
        return next((tool for tool in self.tools if tool.name == name), None)

    def reference_answers(self) -> list[str] | None:
        """The reference as one answer per user turn (earlier turns empty when only the final one is given)."""
        reference = self.reference
        if isinstance(reference, ToolReference):
            reference = reference.answer
        if reference is None:
            # A coding scenario may give only the change; its answers are then empty.
            return None if self.reference_change is None else [""] * len(self.stimulus.turns)
        if isinstance(reference, list):
            return list(reference)
        return [""] * (len(self.stimulus.turns) - 1) + [reference]


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
