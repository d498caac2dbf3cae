"""`benchyard status`: one line per provider (up with its models, or down and why), per `openai`
agent whose model its provider does not serve, and per benchmark with its size by profile."""

from __future__ import annotations

import socket

import yaml

from tests.integration.speed.conftest import StartFake
from tests.support import Cli, write_benchmark


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_status_says_what_is_up_and_what_it_serves(fake_llm: StartFake, cli: Cli) -> None:
    llm = fake_llm({"models": [{"id": "qwen-7b"}, {"id": "llama-8b"}]})
    down = f"http://127.0.0.1:{_closed_port()}/v1"
    config = {
        "providers": {"local": {"base_url": llm.url}, "gone": {"base_url": down}},
        "agents": {
            "qwen": {"kind": "openai", "provider": "local", "model": "qwen-7b"},
            "typo": {"kind": "openai", "provider": "local", "model": "qwen-7B"},
        },
    }
    (cli.cwd / "benchyard.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    write_benchmark(
        cli.cwd / "mine",
        [
            {"id": f"s{i}", "category": f"c{i % 2}", "stimulus": "x", "reference": "x",
             "checks": [{"type": "equals", "value": "x"}]}
            for i in range(6)
        ],
    )  # fmt: skip

    result = cli("status", "--timeout", "2", db=False)

    assert result.exit_code == 3, result.output  # a provider down (docs/exit-codes.md)
    lines = result.output.splitlines()
    local = next(line for line in lines if line.startswith("provider local:"))
    assert "up at" in local and "2 models: qwen-7b, llama-8b" in local
    gone = next(line for line in lines if line.startswith("provider gone:"))
    assert "DOWN" in gone and "Connect" in gone
    assert any(line.startswith("agent typo: model 'qwen-7B' is not among") for line in lines)
    assert not any(line.startswith("agent qwen") for line in lines)
    hard = next(line for line in lines if line.startswith("benchmark hard "))
    assert "scenarios (profiles: quick 6, standard 18, full" in hard
    mine = next(line for line in lines if line.startswith("benchmark fixture-bench"))
    assert "6 scenarios (profiles: quick 4, standard 6, full 6)" in mine
