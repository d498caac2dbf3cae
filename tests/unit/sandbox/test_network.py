"""Parsing `--network`: a mode, or HOST:PORT destinations written one way; every bad entry named
in a one-line error, on the command line with exit status 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchyard.runner.execute import RunSettings
from benchyard.runner.store_address import store_endpoints
from benchyard.sandbox.network import Destination, Egress, NetworkSpecError, canonical_network
from tests.support import Cli, scenario, write_benchmark


@pytest.mark.parametrize("mode", ["none", "bridge", "all"])
def test_a_mode_is_itself(mode: str) -> None:
    assert canonical_network(mode) == mode


def test_destinations_are_written_one_way() -> None:
    given = "PyPI.org:443, 10.0.0.5:8080,[::1]:80,pypi.org.:443,[0:0::1]:80"
    assert canonical_network(given) == "pypi.org:443,10.0.0.5:8080,[::1]:80"
    assert str(Destination("::1", 80)) == "[::1]:80"


@pytest.mark.parametrize(
    ("given", "named", "says"),
    [
        ("pypi.org", "'pypi.org'", "is not HOST:PORT"),
        ("pypi.org:443,", "an empty entry", "empty entry"),
        ("pypi.org:0", "'pypi.org:0'", "no port from 1 to 65535"),
        ("pypi.org:65536", "'pypi.org:65536'", "no port from 1 to 65535"),
        ("pypi.org:https", "'pypi.org:https'", "no port"),
        ("pypi.org:\uff14\uff14\uff13", "'pypi.org:\uff14\uff14\uff13'", "no port"),
        ("::1:80", "'::1:80'", "is not HOST:PORT"),
        ("[nope]:80", "'[nope]:80'", "no IPv6 address"),
        ("[10.0.0.1]:80", "'[10.0.0.1]:80'", "no IPv6 address"),
        ("[::g]:80", "'[::g]:80'", "no valid host name"),
        ("bad_host!:80", "'bad_host!:80'", "no valid host name"),
        ("-bad.org:80", "'-bad.org:80'", "no valid host name"),
        ("10.0.0.999:80", "'10.0.0.999:80'", "no valid host name"),
        ("bridge,pypi.org:443", "'bridge'", "give it alone"),
        ("internet", "'internet'", "is not HOST:PORT"),
    ],
)
def test_a_bad_entry_is_named(given: str, named: str, says: str) -> None:
    with pytest.raises(NetworkSpecError) as raised:
        canonical_network(given)
    message = str(raised.value)
    assert named in message and says in message and "\n" not in message


def test_too_many_destinations_are_refused() -> None:
    with pytest.raises(NetworkSpecError, match="over the 64"):
        canonical_network(",".join(f"h{n}.org:80" for n in range(65)))


def test_run_settings_keep_the_destinations_written_one_way() -> None:
    settings = RunSettings(network="Example.org:443")
    assert (settings.network, settings.allow_network) == ("example.org:443", False)
    with pytest.raises(ValueError, match=r"'example\.org'"):
        RunSettings(network="example.org")


def test_the_command_line_names_the_bad_entry_and_exits_2(cli: Cli, tmp_path: Path) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "ok")])
    result = cli("run", str(bench), "--agent-cmd", "echo ok", "--network", "pypi.org:443,pypi")
    assert result.exit_code == 2
    assert "--network" in result.output and "'pypi' is not HOST:PORT" in result.output


def test_the_store_is_refused_on_every_address_that_reaches_it() -> None:
    """A store on this host's loopback listens on its port: any local address with that port
    reaches it (127.0.0.2, the unspecified address, ::1), another port or host does not."""
    store = store_endpoints("postgresql://root@127.0.0.1:5432/db")
    egress = Egress((Destination("db.internal", 5432),), store)
    for address in ("127.0.0.1", "127.0.0.2", "0.0.0.0", "::1", "::ffff:127.0.0.1"):
        assert egress.refuses(address, 5432), address
    assert not egress.refuses("127.0.0.1", 5433)
    assert not egress.refuses("192.0.2.77", 5432)  # an address of no interface here
    assert not Egress((Destination("127.0.0.1", 5432),)).refuses("127.0.0.1", 5432)  # SQLite
