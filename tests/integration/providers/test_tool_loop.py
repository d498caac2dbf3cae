"""The `openai` agent's tool-calling loop over real HTTP: a multi-turn scenario whose tools are
answered from fixtures, recorded in the store as a trajectory; and a command agent that reaches the
same tools through benchyard's tool server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from benchyard.runner.tool_events import observed_calls
from benchyard.store.store import Store
from tests.integration.providers.conftest import StartFake, write_project
from tests.support import Cli, write_benchmark

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
    "responses": [
        {"when": {"city": "Paris"}, "result": {"temp_c": 18, "sky": "cloudy"}},
        {"error": "unknown city"},
    ],
}
SCENARIO: dict[str, Any] = {
    "id": "weather",
    "category": "tools",
    "stimulus": {"turns": ["What is the weather in Paris?", "And in Atlantis?"]},
    "tools": [WEATHER_TOOL],
    "reference": {
        "answer": ["18 degrees and cloudy", "unknown"],
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "Paris"}, "turn": 1},
            {"name": "get_weather", "arguments": {"city": "Atlantis"}, "turn": 2},
        ],
    },
    "checks": [
        {"type": "contains", "turn": 1, "value": "18"},
        {
            "type": "tool_chain",
            "mode": "exact",
            "calls": [
                {"name": "get_weather", "arguments": {"city": "Paris"}},
                {"name": "get_weather", "arguments": {"city": "Atlantis"}},
            ],
        },
    ],
}
MODEL_SCRIPT = {
    "replies": [
        {
            "match": "weather in Paris",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        },
        {
            "match": '"temp_c": 18',
            "content": "It is 18 degrees and cloudy.",
            "prompt_tokens": 40,
            "completion_tokens": 7,
        },
        {
            "match": "Atlantis",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Atlantis"}}],
        },
        {"match": "unknown city", "content": "That city is unknown to the weather service."},
    ]
}


def test_multi_turn_tool_loop_trajectory(
    tmp_path: Path, cli: Cli, store: Store, fake_llm: StartFake
) -> None:
    llm = fake_llm(MODEL_SCRIPT)
    write_project(cli.cwd, llm.url)
    bench = write_benchmark(tmp_path / "bench", [SCENARIO])
    result = cli("run", str(bench), "--agent", "model", "-q")
    assert result.exit_code == 0, result.output
    run = store.resolve_run("latest")
    (attempt,) = store.attempts(run.id, with_evidence=True)
    assert attempt.verdict == "passed", attempt.cause
    assert attempt.answer == "That city is unknown to the weather service."
    events = attempt.trajectory or []
    shape = [(e.kind, e.role) for e in events]
    turn = [
        ("message", "user"),
        ("message", "assistant"),  # the model asks for the tool
        ("tool_call", "assistant"),
        ("tool_result", "tool"),
        ("message", "assistant"),  # the model answers
    ]
    assert shape == turn + turn
    assert [e.content for e in events if e.kind == "tool_result"] == [
        '{"temp_c": 18, "sky": "cloudy"}',
        "unknown city",
    ]
    assert [call.error for call in observed_calls(events)] == [False, True]
    model_calls = [e for e in events if e.kind == "message" and e.role == "assistant"]
    for event in model_calls:
        assert event.latency_sec is not None and event.latency_sec > 0
        assert event.ttft_sec is not None and event.ttft_sec <= event.latency_sec
        assert event.data is not None and event.data["model"] == "agent-model"
        assert event.cost_usd is not None and event.tokens_in and event.tokens_out
    assert model_calls[0].data and model_calls[0].data["tool_calls"][0]["name"] == "get_weather"
    answered = model_calls[1]
    assert (answered.tokens_in, answered.tokens_out) == (40, 7)
    assert answered.cost_usd == (40 * 1.0 + 7 * 2.0) / 1e6
    assert attempt.turns == 4
    assert attempt.tokens_in == sum(e.tokens_in or 0 for e in model_calls)
    # The model saw the tools, the tool results, and the conversation of the first turn.
    last = llm.requests[-1]
    assert last["tools"][0]["function"]["name"] == "get_weather"
    assert [m["role"] for m in last["messages"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
    ]


def test_a_model_that_never_answers_stops_at_max_turns(
    tmp_path: Path, cli: Cli, store: Store, fake_llm: StartFake
) -> None:
    looping = {
        "replies": [{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}]
    }
    llm = fake_llm(looping)
    write_project(cli.cwd, llm.url)
    scenario = {**SCENARIO, "stimulus": "What is the weather in Paris?", "limits": {"max_turns": 3}}
    scenario["reference"] = {
        "answer": "18",
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
    }
    bench = write_benchmark(tmp_path / "bench", [scenario])
    cli("run", str(bench), "--agent", "model", "-q")
    (attempt,) = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    assert (attempt.verdict, attempt.failure_kind) == ("failed", "max_turns")
    assert len(llm.requests) == 3
    assert len(observed_calls(attempt.trajectory or [])) == 3


TOOL_USING_AGENT = """
import http.client, json, os, socket

class Tools(http.client.HTTPConnection):  # the tool server's Unix socket: works in any sandbox
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(os.environ["BENCHYARD_TOOLS_SOCKET"])

def call(method, path, body=None):
    connection = Tools("tools")
    connection.request(method, path, body and json.dumps(body))
    return json.loads(connection.getresponse().read())

name = call("GET", "/tools")["tools"][0]["function"]["name"]
reply = call("POST", "/call", {"name": name, "arguments": {"city": "Paris"}})
with open(os.environ["BENCHYARD_TRAJECTORY_FILE"], "a") as log:
    log.write(json.dumps({"kind": "tool_call", "content": "get_weather(Atlantis), self-reported"}) + "\\n")
print("It is %s degrees." % json.loads(reply["result"])["temp_c"])
"""


def test_a_command_agent_reaches_the_tools_through_benchyard(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(TOOL_USING_AGENT)
    scenario = {
        **SCENARIO,
        "stimulus": "What is the weather in Paris?",
        "reference": {
            "answer": "18",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        },
        "checks": [
            {"type": "contains", "value": "18"},
            {
                "type": "tool_chain",
                "mode": "exact",
                "calls": [{"name": "get_weather", "arguments": {"city": "paris"}}],
            },
        ],
    }
    bench = write_benchmark(tmp_path / "bench", [scenario])
    result = cli("run", str(bench), "--agent-cmd", f"{sys.executable} {agent}", "-q")
    assert result.exit_code == 0, result.output
    (attempt,) = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    assert attempt.verdict == "passed", (attempt.cause, attempt.stderr)
    calls = observed_calls(attempt.trajectory or [])
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", {"city": "Paris"})]
    self_reported = [e for e in attempt.trajectory or [] if "self-reported" in e.content]
    assert self_reported and self_reported[0].data == {"source": "agent"}


def test_the_tool_server_answers_over_loopback_tcp(tmp_path: Path) -> None:
    import asyncio

    import httpx

    from benchyard.agents.tool_server import serve_tools
    from benchyard.agents.toolbox import ToolBox
    from benchyard.runner.trajectory import Event
    from benchyard.spec.tools import ToolSpec

    calls: list[Any] = [
        {"name": "get_weather", "arguments": {"city": "Paris"}},
        {"name": "get_weather", "arguments": '{"city": 3}'},
        {"name": "nope"},
        {"arguments": {}},
    ]

    async def scenario() -> tuple[list[httpx.Response], list[Event]]:
        sink: list[Event] = []
        toolbox = ToolBox([ToolSpec.model_validate(WEATHER_TOOL)], sink)
        async with serve_tools(toolbox, tmp_path) as env, httpx.AsyncClient() as http:
            url = env["BENCHYARD_TOOLS_URL"]
            replies = [await http.post(url + "/call", json=call) for call in calls]
            replies.append(await http.get(url + "/tools"))
            replies.append(await http.get(url.rsplit("/", 1)[0] + "/tools"))  # no secret path
        return replies, sink

    replies, sink = asyncio.run(scenario())
    assert replies[0].json() == {"call_id": "call-1", "result": '{"temp_c": 18, "sky": "cloudy"}'}
    assert "invalid arguments" in replies[1].json()["error"]
    assert "no tool named 'nope'" in replies[2].json()["error"]
    assert replies[3].status_code == 400
    assert replies[4].json()["tools"][0]["function"]["name"] == "get_weather"
    assert replies[5].status_code == 404
    assert [e.kind for e in sink] == ["tool_call", "tool_result"] * 3
    assert not (tmp_path / "tools.sock").exists()


async def test_a_tools_socket_the_agent_replaced_ends_the_server_quietly(tmp_path: Path) -> None:
    from benchyard.agents.tool_server import serve_tools
    from benchyard.agents.toolbox import ToolBox
    from benchyard.spec.tools import ToolSpec

    toolbox = ToolBox([ToolSpec.model_validate(WEATHER_TOOL)], [])
    async with serve_tools(toolbox, tmp_path) as env:
        socket_path = Path(env["BENCHYARD_TOOLS_SOCKET"])
        socket_path.unlink()
        socket_path.mkdir()  # what a hostile agent leaves behind; its end raised IsADirectoryError
    assert socket_path.is_dir()
