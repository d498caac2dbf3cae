"""benchyard's fake model server, over real HTTP: scripted replies keyed on the prompt,
streamed and whole, and `benchyard fake-llm` as a real process."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import httpx

from benchyard.providers.fake_server import FakeLLM
from tests.integration.providers.conftest import StartFake
from tests.support import Cli

SCRIPT = {
    "replies": [
        {"match": "ping", "model": "judge", "content": "judge pong"},
        {"match": "ping", "times": 1, "content": "first pong"},
        {"match": "ping", "content": "pong"},
        {"regex": r"\d+ \+ \d+", "content": "a sum", "reasoning": "adding up", "prompt_tokens": 9},
    ],
    "default": {"content": "no script for that"},
}


def ask(url: str, text: str, **body: object) -> httpx.Response:
    payload = {"model": "m", "messages": [{"role": "user", "content": text}], **body}
    return httpx.post(url + "/chat/completions", json=payload)


def test_replies_are_keyed_on_the_last_message(fake_llm: StartFake) -> None:
    llm = fake_llm(SCRIPT)
    contents = [
        ask(llm.url, text).json()["choices"][0]["message"]["content"]
        for text in ("PING", "ping", "hello")
    ]
    assert contents == ["first pong", "pong", "no script for that"]
    judged = ask(llm.url, "ping", model="judge").json()
    assert judged["choices"][0]["message"]["content"] == "judge pong"
    summed = ask(llm.url, "what is 2 + 3?").json()
    assert summed["choices"][0]["message"]["reasoning_content"] == "adding up"
    assert summed["usage"]["prompt_tokens"] == 9
    assert summed["usage"]["completion_tokens_details"]["reasoning_tokens"] == 2
    assert [r["messages"][0]["content"] for r in llm.requests][:2] == ["PING", "ping"]


def test_streamed_replies_are_server_sent_events(fake_llm: StartFake) -> None:
    llm = fake_llm(
        {
            "default": {
                "content": "one two three",
                "tool_calls": [{"name": "f", "arguments": {"x": 1}}],
            }
        }
    )
    response = ask(llm.url, "hi", stream=True, stream_options={"include_usage": True})
    lines = [line for line in response.text.splitlines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line[6:]) for line in lines[:-1]]
    content = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert content == "one two three"
    arguments = "".join(
        call["function"].get("arguments", "")
        for c in chunks
        if c["choices"]
        for call in c["choices"][0]["delta"].get("tool_calls", [])
    )
    assert json.loads(arguments) == {"x": 1}
    assert chunks[-1]["usage"]["completion_tokens"] > 0
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"


def test_routes_and_bad_requests(fake_llm: StartFake) -> None:
    llm = fake_llm({})
    assert httpx.get(llm.url + "/models").json()["data"][0]["id"] == "fake"
    assert httpx.get(llm.url + "/nowhere").status_code == 404
    bad = httpx.post(llm.url + "/chat/completions", content=b"{not json")
    assert bad.status_code == 400 and "invalid JSON body" in bad.json()["error"]["message"]


def test_errors_carry_retry_after(fake_llm: StartFake) -> None:
    llm = fake_llm({"default": {"status": 429, "retry_after_sec": 1.5}})
    response = ask(llm.url, "hi")
    assert response.status_code == 429 and response.headers["retry-after"] == "1.5"
    assert response.json()["error"]["type"] == "rate_limit_exceeded"


def test_fake_llm_command_serves_a_script(tmp_path: Path, storeless_cli: Cli) -> None:
    script = tmp_path / "replies.yaml"
    script.write_text("replies:\n  - match: ping\n    content: pong from a file\n")
    process = storeless_cli.process("fake-llm", "--port", "0", "--script", str(script))
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split(" at ")[1].strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        reply = ask(url, "ping").json()
        assert reply["choices"][0]["message"]["content"] == "pong from a file"
        response = httpx.post(f"{url}/responses", json={"model": "m", "input": "ping"}).json()
        assert response["output"][0]["content"][0]["text"] == "pong from a file"
        user = {"role": "user", "content": "ping"}
        message = {"model": "m", "max_tokens": 5, "messages": [user]}
        anthropic = httpx.post(f"{url}/messages", json=message).json()
        assert anthropic["content"] == [{"type": "text", "text": "pong from a file"}]
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:  # never leave the server behind: the assert says it
            process.kill()
            process.wait()
    assert process.returncode == 0


def test_a_bad_script_is_one_clear_line(tmp_path: Path, storeless_cli: Cli) -> None:
    script = tmp_path / "replies.yaml"
    script.write_text("replies:\n  - match: ping\n    contnet: pong\n")
    result = storeless_cli("fake-llm", "--script", str(script))
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: {script}: replies.0.contnet: Extra inputs are not permitted"
    ]


def test_it_serves_from_an_event_loop_too() -> None:
    import asyncio

    async def scenario() -> str:
        llm = FakeLLM({"default": {"content": "in-loop"}})
        await llm.start()
        try:
            async with httpx.AsyncClient() as http:
                body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
                reply = await http.post(llm.url + "/chat/completions", json=body)
            return str(reply.json()["choices"][0]["message"]["content"])
        finally:
            await llm.close()

    assert asyncio.run(scenario()) == "in-loop"
