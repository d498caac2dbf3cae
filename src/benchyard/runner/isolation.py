"""Which sandbox a run uses and what each scenario asks of it, and the refusal to run agent
commands or model-written code on the host unless the user allows it (`--allow-unsandboxed`)."""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from benchyard.errors import BenchyardError
from benchyard.runner.store_address import store_endpoints, store_on_this_host
from benchyard.sandbox.allowlist import HostPaths, host_paths
from benchyard.sandbox.base import Sandbox
from benchyard.sandbox.limits import (
    DEFAULT_MAX_PROCESSES,
    DEFAULT_MEMORY_MB,
    ResourceLimits,
    SandboxRequest,
)
from benchyard.sandbox.network import Egress, is_mode, parse_destinations
from benchyard.sandbox.registry import SandboxOptions, build_sandbox, why_no_default_sandbox
from benchyard.store.lite import DEFAULT_DB_DIR, plain_sqlite_file

if TYPE_CHECKING:
    from benchyard.agents.base import Agent
    from benchyard.runner.execute import RunSettings
    from benchyard.spec.loader import Benchmark
    from benchyard.spec.models import Scenario


class UnsandboxedRefused(BenchyardError):
    """Agent commands or model-written code would run on the host without the user's say-so."""


def open_sandbox(
    settings: RunSettings,
    benchmark: Benchmark,
    agent: Agent,
    store_url: str | None = None,
    scenarios: Sequence[Scenario] | None = None,
) -> Sandbox:
    """The run's sandbox, ready: refused when unsandboxed code is not allowed, SandboxUnavailable
    when it cannot work here or a scenario asks for what it cannot give. Only the `scenarios` the
    run will execute (those its filters and limit selected; default: all) are looked at."""
    needs = scenario_needs(benchmark, scenarios)
    _refuse_unsandboxed(settings, agent, needs)
    _refuse_store_on_shared_network(settings, store_url, needs)
    if not _work_described(agent, needs):
        # Nothing will run in it (an in-process agent, no code checks): skip probing the machine.
        return build_sandbox("none", SandboxOptions())
    host = host_paths_for(settings, benchmark, agent, store_url)
    sandbox = _opened(settings.sandbox, host)
    sandbox.check_requests(needs.requests)
    return sandbox


@dataclass(frozen=True)
class ScenarioNeeds:
    """What the scenarios a run executes ask of its sandbox, read in one pass over them: a
    benchmark's scenarios are read from their files when asked for (spec/scenario_index.py), so
    each pass over thousands of them reads and validates each again."""

    requests: frozenset[SandboxRequest]  # request_for each scenario
    check_types: frozenset[str]  # the types of the scenarios' checks


def scenario_needs(
    benchmark: Benchmark, scenarios: Sequence[Scenario] | None = None
) -> ScenarioNeeds:
    """The needs of the `scenarios` a run executes (default: all of the benchmark's)."""
    chosen = benchmark.scenarios if scenarios is None else scenarios
    requests: set[SandboxRequest] = set()
    check_types: set[str] = set()
    for scenario in chosen:
        requests.add(request_for(benchmark, scenario))
        check_types.update(spec.type for spec in scenario.checks)
    return ScenarioNeeds(frozenset(requests), frozenset(check_types))


@functools.lru_cache(maxsize=16)
def _opened(name: str, host: HostPaths) -> Sandbox:
    """One sandbox per kind and view in a process: opening one probes the machine, and a run is
    checked before it is recorded, then opened again by its worker."""
    return build_sandbox(name, SandboxOptions(host))


def host_paths_for(
    settings: RunSettings, benchmark: Benchmark, agent: Agent | None, store_url: str | None
) -> HostPaths:
    """What the run's sandboxes show of the host beyond its system (sandbox/allowlist.py): the
    agent's own code and the declared readable paths; never the benchmark, the store, the work
    root, nor the project directory whole."""
    named = tuple(getattr(agent, "readable_paths", ()))  # agent kinds without a command: none
    declared = (
        *getattr(agent, "declared_readable", ()),
        *(benchmark.root / path for path in benchmark.manifest.sandbox.readable),
    )
    return host_paths(named, declared, sealed_paths(settings, benchmark, store_url), [Path.cwd()])


def refuse_unsandboxed(
    settings: RunSettings,
    benchmark: Benchmark,
    agent: Agent,
    scenarios: Sequence[Scenario] | None = None,
) -> None:
    """UnsandboxedRefused when `--sandbox none` would run agent commands or model-written code
    for the `scenarios` selected (default: all) without `--allow-unsandboxed`."""
    if settings.sandbox != "none" or settings.allow_unsandboxed:
        return
    _refuse_unsandboxed(settings, agent, scenario_needs(benchmark, scenarios))


def _refuse_unsandboxed(settings: RunSettings, agent: Agent, needs: ScenarioNeeds) -> None:
    if settings.sandbox != "none" or settings.allow_unsandboxed:
        return
    what = _work_described(agent, needs)
    missing = why_no_default_sandbox()
    if what and missing:
        raise UnsandboxedRefused(
            f"refusing to run {what} on this host without a sandbox: {missing}; or choose "
            "--sandbox docker, or pass --allow-unsandboxed to run it unconfined"
        )
    if what:
        raise UnsandboxedRefused(
            f"refusing to run {what} on this host without a sandbox (--sandbox none); choose "
            "--sandbox bwrap or docker, or pass --allow-unsandboxed to run it unconfined"
        )


def refuse_store_on_shared_network(
    settings: RunSettings,
    benchmark: Benchmark,
    store_url: str | None,
    scenarios: Sequence[Scenario] | None = None,
) -> None:
    """With the network, a bwrap sandbox shares the host's, loopback included, and a docker
    container reaches the host's other addresses: a store listening where the sandbox reaches
    would be an agent's to write (its own verdicts) whenever it takes no password."""
    _refuse_store_on_shared_network(settings, store_url, scenario_needs(benchmark, scenarios))


def _refuse_store_on_shared_network(
    settings: RunSettings, store_url: str | None, needs: ScenarioNeeds
) -> None:
    refuse_store_among_destinations(settings, store_url)
    networked = settings.allow_network or any(request.network for request in needs.requests)
    if not networked or not store_url:
        return
    if settings.sandbox == "docker":
        refuse_store_on_docker_network(store_url)
        return
    here = store_on_this_host(store_url) if settings.sandbox == "bwrap" else None
    if here is not None:
        raise UnsandboxedRefused(
            f"refusing to give agents the network in the bwrap sandbox: it shares this host's "
            f"network, loopback included, and the store is on this host ({here}), so an agent "
            "could write its own verdicts; choose --sandbox docker (its network does not reach "
            "the host's loopback) or a store on another host that requires a password"
        )


def refuse_store_among_destinations(settings: RunSettings, store_url: str | None) -> None:
    """UnsandboxedRefused when `--network HOST:PORT,...` names the store's server (a name
    resolving to it, a port of a store on this host): no agent may reach it."""
    if is_mode(settings.network) or not store_url or store_url.startswith("sqlite"):
        return
    store = store_endpoints(store_url)
    for destination in parse_destinations(settings.network):
        if store.meets(store_endpoints(f"tcp://{destination}")):
            raise UnsandboxedRefused(
                f"refusing --network {destination}: it reaches the store's server, which no "
                "agent may reach (with it, an agent could write its own verdicts)"
            )


def egress_for(settings: RunSettings, store_url: str | None) -> Egress | None:
    """What the egress proxy of the run's agents allows (`--network HOST:PORT,...`) and refuses
    whatever is named (the store); None under a mode."""
    if is_mode(settings.network):
        return None
    server = store_url if store_url and not store_url.startswith("sqlite") else None
    store = store_endpoints(server) if server else None
    return Egress(parse_destinations(settings.network), store)


def refuse_store_url(agent: Agent, store_url: str | None) -> None:
    """AgentConfigError when a command agent would be given `store_url` (or BENCHYARD_DB)."""
    from benchyard.agents.registry import AgentConfigError, as_command_agent

    command_agent = as_command_agent(agent)
    if command_agent is None:
        return
    from benchyard.agents.command import STORE_VARIABLE  # imported already: it built the agent

    stores = [store_url, os.environ.get(STORE_VARIABLE)]
    problem = command_agent.config.store_url_problem(stores) or _store_in_variables(agent, stores)
    if problem:
        raise AgentConfigError(f"agent '{agent.name}': {problem}")


def _store_in_variables(agent: Agent, store_urls: Sequence[str | None]) -> str | None:
    """What is wrong when a variable the agent is given holds a URL of the store's server under
    another name (another spelling of its host, an address it resolves to, its socket)."""
    config = getattr(agent, "config", None)
    given = {
        **{name: os.environ.get(name, "") for name in getattr(config, "pass_env", ())},
        **getattr(config, "env", {}),
    }
    stores = [store_endpoints(url) for url in store_urls if url and not url.startswith("sqlite")]
    for name, value in given.items():
        for word in value.split():
            if "://" in word and any(store.meets(store_endpoints(word)) for store in stores):
                return (
                    f"{name} holds a URL of the store's server, which is never given to an "
                    "agent: with it, an agent could rewrite its own verdicts"
                )
    return None


def _work_described(agent: Agent, needs: ScenarioNeeds) -> str:
    """What a run of `agent` on scenarios with these needs would execute in its sandbox: agent
    commands, model-written code, or ''."""
    from benchyard.checks.registry import get_check_type

    code_checks = sorted(
        name
        for name in needs.check_types
        if (found := get_check_type(name)) is not None and found.needs_code
    )
    parts = ["agent commands"] if agent.needs_workdir else []
    if code_checks:
        parts.append(f"model-written code (checks: {', '.join(code_checks)})")
    return " and ".join(parts)


def sealed_paths(
    settings: RunSettings, benchmark: Benchmark, store_url: str | None = None
) -> tuple[Path, ...]:
    """What no sandbox ever shows: the benchmark (its references, hidden tests, VCS metadata),
    the store's files, and the work root (every attempt's workdir)."""
    sealed = [benchmark.root.resolve(), *store_files(store_url)]
    if settings.work_root:
        sealed.append(Path(settings.work_root).resolve())
    return tuple(sealed)


def refuse_store_on_docker_network(store_url: str) -> None:
    """With the network, a container on docker's bridge reaches every address of this host but
    its loopback: a store listening on one of them would be an agent's to write."""
    here = store_on_this_host(store_url, through_loopback=False)
    if here is not None:
        raise UnsandboxedRefused(
            f"refusing to give agents the network in the docker sandbox: a container on its "
            f"bridge reaches this host's addresses, and the store is on this host ({here}), so "
            "an agent could write its own verdicts; reach the store through 127.0.0.1 (which "
            "containers do not reach) or use a store on another host that requires a password"
        )


def store_files(url: str | None) -> tuple[Path, ...]:
    """A SQLite store's files (its directory when it is benchyard's own `.benchyard`); a server's
    Unix sockets (their directories), never to be shown."""
    if url and not url.startswith("sqlite"):
        return store_endpoints(url).sockets
    if not url:
        return ()
    database: str | None = str(plain_sqlite_file(url) or "")
    if not database:
        from sqlalchemy.engine import make_url

        database = make_url(url).database
    if not database or database == ":memory:":
        return ()
    path = Path(database).resolve()
    if path.parent.name == DEFAULT_DB_DIR:
        return (path.parent,)
    return tuple(path.with_name(path.name + suffix) for suffix in ("", "-wal", "-shm", "-journal"))


def request_for(
    benchmark: Benchmark, scenario: Scenario, *, network: bool = False, bridge: bool = True
) -> SandboxRequest:
    """The scenario's `sandbox` and `limits`, over its benchmark's, over benchyard's defaults;
    `network` gives the network even where the scenario does not ask for it, `bridge` lets an
    agent's model bridge be served (not under `--network none`)."""
    asked, general = scenario.sandbox, benchmark.manifest.sandbox
    limits, defaults = scenario.limits, benchmark.manifest.defaults
    asked_network = asked.network if asked.network is not None else general.network
    return SandboxRequest(
        image=asked.image or general.image,
        network=network or bool(asked_network),
        bridge=bridge,
        limits=ResourceLimits(
            memory_mb=limits.memory_mb or defaults.memory_mb or DEFAULT_MEMORY_MB,
            max_processes=limits.max_processes or defaults.max_processes or DEFAULT_MAX_PROCESSES,
            cpu_sec=limits.cpu_sec or defaults.cpu_sec,
            cpus=limits.cpus or defaults.cpus,
        ),
    )
