"""The fake server's OpenAI Responses API and Anthropic Messages, read by the official `openai` and
`anthropic` Python SDKs over real HTTP (clients written by others, not by us): whole and streamed
replies, scripted tool calls and their results, reasoning, usage, errors; every request recorded."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import openai
import pytest

from benchyard.providers.fake_server import FakeLLM
from tests.integration.providers.conftest import StartFake

WEATHER = {
    "replies": [
        {
            "match": "weather in Paris",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        },
        {"match": '"temp_c": 18', "content": "It is 18 °C in Paris."},
        {"match": "think first", "reasoning": "Let me think it over.", "content": "Done thinking."},
        {"match": "busy", "status": 429, "retry_after_sec": 0, "content": "slow down"},
        {"match": "overloaded", "status": 529},
        {"match": "long", "content": "cut short", "finish_reason": "length"},
    ],
    "default": {"content": "no script for that"},
}
PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
OPENAI_TOOL: Any = {"type": "function", "name": "get_weather", "parameters": PARAMETERS}
ANTHROPIC_TOOL: Any = {"name": "get_weather", "input_schema": PARAMETERS}
RESULT = '{"temp_c": 18}'


def openai_client(llm: FakeLLM) -> openai.OpenAI:
    return openai.OpenAI(base_url=llm.url, api_key="fake-key", max_retries=0)


def anthropic_client(llm: FakeLLM) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=llm.url.removesuffix("/v1"), api_key="fake-key", max_retries=0
    )


# --- the Responses API ---------------------------------------------------------------------------


def test_responses_whole_with_a_tool_call_and_its_result(fake_llm: StartFake) -> None:
    llm = fake_llm(WEATHER)
    client = openai_client(llm)
    first = client.responses.create(
        model="gpt-fake", input="What is the weather in Paris?", tools=[OPENAI_TOOL]
    )
    calls = [item for item in first.output if item.type == "function_call"]
    assert [(call.name, json.loads(call.arguments)) for call in calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert first.status == "completed" and first.model == "gpt-fake"
    assert first.usage is not None and first.usage.input_tokens > 0
    assert first.usage.output_tokens == 2  # the arguments, two words as the fake counts

    history: list[Any] = [
        {"role": "user", "content": "What is the weather in Paris?"},
        *[item.model_dump(exclude_none=True) for item in first.output],
        {"type": "function_call_output", "call_id": calls[0].call_id, "output": RESULT},
    ]
    second = client.responses.create(model="gpt-fake", input=history, tools=[OPENAI_TOOL])
    assert second.output_text == "It is 18 °C in Paris."
    assert llm.apis == ["responses", "responses"]
    assert llm.requests[1]["input"][-1]["output"] == RESULT


def test_responses_streamed_as_typed_events(fake_llm: StartFake) -> None:
    llm = fake_llm(WEATHER)
    client = openai_client(llm)
    # the SDK's own stream helper rebuilds the response from the events, and fails on an event
    # out of order (a delta before its item was added, a part never opened)
    with client.responses.stream(model="gpt-fake", input="think first") as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert final.output_text == "Done thinking."
    reasoning = [item for item in final.output if item.type == "reasoning"]
    assert reasoning and reasoning[0].content is not None
    assert reasoning[0].content[0].text == "Let me think it over."
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert kinds.count("response.output_text.delta") == 2  # one word a delta
    assert kinds.count("response.reasoning_text.delta") == 5
    assert final.usage is not None and final.usage.output_tokens == 7
    assert final.usage.output_tokens_details.reasoning_tokens == 5

    with client.responses.stream(
        model="gpt-fake", input="What is the weather in Paris?", tools=[OPENAI_TOOL]
    ) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    call = next(item for item in final.output if item.type == "function_call")
    assert json.loads(call.arguments) == {"city": "Paris"}
    assert "response.function_call_arguments.delta" in kinds
    assert kinds.count("response.output_item.added") == kinds.count("response.output_item.done")


def test_responses_created_with_stream_true(fake_llm: StartFake) -> None:
    llm = fake_llm(WEATHER)
    events = list(openai_client(llm).responses.create(model="m", input="hello", stream=True))
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == "no script for that"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    done = events[-1]
    assert done.type == "response.completed" and done.response.usage is not None
    assert llm.requests[0]["stream"] is True


def test_responses_errors_and_a_reply_cut_short(fake_llm: StartFake) -> None:
    llm = fake_llm(WEATHER)
    client = openai_client(llm)
    try:
        client.responses.create(model="m", input="busy")
        raise AssertionError("a scripted 429 must raise")
    except openai.RateLimitError as error:
        assert "slow down" in str(error)
    cut = client.responses.create(model="m", input="a long one")
    assert cut.status == "incomplete" and cut.incomplete_details is not None
    assert cut.incomplete_details.reason == "max_output_tokens"


# --- Anthropic Messages --------------------------------------------------------------------------


def test_messages_whole_with_a_tool_use_and_its_result(fake_llm: StartFake) -> None:
    llm = fake_llm(WEATHER)
    client = anthropic_client(llm)
    question: Any = {"role": "user", "content": "What is the weather in Paris?"}
    first = client.messages.create(
        model="claude-fake", max_tokens=100, messages=[question], tools=[ANTHROPIC_TOOL]
    )
    assert first.stop_reason == "tool_use"
    uses = [block for block in first.content if block.type == "tool_use"]
    assert [(use.name, use.input) for use in uses] == [("get_weather", {"city": "Paris"})]
    assert first.usage.input_tokens > 0 and first.usage.output_tokens == 2

    result: Any = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": uses[0].id, "content": RESULT}],
    }
    second = client.messages.create(
        model="claude-fake",
        max_tokens=100,
        system="You are a weather bot.",
        messages=[question, {"role": "assistant", "content": first.content}, result],
        tools=[ANTHROPIC_TOOL],
    )
    assert second.stop_reason == "end_turn"
    assert [block.type for block in second.content] == ["text"]
    assert second.content[0].type == "text" and second.content[0].text == "It is 18 °C in Paris."
    assert (
        llm.apis == ["messages", "messages"]
        and llm.requests[1]["system"] == "You are a weather bot."
    )


def test_messages_streamed_as_typed_events(fake_llm: StartFake) -> None:
    llm = fake_llm(WEATHER)
    client = anthropic_client(llm)
    question: Any = {"role": "user", "content": "What is the weather in Paris?"}
    # the SDK's stream helper accumulates the blocks, parsing the tool's input_json_delta pieces
    with client.messages.stream(
        model="claude-fake", max_tokens=100, messages=[question], tools=[ANTHROPIC_TOOL]
    ) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_message()
    use = next(block for block in final.content if block.type == "tool_use")
    assert (use.name, use.input) == ("get_weather", {"city": "Paris"})
    assert final.stop_reason == "tool_use" and final.usage.output_tokens == 2
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert {"content_block_start", "content_block_stop", "message_delta"} <= set(kinds)

    thinker: Any = {"role": "user", "content": "think first"}
    with client.messages.stream(model="claude-fake", max_tokens=100, messages=[thinker]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "Done thinking."
    assert [block.type for block in final.content] == ["thinking", "text"]
    assert final.content[0].type == "thinking"
    assert final.content[0].thinking == "Let me think it over."


def test_messages_created_with_stream_true_and_errors(fake_llm: StartFake) -> None:
    llm = fake_llm(WEATHER)
    client = anthropic_client(llm)
    hello: Any = {"role": "user", "content": "hello"}
    events = list(client.messages.create(model="m", max_tokens=9, messages=[hello], stream=True))
    text = "".join(
        e.delta.text
        for e in events
        if e.type == "content_block_delta" and e.delta.type == "text_delta"
    )
    assert text == "no script for that"
    assert events[0].type == "message_start" and events[0].message.usage.input_tokens > 0
    for words, error in (
        ("busy", anthropic.RateLimitError),
        ("overloaded", anthropic.APIStatusError),
    ):
        try:
            client.messages.create(
                model="m", max_tokens=9, messages=[{"role": "user", "content": words}]
            )
            raise AssertionError(f"a scripted error must raise {error.__name__}")
        except error as raised:
            assert isinstance(raised, anthropic.APIStatusError)
            body = raised.body if isinstance(raised.body, dict) else {}
            assert body.get("type") == "error"


def test_scripted_faults_reach_both_apis(fake_llm: StartFake) -> None:
    llm = fake_llm(
        {
            "replies": [
                {"match": "reset", "fault": "reset"},
                {"match": "cut", "content": "one two three four five six", "fault": "truncate"},
            ]
        }
    )
    try:
        openai_client(llm).responses.create(model="m", input="reset")
        raise AssertionError("a reset connection must raise")
    except openai.APIConnectionError:
        pass
    cut: Any = {"role": "user", "content": "cut"}
    # the SDK's own HTTP package (httpx2) says the body ended before its end
    with (
        pytest.raises(Exception, match="incomplete chunked read"),
        anthropic_client(llm).messages.stream(model="m", max_tokens=9, messages=[cut]) as stream,
    ):
        "".join(stream.text_stream)
    assert llm.apis == ["responses", "messages"]


def test_a_request_nested_deep_is_answered(fake_llm: StartFake) -> None:
    llm = fake_llm({})
    depth = 450  # 900 levels of JSON: Python reads them, a recursive walk of them would not
    content = '[{"type": "text", "text": ' * depth + '"deep"' + "}]" * depth
    body = '{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": %s}]}'
    reply = httpx.post(f"{llm.url}/messages", content=(body % content).encode())
    assert reply.status_code == 200 and reply.json()["content"][0]["text"] == "OK"
