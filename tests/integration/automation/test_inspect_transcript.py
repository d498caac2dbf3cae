"""The Inspect export carries each attempt's trajectory as transcript events (what Inspect View
shows in the Transcript tab), read back by Inspect's own `read_eval_log`: the openai agent's model
calls against the fake model server, with their tokens and the tool call it asked for, served by
benchyard with its result; a command agent's self-reported model call and tool call; the checks'
scores. Hostile content (markup, a huge tool result) comes back as the same data."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from inspect_ai.event import InfoEvent, ModelEvent, ScoreEvent, ToolEvent
from inspect_ai.log import EvalSample, read_eval_log

from benchyard.providers.fake_server import FakeLLM
from tests.integration.providers.conftest import write_project
from tests.support import UNSANDBOXED, Cli, write_benchmark

HOSTILE = "</script><script>alert(1)</script><!-- " + "x" * 300_000
WEATHER = {
    "id": "weather",
    "category": "tools",
    "stimulus": "What is the weather in Paris?",
    "tools": [
        {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            "responses": [{"when": {"city": "Paris"}, "result": {"temp_c": 18, "note": HOSTILE}}],
        }
    ],
    "checks": [
        {"type": "contains", "value": "18", "name": "says 18"},
        {
            "type": "tool_chain",
            "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
            "name": "asks the weather",
        },
    ],
}
MODEL_SCRIPT = {
    "replies": [
        {
            "match": "weather in Paris",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
            "prompt_tokens": 31,
            "completion_tokens": 9,
        },
        {
            "match": '"temp_c": 18',
            "content": "18 degrees",
            "prompt_tokens": 77,
            "completion_tokens": 4,
        },
    ]
}


def _exported(cli: Cli, tmp_path: Path) -> EvalSample:
    out = tmp_path / "log.json"
    exported = cli("export", "latest", "--format", "inspect", "-o", str(out))
    assert exported.exit_code == 0, exported.output
    log = read_eval_log(str(out))
    assert log.samples is not None
    (sample,) = log.samples
    return sample


def _kinds(sample: EvalSample) -> list[str]:
    return [event.event for event in sample.events if not event.event.startswith("span_")]


def test_the_openai_agents_model_and_tool_calls_are_transcript_events(
    tmp_path: Path, cli: Cli
) -> None:
    with FakeLLM(MODEL_SCRIPT) as llm:
        write_project(cli.cwd, llm.url)
        bench = write_benchmark(tmp_path / "bench", [WEATHER])
        ran = cli("run", str(bench), "--agent", "model", "-q")
    assert ran.exit_code == 0, ran.output

    sample = _exported(cli, tmp_path)

    assert _kinds(sample) == ["sample_init", "model", "tool", "model", "score", "score", "score"]
    asking, answering = [e for e in sample.events if isinstance(e, ModelEvent)]
    assert asking.model == "agent-model"
    assert asking.output.usage is not None
    assert (asking.output.usage.input_tokens, asking.output.usage.output_tokens) == (31, 9)
    assert asking.output.usage.total_cost is not None
    assert asking.working_time is not None and asking.working_time > 0
    assert asking.completed is not None and asking.completed >= asking.timestamp
    [asked] = asking.output.message.tool_calls or []
    assert (asked.function, asked.arguments) == ("get_weather", {"city": "Paris"})
    assert [m.role for m in asking.input] == ["user"]
    [offered] = asking.tools  # the tools the model was offered, as Inspect's ToolInfo
    assert offered.name == "get_weather" and offered.parameters.properties["city"].type == "string"
    [tool] = [e for e in sample.events if isinstance(e, ToolEvent)]
    assert (tool.id, tool.function, tool.arguments) == (asked.id, "get_weather", {"city": "Paris"})
    assert json.loads(str(tool.result)) == {"temp_c": 18, "note": HOSTILE}
    assert tool.error is None
    assert [m.role for m in answering.input] == ["user", "assistant", "tool"]
    assert answering.input[2].text == tool.result  # the result the model was sent
    assert answering.output.completion == "18 degrees" and answering.output.stop_reason == "stop"
    assert answering.output.usage is not None and answering.output.usage.input_tokens == 77
    scores = {e.scorer: e.score.value for e in sample.events if isinstance(e, ScoreEvent)}
    assert scores == {"says 18": "C", "asks the weather": "C", "benchyard": "C"}


AGENT = """
import json, os
steps = [
    {"step_id": 1, "source": "agent", "message": "Reading it.", "model_name": "my-model",
     "tool_calls": [{"tool_call_id": "c1", "function_name": "read_file",
                     "arguments": {"path": "</script>.txt"}}],
     "observation": {"results": [{"source_call_id": "c1", "content": HOSTILE}]},
     "metrics": {"prompt_tokens": 812, "completion_tokens": 40}},
    {"kind": "tool_call", "content": "ls", "tool": "shell", "arguments": {"cmd": "ls"},
     "call_id": "c2"},
    {"kind": "tool_result", "content": "a.txt", "call_id": "c2"},
    {"kind": "error", "content": "<b>the model returned no content</b>"},
]
with open(os.environ["BENCHYARD_TRAJECTORY_FILE"], "a") as f:
    for step in steps:
        f.write(json.dumps(step) + "\\n")
print("done")
"""


def test_a_command_agents_reported_calls_are_transcript_events(tmp_path: Path, cli: Cli) -> None:
    script = tmp_path / "agent.py"
    script.write_text(f"HOSTILE = {HOSTILE!r}\n{AGENT}", encoding="utf-8")
    case: dict[str, Any] = {
        "id": "reads",
        "stimulus": "read it",
        "checks": [{"type": "contains", "value": "nope", "name": "says nope"}],
    }
    bench = write_benchmark(tmp_path / "bench", [case])
    agent = f"{sys.executable} {script}"
    ran = cli("run", str(bench), "--agent-cmd", agent, *UNSANDBOXED, "-q")
    assert ran.exit_code == 0, ran.output

    sample = _exported(cli, tmp_path)

    assert _kinds(sample) == [
        "sample_init",
        "model",
        "tool",
        "tool",
        "info",
        "info",
        "score",
        "score",
    ]
    [model] = [e for e in sample.events if isinstance(e, ModelEvent)]
    assert model.model == "my-model" and model.output.usage is not None
    assert model.output.usage.input_tokens == 812
    read, listed = [e for e in sample.events if isinstance(e, ToolEvent)]
    assert (read.id, read.function, read.arguments) == (
        "c1",
        "read_file",
        {"path": "</script>.txt"},
    )
    assert read.result == HOSTILE
    assert (listed.function, listed.arguments, listed.result) == ("shell", {"cmd": "ls"}, "a.txt")
    error, answer = [e for e in sample.events if isinstance(e, InfoEvent)]
    assert error.source == "agent"
    assert error.data == {"kind": "error", "message": "<b>the model returned no content</b>"}
    assert answer.source == "agent" and answer.data == {"answer": "done\n"}
    scores = {e.scorer: e.score.value for e in sample.events if isinstance(e, ScoreEvent)}
    assert scores == {"says nope": "I", "benchyard": "I"}
