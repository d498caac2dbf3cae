"""An attempt's trajectory as Inspect AI transcript events, what `inspect view` shows in a
sample's Transcript tab, in the schema of `inspect_ai.event` (0.3.285):

- an `init` span holding `sample_init` (the scenario id, input and target);
- a `solvers` span holding, in the trajectory's order, a `model` event for each model call (the
  openai agent's, the model bridge's, those a command agent reported: the conversation before it
  as input, the scenario's tools for the openai agent's calls, its answer, reasoning and tool
  calls as output, its tokens and cost as usage, its start, latency and end), a `tool` event
  for each tool call benchyard served or the agent reported (its name, arguments and result; a
  call the model asked for keeps the model's id), an `info` event for the agent's final answer
  where no model call gave it, and for each note and error of the harness, the provider or the
  agent;
- a `sample_limit` event (time) when the attempt timed out, an `error` event when it ended in an
  error that is not the agent's fault;
- a `scorers` span holding a `score` event per check and the `benchyard` score.

A model call's input is written as Inspect writes it: a range of the sample's message pool
(`events_data.messages`, the whole conversation), not a copy of the conversation for each call.
Times are seconds from the attempt's start (`working_start`) and clock times (`timestamp`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchyard.interop.source import RunSource, agent_events, call_arguments, iso
from benchyard.runner.trajectory import Event
from benchyard.store.records import AttemptRecord, CheckRecord

STOP_REASONS = {
    "stop": "stop",
    "length": "max_tokens",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}
"""OpenAI's finish reasons as Inspect's stop reasons (any other is `unknown`)."""
TOOL_CHOICES = {"auto": "auto", "required": "any", "none": "none"}
JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object", "null")
SCHEMA_WORDS: dict[str, type | tuple[type, ...]] = {
    "format": str,
    "description": str,
    "pattern": str,
    "minLength": int,
    "maxLength": int,
    "minimum": (int, float),
    "maximum": (int, float),
    "enum": list,
    "examples": list,
}
"""The words of a JSON Schema that Inspect's `JSONSchema` reads besides its nested schemas, and
their types (a schema with another shape would make the whole log unreadable by Inspect)."""
ERROR_EXCERPT_CHARS = 1000


@dataclass
class Transcript:
    messages: list[dict[str, Any]]  # the conversation: the sample's messages and message pool
    events: list[dict[str, Any]]


@dataclass(frozen=True)
class Outcome:
    """How the attempt ended, as the sample records it: its scores or its error."""

    scores: dict[str, dict[str, Any]] | None
    error: dict[str, Any] | None
    target: str


def offered_tools(source: RunSource) -> dict[str, list[dict[str, Any]]]:
    """The tools the `openai` agent offers its model, as Inspect's ToolInfo, by scenario id."""
    return {
        scenario_id: [_tool_info(function) for function in functions]
        for scenario_id, functions in source.tools().items()
    }


def transcript(
    source: RunSource,
    attempt: AttemptRecord,
    model: str,
    outcome: Outcome,
    offered: list[dict[str, Any]],
) -> Transcript:
    built = _Builder(source, attempt, model, offered=offered)
    for event in agent_events(attempt):
        built.add(event)
    init = {
        **built.base("sample_init", attempt.started_at.timestamp()),
        "sample": {
            "id": attempt.scenario_id,
            "input": source.input_text(attempt),
            "target": outcome.target,
        },
    }
    events = [
        *built.span("init", "init", [init]),
        *built.span("solvers", "solvers", built.solved),
        *built.ending(outcome),
        *built.span("scorers", "scorers", built.scores(outcome)),
    ]
    for number, written in enumerate(events, start=1):
        written["uuid"] = f"{attempt.id}-{number}"
    return Transcript(built.messages, events)


@dataclass
class _Builder:
    source: RunSource
    attempt: AttemptRecord
    model: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    solved: list[dict[str, Any]] = field(default_factory=list)
    asked: list[dict[str, Any]] = field(default_factory=list)  # the last model call's, unserved
    open_calls: dict[str, dict[str, Any]] = field(default_factory=dict)  # tool events by call id
    call_ids: dict[str, str] = field(default_factory=dict)  # a served call's id: the model's
    offered: list[dict[str, Any]] = field(default_factory=list)  # the openai agent's tools

    def add(self, event: Event) -> None:
        data = event.data or {}
        if event.kind == "message" and event.role in ("system", "user", "assistant"):
            self._message(event, data)
        elif event.kind == "tool_call" and "tool" in data:
            self._call(event, data)
        elif event.kind == "tool_result" and _own_id(data):
            self._result(event, data)
        elif event.kind in ("error", "log"):
            self.solved.append(self._info(event, data))

    def base(self, kind: str, moment: float) -> dict[str, Any]:
        return {
            "event": kind,
            "timestamp": iso(moment),
            "working_start": max(moment - self.attempt.started_at.timestamp(), 0.0),
        }

    def span(self, span_id: str, name: str, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`events` within a span of their own (as Inspect's init, solvers and scorers)."""
        if not events:
            return []
        ident = f"{self.attempt.id}-{span_id}"
        start = self.attempt.started_at.timestamp()
        begin = {**self.base("span_begin", start + events[0]["working_start"]), "id": ident}
        end = {**self.base("span_end", start + events[-1]["working_start"]), "id": ident}
        begin.update(type=name, name=name)
        for event in events:
            event["span_id"] = ident
        return [begin, *events, end]

    def ending(self, outcome: Outcome) -> list[dict[str, Any]]:
        """The limit the attempt hit, or its error (the harness's or the provider's)."""
        moment = self._finished()
        if outcome.error is not None:
            return [{**self.base("error", moment), "error": outcome.error}]
        if self.attempt.verdict == "timeout":
            limit = {"type": "time", "message": self.attempt.cause or "time limit"}
            return [{**self.base("sample_limit", moment), **limit}]
        return []

    def scores(self, outcome: Outcome) -> list[dict[str, Any]]:
        """A score per check (its verdict, score, weight and reason), then the sample's own."""
        checks = [(check.label, _check_score(check)) for check in self.attempt.checks]
        return [
            {
                **self.base("score", self._finished()),
                "score": score,
                "target": outcome.target,
                "intermediate": False,
                "scorer": scorer,
            }
            for scorer, score in [*checks, *(outcome.scores or {}).items()]
        ]

    def _finished(self) -> float:
        return self.attempt.finished_at.timestamp()

    def _message(self, event: Event, data: dict[str, Any]) -> None:
        if event.role != "assistant":
            self._append({"role": event.role, "content": event.content})
            return
        model = data.get("model") if isinstance(data.get("model"), str) else None
        message: dict[str, Any] = {"role": "assistant", "content": _content(event)}
        message["source"] = "generate"
        if model is not None:
            message["model"] = model
        self.asked = [_asked(call, n) for n, call in enumerate(_listed(data.get("tool_calls")))]
        if self.asked:
            message["tool_calls"] = list(self.asked)
        before = len(self.messages)
        self._append(message)
        if data.get("source") is None:  # the agent's answer, not a model call's
            answer = {"source": "agent", "data": {"answer": event.content}}
            self.solved.append({**self.base("info", event.ts), **answer})
        else:
            self.solved.append(self._model_call(event, data, dict(message), before))

    def _model_call(
        self, event: Event, data: dict[str, Any], message: dict[str, Any], before: int
    ) -> dict[str, Any]:
        """A model call: the conversation before it (the first `before` messages of the pool),
        its reply."""
        model = str(message.get("model") or self.model)
        calls = message.get("tool_calls")
        reason = data.get("finish_reason")
        stop = STOP_REASONS.get(str(reason), "unknown") if reason else None
        output: dict[str, Any] = {
            "model": model,
            "choices": [{"message": message, "stop_reason": stop or _stop(calls)}],
            "completion": event.content,
        }
        usage = _usage(event, data)
        if usage:
            output["usage"] = usage
        called: dict[str, Any] = {
            **self.base("model", event.ts),
            "model": model,
            "input": [],
            "input_refs": [[0, before]],
            "tools": self.offered if data.get("source") == "model" else [],
            "tool_choice": self._tool_choice(),
            "config": {},
            "output": output,
        }
        if event.latency_sec is not None:
            output["time"] = event.latency_sec
            called["working_time"] = event.latency_sec
            called["completed"] = iso(event.ts + event.latency_sec)
        return called

    def _tool_choice(self) -> str:
        choice = self.source.run.agent_config.get("tool_choice")
        return TOOL_CHOICES.get(choice, "auto") if isinstance(choice, str) else "auto"

    def _call(self, event: Event, data: dict[str, Any]) -> None:
        """A call benchyard served or the agent reported: the model's own call (its id) when the
        last model call asked for one of that name not yet served, else a call of its own."""
        name = str(data["tool"])
        own = _own_id(data) or f"call-{len(self.call_ids) + 1}"
        asked = next((call for call in self.asked if call["function"] == name), None)
        if asked is not None:
            self.asked.remove(asked)
            call_id = str(asked["id"])
        else:
            call_id = own
            self._attach(
                {"id": own, "function": name, "arguments": call_arguments(data.get("arguments"))}
            )
        self.call_ids[own] = call_id
        tool = self._tool_event(event, call_id, name, call_arguments(data.get("arguments")))
        if isinstance(data.get("arguments_error"), str):
            tool["error"] = {"type": "parsing", "message": data["arguments_error"]}
        self.open_calls[own] = tool

    def _tool_event(
        self, event: Event, call_id: str, name: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        tool: dict[str, Any] = {
            **self.base("tool", event.ts),
            "type": "function",
            "id": call_id,
            "function": name,
            "arguments": arguments,
            "result": "",
            "events": [],
        }
        self.solved.append(tool)
        return tool

    def _attach(self, call: dict[str, Any]) -> None:
        """A call no model call asked for, on the last assistant message (a new one if the last
        message is not); a new list, so that no model call's output changes."""
        last = self.messages[-1] if self.messages else None
        if last is None or last["role"] != "assistant":
            last = self._append({"role": "assistant", "content": "", "source": "generate"})
        last["tool_calls"] = [*last.get("tool_calls", []), {**call, "type": "function"}]

    def _result(self, event: Event, data: dict[str, Any]) -> None:
        own = _own_id(data)
        tool = self.open_calls.pop(own, None) or self._answered(own, event)
        name = data.get("tool") or (tool["function"] if tool is not None else "")
        message: dict[str, Any] = {
            "role": "tool",
            "content": event.content,
            "tool_call_id": self.call_ids.get(own, own),
            "function": str(name),
        }
        if data.get("error"):
            message["error"] = {"type": "unknown", "message": event.content[:ERROR_EXCERPT_CHARS]}
        self._append(message)
        if tool is None:
            return
        started = self.attempt.started_at.timestamp() + tool["working_start"]
        tool.update(
            result=event.content,
            completed=iso(event.ts),
            working_time=max(event.ts - started, 0.0),
            message_id=message["id"],
        )
        if "error" in message:
            tool["error"] = message["error"]

    def _answered(self, call_id: str, event: Event) -> dict[str, Any] | None:
        """The tool event of a call the model asked for whose result comes with no call event (an
        agent's ATIF step reports its calls and their results so)."""
        asked = next((call for call in self.asked if call["id"] == call_id), None)
        if asked is None:
            return None
        self.asked.remove(asked)
        self.call_ids[call_id] = call_id
        return self._tool_event(event, call_id, asked["function"], asked["arguments"])

    def _info(self, event: Event, data: dict[str, Any]) -> dict[str, Any]:
        """A note or an error of the harness, the provider or the agent, as data (never markup)."""
        shown: dict[str, Any] = {"kind": event.kind, "message": event.content}
        details = {key: value for key, value in data.items() if key != "source"}
        if details:
            shown["data"] = details
        source = str(data.get("source") or "benchyard")
        return {**self.base("info", event.ts), "source": source, "data": shown}

    def _append(self, message: dict[str, Any]) -> dict[str, Any]:
        message["id"] = f"{self.attempt.id}-m{len(self.messages) + 1}"
        self.messages.append(message)
        return message


def _check_score(check: CheckRecord) -> dict[str, Any]:
    return {
        "value": "C" if check.passed else "I",
        "explanation": check.reason,
        "metadata": {"type": check.check_type, "score": check.score, "weight": check.weight},
    }


def _own_id(data: dict[str, Any]) -> str:
    """The id benchyard (`call_id`) or the agent (`agent_call_id`) gave a call, or ""."""
    return str(data.get("call_id") or data.get("agent_call_id") or "")


def _listed(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _asked(call: dict[str, Any], number: int) -> dict[str, Any]:
    """A tool call a model asked for, in Inspect's shape; arguments that are not a JSON object
    are {} with the text kept as the parse error."""
    asked: dict[str, Any] = {
        "id": str(call.get("id") or f"asked-{number + 1}"),
        "function": str(call.get("name") or ""),
        "arguments": call_arguments(call.get("arguments")),
        "type": "function",
    }
    raw = call.get("arguments")
    if isinstance(raw, str) and not asked["arguments"] and raw.strip() not in ("", "{}"):
        asked["parse_error"] = f"not a JSON object: {raw[:ERROR_EXCERPT_CHARS]}"
    return asked


def _content(event: Event) -> str | list[dict[str, Any]]:
    """A reply's text, with its reasoning before it where the endpoint returned it."""
    if not event.reasoning:
        return event.content
    return [
        {"type": "reasoning", "reasoning": event.reasoning},
        {"type": "text", "text": event.content},
    ]


def _stop(calls: Any) -> str:
    return "tool_calls" if calls else "stop"


def _usage(event: Event, data: dict[str, Any]) -> dict[str, Any]:
    if event.tokens_in is None and event.tokens_out is None:
        return {}
    tokens_in, tokens_out = event.tokens_in or 0, event.tokens_out or 0
    usage: dict[str, Any] = {
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "total_tokens": tokens_in + tokens_out,
    }
    if isinstance(data.get("reasoning_tokens"), int):
        usage["reasoning_tokens"] = data["reasoning_tokens"]
    if event.cost_usd is not None:
        usage["total_cost"] = event.cost_usd
    return usage


def _tool_info(function: dict[str, Any]) -> dict[str, Any]:
    """A tool offered to the model, as Inspect's ToolInfo."""
    parameters = _schema(function.get("parameters"))
    parameters["type"] = "object"
    return {
        "name": str(function.get("name") or ""),
        "description": str(function.get("description") or ""),
        "parameters": parameters,
    }


def _schema(raw: Any) -> dict[str, Any]:
    """A JSON Schema as far as Inspect's `JSONSchema` reads it: its words of the right shape,
    nested schemas that are objects (not booleans, not the list form of `items`)."""
    if not isinstance(raw, dict):
        return {}
    kept = {
        word: value
        for word, value in raw.items()
        if word in SCHEMA_WORDS
        and isinstance(value, SCHEMA_WORDS[word])
        and not isinstance(value, bool)
    }
    kind = raw.get("type")
    if kind in JSON_TYPES or (isinstance(kind, list) and all(k in JSON_TYPES for k in kind)):
        kept["type"] = kind
    if "default" in raw:
        kept["default"] = raw["default"]
    if isinstance(raw.get("required"), list):
        kept["required"] = [name for name in raw["required"] if isinstance(name, str)]
    if isinstance(raw.get("items"), dict):
        kept["items"] = _schema(raw["items"])
    if isinstance(raw.get("properties"), dict):
        kept["properties"] = {str(name): _schema(s) for name, s in raw["properties"].items()}
    if isinstance(raw.get("anyOf"), list):
        kept["anyOf"] = [_schema(schema) for schema in raw["anyOf"]]
    extra = raw.get("additionalProperties")
    if isinstance(extra, bool | dict):
        kept["additionalProperties"] = extra if isinstance(extra, bool) else _schema(extra)
    return kept
