"""The `openai` agent's configuration in benchyard.yaml and its time limit."""

from __future__ import annotations

from pathlib import Path

import yaml

from benchyard.store.store import Store
from tests.integration.providers.conftest import StartFake, write_project
from tests.support import Cli, scenario, write_benchmark


def test_an_unknown_provider_is_one_clear_line(tmp_path: Path, cli: Cli) -> None:
    config = {"agents": {"model": {"kind": "openai", "provider": "nowhere", "model": "m"}}}
    (cli.cwd / "benchyard.yaml").write_text(yaml.safe_dump(config))
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "x")])
    result = cli("run", str(bench), "--agent", "model")
    assert result.exit_code == 2
    assert result.output.strip() == (
        "error: no provider named 'nowhere' (declared under providers: none)"
    )


def test_bad_agent_and_judge_settings_name_the_field(tmp_path: Path, cli: Cli) -> None:
    write_project(cli.cwd, "http://127.0.0.1:9/v1", agent={"max_tokens": 0})
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "x")])
    result = cli("run", str(bench), "--agent", "model")
    assert result.exit_code == 2
    assert "agent 'model': max_tokens: Input should be greater than or equal to 1" in result.output
    write_project(cli.cwd, "http://127.0.0.1:9/v1", judge={"parse_retries": -1})
    result = cli("run", str(bench), "--agent", "model")
    assert result.exit_code == 2
    assert "judge in benchyard.yaml: parse_retries: Input should be greater than" in result.output


def test_the_recorded_config_is_self_contained_and_keyless(
    tmp_path: Path, cli: Cli, store: Store, fake_llm: StartFake, monkeypatch
) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-secret")
    llm = fake_llm({"default": {"content": "x"}})
    write_project(cli.cwd, llm.url)
    config = yaml.safe_load((cli.cwd / "benchyard.yaml").read_text())
    config["providers"]["fake"]["api_key_env"] = "FAKE_KEY"
    (cli.cwd / "benchyard.yaml").write_text(yaml.safe_dump(config))
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "x")])
    assert cli("run", str(bench), "--agent", "model", "-q").exit_code == 0
    run = store.resolve_run("latest")
    assert run.agent_config["provider"]["base_url"] == llm.url
    assert run.agent_config["provider"]["api_key_env"] == "FAKE_KEY"
    assert run.agent_config["price"] == {"input_per_mtok": 1.0, "output_per_mtok": 2.0}
    assert "sk-secret" not in str(run.agent_config) + str(run.settings)


def test_a_slow_model_times_out(
    tmp_path: Path, cli: Cli, store: Store, fake_llm: StartFake
) -> None:
    # The reply comes after the attempt's time: the provider was working, the model was slow.
    llm = fake_llm({"default": {"content": "late", "delay_sec": 1.5}})
    write_project(cli.cwd, llm.url)
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "late")])
    cli("run", str(bench), "--agent", "model", "--timeout", "0.3", "-q")
    (attempt,) = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    assert (attempt.verdict, attempt.failure_kind) == ("timeout", "agent_timeout")
    kinds = [(e.kind, e.role) for e in attempt.trajectory or []]
    assert kinds[0] == ("message", "user") and kinds[-1] == ("error", None)  # ... the timeout
    assert set(kinds[1:-1]) <= {("message", "assistant")}  # the late reply, when it was read
