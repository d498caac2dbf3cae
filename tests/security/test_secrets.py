"""Hostile agents: stealing secrets or writing the store.

An agent must never receive benchyard's environment (provider keys, the store's URL: with it, an
agent reached PostgreSQL and rewrote its own verdicts); it gets a minimal environment plus what its
configuration gives it (`env`, `pass_env`). The values of configured secrets (provider keys, header
variables, credential headers, `pass_env` variables) never reach the store or the terminal, even
when a server echoes them in an error or the agent prints them."""

from __future__ import annotations

import json
import sys
import zlib
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import MetaData, create_engine, select

from benchyard import secrets
from benchyard.agents.command import SYSTEM_PATH
from benchyard.providers.fake_server import FakeLLM
from benchyard.report.gate import EXIT_NOTHING_GRADED
from benchyard.store.engine import with_driver
from benchyard.store.store import Store
from tests.integration.providers.conftest import FAST_RETRIES, StartFake
from tests.support import Cli, write_benchmark

PROVIDER_KEY = "sk-provider-7f3a9c2e41"
HEADER_KEY = "hk-header-5b8d0e6f92"
LITERAL_TOKEN = "tok-literal-1c4e7a9b35"
AGENT_KEY = "sk-agent-2d6f8b0c47"
JUDGE_KEY = "sk-judge-9e1a3c5d70"
HOST_ONLY = "host-only-8a2c4e6f13"
SECRETS = (PROVIDER_KEY, HEADER_KEY, LITERAL_TOKEN, AGENT_KEY, JUDGE_KEY)
# What /bin/sh and Python may add to an environment on their own.
SHELL_ADDED = {"PWD", "OLDPWD", "SHLVL", "_"}
PROTOCOL = {
    "BENCHYARD_INSTRUCTION_FILE",
    "BENCHYARD_MESSAGES_FILE",
    "BENCHYARD_TRAJECTORY_FILE",
    "BENCHYARD_OUTPUT_FILE",
    "BENCHYARD_SCENARIO_ID",
    "BENCHYARD_ATTEMPT_ID",
    "BENCHYARD_TURN",
    "BENCHYARD_WORKDIR",
}

# Shows its whole environment as its answer, and its key everywhere else it can write.
LEAKING_AGENT = """
import json, os, sys
key = os.environ.get("AGENT_KEY", "none")
print("my key is", key)
print("stderr key", key, file=sys.stderr)
with open(os.environ["BENCHYARD_TRAJECTORY_FILE"], "a") as log:
    log.write(json.dumps({"kind": "log", "content": "key " + key, "role": key}) + "\\n")
open(os.environ["BENCHYARD_OUTPUT_FILE"], "w").write(json.dumps(dict(os.environ)))
"""


@pytest.fixture(autouse=True)
def empty_registry() -> Iterator[None]:
    secrets.forget_all()
    yield
    secrets.forget_all()


@pytest.fixture
def fake_llm() -> Iterator[StartFake]:
    with ExitStack() as stack:
        yield lambda script: stack.enter_context(FakeLLM(script))


def stored_text(db_url: str) -> str:
    """Every value of every row of every table, trajectories decompressed; for SQLite also the
    database files' raw bytes."""
    engine = create_engine(with_driver(db_url))
    tables = MetaData()
    tables.reflect(engine)
    parts: list[str] = []
    with engine.connect() as connection:
        for table in tables.sorted_tables:
            for row in connection.execute(select(table)):
                parts += [_text(value) for value in row]
    engine.dispose()
    if db_url.startswith("sqlite:///"):
        path = Path(db_url.removeprefix("sqlite:///"))
        for file in path.parent.glob(path.name + "*"):
            parts.append(file.read_bytes().decode("latin-1"))
    return "\n".join(parts)


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        try:
            return zlib.decompress(value).decode("utf-8", errors="replace")
        except zlib.error:
            return value.decode("latin-1")
    return str(value)


def printed(cli: Cli, scenario_id: str) -> str:
    """What `show` (the run and the scenario in full) and `report` (each format) print."""
    outputs = [cli("show", "latest"), cli("show", "latest", scenario_id)]
    outputs += [cli("report", "latest", "--format", kind) for kind in ("table", "json", "md")]
    for result in outputs:
        assert result.exit_code == 0, result.output
    return "\n".join(result.output for result in outputs)


def write_config(cli: Cli, config: dict[str, Any]) -> None:
    (cli.cwd / "benchyard.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def test_an_agent_gets_a_minimal_environment_and_never_the_store(
    tmp_path: Path, cli: Cli, store: Store, monkeypatch: pytest.MonkeyPatch, fake_llm: StartFake
) -> None:
    monkeypatch.setenv("BENCHYARD_DB", cli.db_url)  # what the agent used to reach the store
    monkeypatch.setenv("PROVIDER_KEY", PROVIDER_KEY)
    monkeypatch.setenv("HOST_ONLY", HOST_ONLY)
    monkeypatch.setenv("AGENT_KEY", AGENT_KEY)
    monkeypatch.setenv("JUDGE_KEY", JUDGE_KEY)
    judge = fake_llm({"default": {"status": 401, "content": "bad key", "echo_headers": True}})
    agent = tmp_path / "agent.py"
    agent.write_text(LEAKING_AGENT)
    write_config(
        cli,
        {
            "providers": {
                "llm": {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "PROVIDER_KEY"},
                "judge": {"base_url": judge.url, "api_key_env": "JUDGE_KEY", **FAST_RETRIES},
            },
            "judge": {"provider": "judge", "model": "judge-model"},
            "agents": {
                "leaky": {
                    "kind": "command",
                    "command": f"{sys.executable} {agent}",
                    "env": {"GREETING": "hello"},
                    "pass_env": ["AGENT_KEY"],
                }
            },
        },
    )
    checks = [{"type": "llm_rubric", "criteria": ["The answer is an environment."]}]
    bench = write_benchmark(tmp_path / "bench", [{"id": "env", "stimulus": "hi", "checks": checks}])
    result = cli("run", str(bench), "--agent", "leaky", "--retries", "0", "-q")
    assert result.exit_code == EXIT_NOTHING_GRADED, result.output  # its one attempt is an error
    (attempt,) = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    environment = json.loads(attempt.answer or "{}")
    assert set(environment) - SHELL_ADDED == {
        "PATH", "HOME", "LANG", "LC_ALL", "TERM", "GREETING", "AGENT_KEY", *PROTOCOL
    }  # fmt: skip
    assert environment["PATH"] == SYSTEM_PATH
    assert environment["GREETING"] == "hello"
    assert environment["AGENT_KEY"] == secrets.REDACTED  # it had the key, and it was scrubbed
    assert not Path(environment["HOME"]).is_relative_to(environment["BENCHYARD_WORKDIR"])
    assert not [value for value in environment.values() if cli.db_url in value]
    # The judge refused its key and echoed it: the attempt is an error with the echo scrubbed.
    assert judge.headers[0]["authorization"] == f"Bearer {JUDGE_KEY}"
    assert (attempt.verdict, attempt.failure_kind) == ("error", "provider_rejected")
    assert "HTTP 401" in (attempt.cause or "") and secrets.REDACTED in (attempt.cause or "")
    assert f"my key is {secrets.REDACTED}" in (attempt.stdout or "")
    assert f"stderr key {secrets.REDACTED}" in (attempt.stderr or "")
    events = [(e.content, e.role) for e in attempt.trajectory or []]
    assert (f"key {secrets.REDACTED}", secrets.REDACTED) in events
    found = stored_text(cli.db_url) + printed(cli, "env")
    assert secrets.REDACTED in stored_text(cli.db_url)  # the rows were read, scrubbed
    for value in (AGENT_KEY, JUDGE_KEY, PROVIDER_KEY, HOST_ONLY):
        assert value not in found


def test_a_provider_that_echoes_its_keys_in_a_401_leaves_no_trace(
    tmp_path: Path, cli: Cli, store: Store, monkeypatch: pytest.MonkeyPatch, fake_llm: StartFake
) -> None:
    monkeypatch.setenv("PROVIDER_KEY", PROVIDER_KEY)
    monkeypatch.setenv("HEADER_KEY", HEADER_KEY)
    llm = fake_llm({"default": {"status": 401, "content": "invalid key", "echo_headers": True}})
    provider = {
        "base_url": llm.url,
        "api_key_env": "PROVIDER_KEY",
        "headers_env": {"X-Api-Key": "HEADER_KEY"},
        "headers": {"X-Org-Token": LITERAL_TOKEN, "X-Trace": "visible"},
        **FAST_RETRIES,
    }
    write_config(
        cli,
        {
            "providers": {"fake": provider},
            "agents": {"model": {"kind": "openai", "provider": "fake", "model": "agent-model"}},
        },
    )
    bench = write_benchmark(
        tmp_path / "bench",
        [{"id": "q", "stimulus": "hi", "checks": [{"type": "equals", "value": "x"}]}],
    )
    assert cli("run", str(bench), "--agent", "model", "-q").exit_code == EXIT_NOTHING_GRADED
    sent = llm.headers[0]
    assert sent["authorization"] == f"Bearer {PROVIDER_KEY}"
    assert (sent["x-api-key"], sent["x-org-token"]) == (HEADER_KEY, LITERAL_TOKEN)
    run = store.resolve_run("latest")
    (attempt,) = store.attempts(run.id, with_evidence=True)
    assert (attempt.verdict, attempt.failure_kind) == ("error", "provider_rejected")
    assert "HTTP 401" in (attempt.cause or "") and "invalid key" in (attempt.cause or "")
    assert f"Bearer {secrets.REDACTED}" in (attempt.cause or "")  # the echo was there, scrubbed
    recorded = run.agent_config["provider"]
    assert recorded["headers"] == {"X-Org-Token": secrets.REDACTED, "X-Trace": "visible"}
    assert recorded["headers_env"] == {"X-Api-Key": "HEADER_KEY"}
    found = stored_text(cli.db_url) + printed(cli, "q")
    assert secrets.REDACTED in stored_text(cli.db_url)  # the rows were read, scrubbed
    for value in (PROVIDER_KEY, HEADER_KEY, LITERAL_TOKEN):
        assert value not in found
    # The literal credential header was not recorded: a rerun says how to give it instead.
    rerun = cli("rerun", "latest", "--failed", "-q")
    assert rerun.exit_code == 2
    assert "header 'X-Org-Token' was recorded redacted" in rerun.output
    assert "headers_env" in rerun.output


@pytest.mark.parametrize(
    "agent",
    [
        {"env": {"BENCHYARD_DB": "sqlite:///elsewhere.db"}},
        {"pass_env": ["BENCHYARD_DB"]},
        {"env": {"DSN": "STORE_URL"}},
        {"pass_env": ["MY_DSN"]},
    ],
    ids=["env-name", "pass-env-name", "env-value", "pass-env-value"],
)
def test_the_store_is_never_given_to_an_agent(
    tmp_path: Path,
    cli: Cli,
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    agent: dict[str, Any],
) -> None:
    monkeypatch.setenv("MY_DSN", cli.db_url)
    if agent.get("env", {}).get("DSN"):
        agent = {"env": {"DSN": cli.db_url}}
    write_config(cli, {"agents": {"a": {"kind": "command", "command": "echo x", **agent}}})
    bench = write_benchmark(
        tmp_path / "bench",
        [{"id": "q", "stimulus": "hi", "checks": [{"type": "equals", "value": "x"}]}],
    )
    result = cli("run", str(bench), "--agent", "a", "-q")
    assert result.exit_code == 2, result.output
    assert "never given to an agent" in result.output
    assert "Traceback" not in result.output
    assert store.list_runs() == []


def test_scrubbing_reaches_every_text_of_a_try() -> None:
    """What one_try scrubs before a try is stored or shown: the record, and the failure whose
    message becomes its cause."""
    from datetime import UTC, datetime

    from benchyard.runner.failures import AttemptFailure, FailureKind
    from benchyard.runner.trajectory import Event
    from benchyard.store.records import AttemptRecord, CheckRecord

    secrets.register(AGENT_KEY, "short")  # under MIN_SECRET_CHARS: ignored
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    event = Event(kind="log", content=f"k={AGENT_KEY}", data={"nested": [{"v": AGENT_KEY}]})
    record = AttemptRecord(
        id="a", run_id="r", scenario_id="s", category="c", epoch=1, try_number=1,
        verdict="failed", score=0.0, started_at=moment, finished_at=moment, duration_sec=1.0,
        answer=AGENT_KEY, answers=[AGENT_KEY, "ok"], stdout=f"x{AGENT_KEY}y", stderr=AGENT_KEY,
        patch=f"+{AGENT_KEY}\n", trajectory=[event], failure_kind=FailureKind.AGENT_CRASH,
        checks=[CheckRecord(1, "equals", "equals", False, 0.0, 1.0, f"got {AGENT_KEY}")],
    )  # fmt: skip
    failure = AttemptFailure(FailureKind.AGENT_CRASH, f"crashed: {AGENT_KEY}")
    secrets.scrub_in_place(record, failure)
    flat = json.dumps(
        [record.answer, record.answers, record.stdout, record.stderr, record.patch,
         event.to_dict(), record.checks[0].reason, failure.message, str(failure)]
    )  # fmt: skip
    assert AGENT_KEY not in flat
    assert flat.count(secrets.REDACTED) == 10
    assert record.failure_kind is FailureKind.AGENT_CRASH  # left as it was
    assert secrets.scrub("short and sweet") == "short and sweet"


URL_PASSWORD = "pw-in-url-4e8a1c7f"
URL_QUERY_KEY = "qk-in-url-9b3d5f2a"


@pytest.mark.parametrize(
    ("reply", "with_query"),
    [
        ({"status": 401, "content": "bad key", "echo_headers": True}, False),
        ({"status": 500, "content": "server fault", "echo_headers": True}, False),
        ({"content": "x"}, False),
        ({"content": "x"}, True),
    ],
    ids=["401", "500", "200", "query-key"],
)
def test_credentials_in_a_provider_url_leave_no_trace(
    tmp_path: Path,
    cli: Cli,
    store: Store,
    fake_llm: StartFake,
    reply: dict[str, Any],
    with_query: bool,
) -> None:
    """`https://user:pass@host/v1` and `?api_key=` were stored in the run's settings and printed
    (by `status`, in causes, in `show`); a server echoing the Basic header leaked them too."""
    llm = fake_llm({"default": reply})
    base_url = llm.url.replace("http://", f"http://bench-user:{URL_PASSWORD}@")
    if with_query:
        base_url += f"?api_key={URL_QUERY_KEY}&model=m"
    write_config(
        cli,
        {
            "providers": {"fake": {"base_url": base_url, **FAST_RETRIES}},
            "agents": {"model": {"kind": "openai", "provider": "fake", "model": "agent-model"}},
        },
    )
    bench = write_benchmark(
        tmp_path / "bench",
        [{"id": "q", "stimulus": "hi", "checks": [{"type": "equals", "value": "x"}]}],
    )
    ran = cli("run", str(bench), "--agent", "model")
    status = cli("status", db=False)
    run = store.resolve_run("latest")
    recorded = run.agent_config["provider"]["base_url"]
    assert recorded.startswith(f"http://{secrets.REDACTED}@127.0.0.1:")
    assert (f"api_key={secrets.REDACTED}" in recorded) is with_query
    found = "\n".join([ran.output, status.output, stored_text(cli.db_url), printed(cli, "q")])
    if reply.get("status") == 401:  # the server got the credentials and echoed them, scrubbed
        assert llm.headers[0]["authorization"].startswith("Basic ")
        (attempt,) = store.attempts(run.id)
        assert "HTTP 401" in (attempt.cause or "") and secrets.REDACTED in (attempt.cause or "")
    for value in (URL_PASSWORD, URL_QUERY_KEY, llm.headers[0]["authorization"].split()[-1]):
        assert value not in found
    assert secrets.REDACTED in found
