"""Attack class 1, "read what it must not": from inside a real bwrap sandbox and a real Docker
container, an agent tries to read a root-only file and /etc/shadow, the project's store (where an
earlier oracle run left every reference), the benchmark's hidden tests through its git metadata,
host sockets, and the host's home directories. Each attack worked before the allow-list and the
drop to an unprivileged uid; each must now come back empty."""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

from benchyard.runner.store_address import is_local_address
from benchyard.store.records import AttemptRecord
from benchyard.store.store import Store
from tests.support import Cli, write_benchmark

SANDBOXES = ["bwrap", "docker"]
SECRET = f"SECRET-{uuid.uuid4().hex}"


def _agent(directory: Path, source: str) -> str:
    """An agent script written into `directory` (the agent's own code), as a command."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"agent_{uuid.uuid4().hex[:8]}.py"
    path.write_text(source, encoding="utf-8")
    return f"python3 {path}"


def _run(cli: Cli, bench: Path, command: str, sandbox: str) -> dict[str, AttemptRecord]:
    result = cli("run", str(bench), "--agent-cmd", command, "--sandbox", sandbox, "-q")
    assert result.exit_code == 0, result.output
    store = Store.open(cli.db_url)
    try:
        run = store.resolve_run("latest")
        assert run.settings["sandbox"] == sandbox
        return {a.scenario_id: a for a in store.attempts(run.id, with_evidence=True)}
    finally:
        store.close()


def _probe(cli: Cli, sandbox: str, source: str, answer: str) -> AttemptRecord:
    """Run one scenario whose right answer is `answer` with an agent (in the project's agent/
    directory) that tries to find it."""
    bench = write_benchmark(
        cli.cwd / "bench",
        [
            {
                "id": "steal",
                "stimulus": "what is the secret?",
                "checks": [{"type": "equals", "value": answer}],
                "reference": answer,
            }
        ],
    )
    return _run(cli, bench, _agent(cli.cwd / "agent", source), sandbox)["steal"]


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_root_only_files_are_unreadable_and_the_agent_is_not_root(
    sandbox: str, project_cli: Cli
) -> None:
    secret_file = project_cli.cwd / "agent" / "root-only.txt"
    secret_file.parent.mkdir(parents=True)
    secret_file.write_text(SECRET, encoding="utf-8")
    secret_file.chmod(0o600)  # root's: the agent's own directory is shown, this file is not its
    source = f"""
import os
print("uid", os.getuid(), os.geteuid())
for path in ({str(secret_file)!r}, "/etc/shadow"):
    try:
        print(open(path).read())
    except OSError as error:
        print("refused", path, error.strerror)
"""
    attempt = _probe(project_cli, sandbox, source, SECRET)
    stdout = attempt.stdout or ""
    assert attempt.verdict == "failed"
    assert SECRET not in stdout and "root:" not in stdout
    assert stdout.count("refused") == 2
    uids = stdout.split("\n", 1)[0].split()[1:]
    assert uids and "0" not in uids  # never root, not even inside


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_the_store_and_the_references_are_out_of_reach(sandbox: str, project: Path) -> None:
    cli = Cli(f"sqlite:///{project / '.benchyard' / 'benchyard.db'}", project)
    bench = write_benchmark(
        project / "bench",
        [
            {
                "id": f"q{n}",
                "stimulus": f"question {n}",
                "checks": [{"type": "equals", "value": f"{SECRET}-{n}"}],
                "reference": f"{SECRET}-{n}",
            }
            for n in range(3)
        ],
    )
    assert cli("run", str(bench), "--agent", "oracle", "-q").exit_code == 0
    # An agent at the project's root (as `benchyard init` writes it) looks for the answers in
    # the store the oracle filled and in the benchmark's scenario files.
    source = """
import os, re, sqlite3
number = open(os.environ["BENCHYARD_INSTRUCTION_FILE"]).read().split()[-1]
pattern = re.compile(rb"SECRET-[0-9a-f]{32}-" + number.encode())
found = []
for directory, _, files in os.walk(PROJECT):
    for name in files:
        try:
            found += pattern.findall(open(os.path.join(directory, name), "rb").read())
        except OSError:
            pass
try:
    uri = "file:" + PROJECT + "/.benchyard/benchyard.db?mode=ro&immutable=1"
    rows = sqlite3.connect(uri, uri=True).execute("select answer from attempts")
    found += [row[0].encode() for row in rows if row[0]]
except Exception as error:
    print("no store:", error)
print(found[0].decode() if found else "nothing found")
""".replace("PROJECT", repr(str(project)))
    agent = project / "agent.py"
    agent.write_text(source, encoding="utf-8")
    attempts = _run(cli, bench, f"python3 {agent}", sandbox)
    for attempt in attempts.values():
        assert attempt.verdict == "failed"
        assert SECRET not in (attempt.stdout or "")
        assert "nothing found" in (attempt.stdout or "")


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_hidden_tests_are_out_of_reach_through_the_benchmark_s_git(
    sandbox: str, project_cli: Cli
) -> None:
    cli = project_cli
    repo = cli.cwd / "repo"
    bench = write_benchmark(
        repo / "bench",
        [
            {
                "id": "steal",
                "stimulus": "what is in the hidden test?",
                "checks": [{"type": "equals", "value": SECRET}],
                "reference": SECRET,
            }
        ],
        files={"hidden/test_hidden.py": f"assert answer == {SECRET!r}\n"},
    )
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "benchmark"], check=True)
    source = f"""
import subprocess
for argv in (["git", "--git-dir", {str(repo / ".git")!r}, "show", "HEAD:bench/hidden/test_hidden.py"],
             ["cat", {str(bench / "hidden" / "test_hidden.py")!r}]):
    try:
        print(subprocess.run(argv, capture_output=True, text=True).stdout)
    except OSError as error:
        print("refused", error)
"""
    agent_dir = repo / "agents"
    attempts = _run(cli, bench, _agent(agent_dir, source), sandbox)
    assert attempts["steal"].verdict == "failed"
    assert SECRET not in (attempts["steal"].stdout or "")


@pytest.fixture
def host_socket(project: Path) -> Iterator[tuple[Path, list[str]]]:
    """A Unix socket server in the project directory, recording every connection."""
    path = project / "service.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    os.chmod(path, 0o777)
    server.listen()
    seen: list[str] = []

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            seen.append("connected")
            connection.sendall(SECRET.encode())
            connection.close()

    threading.Thread(target=serve, daemon=True).start()
    yield path, seen
    server.close()


@pytest.fixture
def host_markers(project: Path) -> Iterator[list[Path]]:
    """Directories on the host, where an agent must not look, each holding a file named SECRET:
    in /srv, in benchyard's home directory, and the project directory."""
    made = [Path(tempfile.mkdtemp(dir=parent)) for parent in ("/srv", Path.home())]
    directories = [*made, project]
    for directory in directories:
        directory.mkdir(exist_ok=True)
        (directory / SECRET).write_text("x", encoding="utf-8")
    yield directories
    for directory in made:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_host_sockets_and_directories_are_out_of_reach(
    sandbox: str,
    project_cli: Cli,
    host_socket: tuple[Path, list[str]],
    host_markers: list[Path],
) -> None:
    path, seen = host_socket
    sockets = [str(path), "/var/run/docker.sock", "/run/postgresql/.s.PGSQL.5432"]
    looked_in = [str(directory) for directory in host_markers]
    source = f"""
import os, socket
for path in {sockets!r}:
    client = socket.socket(socket.AF_UNIX)
    try:
        client.connect(path)
        print("connected", path, client.recv(100))
    except OSError as error:
        print("refused", path, error.strerror)
for top in ("/", "/root", "/home", "/srv", *{looked_in!r}):
    for directory, _, files in os.walk(top):
        if directory.startswith(("/proc", "/sys", "/usr", "/dev")):
            continue
        print(*("found " + os.path.join(directory, name) for name in files if "SECRET-" in name))
"""
    attempt = _probe(project_cli, sandbox, source, SECRET)
    stdout = attempt.stdout or ""
    assert not seen
    assert "connected" not in stdout and SECRET not in stdout
    assert stdout.count("refused") == len(sockets)


def test_the_network_is_refused_where_it_would_reach_a_loopback_store(
    project: Path, postgres_url: str
) -> None:
    # With the network, bwrap shares the host's namespace: an agent reached a passwordless
    # PostgreSQL store on 127.0.0.1 and rewrote its own verdicts.
    cli = Cli(postgres_url, project)
    bench = write_benchmark(
        project / "bench",
        [{"id": "a", "stimulus": "x", "checks": [{"type": "equals", "value": "x"}]}],
    )
    agent = _agent(project / "agent", "print('x')\n")
    result = cli("run", str(bench), "--agent-cmd", agent, "--allow-network", "-q")
    assert result.exit_code == 2
    assert "refusing to give agents the network in the bwrap sandbox" in result.output
    assert "it listens on 127.0.0.1, an address of this host" in result.output


def _socket_directory(url: str) -> str:
    from sqlalchemy import create_engine, text

    from benchyard.store.engine import with_driver

    engine = create_engine(with_driver(url))
    try:
        with engine.connect() as connection:
            shown = connection.execute(text("SHOW unix_socket_directories")).scalar_one()
    finally:
        engine.dispose()
    return str(shown).split(",")[0].strip()


def _store_url_named(url: str, form: str) -> str:
    """The same store's URL, its server named another way."""
    parts = urlsplit(url)
    user, _, hostport = parts.netloc.rpartition("@")
    host, _, port = hostport.partition(":")
    if form == "own host name":
        hostport = f"{socket.gethostname()}:{port or 5432}"
    elif form == "capitals":
        hostport = f"{host.replace('127.0.0.1', 'localhost').upper()}:{port or 5432}"
    elif form == "socket parameter":
        hostport = ""
        query = f"host={_socket_directory(url)}&{parts.query}".rstrip("&")
        return urlunsplit((parts.scheme, f"{user}@", parts.path, query, ""))
    elif form == "socket as host":
        hostport = quote(_socket_directory(url), safe="")
    return urlunsplit((parts.scheme, f"{user}@{hostport}", parts.path, parts.query, ""))


# How a URL may name this host's server; SQLAlchemy does not decode a socket directory given as
# the host (libpq does), so the store itself cannot be opened that way.
STORE_FORMS = ["own host name", "capitals", "socket parameter"]
CLIENT_FORMS = [*STORE_FORMS, "socket as host"]


@pytest.mark.parametrize("form", STORE_FORMS)
def test_the_network_is_refused_whatever_the_store_s_url_calls_this_host(
    form: str, project: Path, postgres_url: str
) -> None:
    # Before, the refusal read the URL's text: the host's own name (resolving to 127.0.0.1),
    # LOCALHOST in capitals and a Unix-socket URL all got the network next to the store.
    url = _store_url_named(postgres_url, form)
    if form == "own host name" and not is_local_address(socket.gethostbyname(socket.gethostname())):
        pytest.skip("this host's name does not resolve to one of its addresses")
    cli = Cli(url, project)
    bench = write_benchmark(
        project / "bench",
        [{"id": "a", "stimulus": "x", "checks": [{"type": "equals", "value": "x"}]}],
    )
    agent = _agent(project / "agent", "print('x')\n")
    result = cli("run", str(bench), "--agent-cmd", agent, "--allow-network", "-q")
    assert result.exit_code == 2, result.output
    assert "refusing to give agents the network in the bwrap sandbox" in result.output
    assert "the store is on this host" in result.output
    store = Store.open(url)  # the same store, reached: nothing was recorded
    try:
        assert store.list_runs() == []
    finally:
        store.close()


@pytest.mark.parametrize("form", CLIENT_FORMS)
def test_an_agent_is_never_given_the_store_s_url_under_another_name(
    form: str, project: Path, postgres_url: str
) -> None:
    # Before, a variable was compared with the store's URL as text: the same server under
    # another name reached the agent, which could then write its own verdicts.
    url = _store_url_named(postgres_url, form)
    bench = write_benchmark(
        project / "bench",
        [{"id": "a", "stimulus": "x", "checks": [{"type": "equals", "value": "x"}]}],
    )
    agent = _agent(project / "agent", "print('x')\n")
    (project / "benchyard.yaml").write_text(
        f"agents:\n  mine:\n    command: {agent}\n    env: {{DATABASE_URL: '{url}'}}\n",
        encoding="utf-8",
    )
    result = Cli(postgres_url, project)("run", str(bench), "--agent", "mine", "-q")
    assert result.exit_code == 2, result.output
    assert "DATABASE_URL holds a URL of the store's server" in result.output


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_declared_readable_paths_are_shown_and_nothing_beside_them(
    sandbox: str, project: Path, db_url: str
) -> None:
    (project / "data").mkdir()
    (project / "data" / "a.txt").write_text("from-agent-config", encoding="utf-8")
    (project / "private.txt").write_text(SECRET, encoding="utf-8")
    bench = write_benchmark(
        project / "bench",
        [{"id": "read", "stimulus": "x", "checks": [{"type": "contains", "value": "shared"}]}],
        files={"tools/b.txt": "from-benchmark-shared"},
    )
    manifest = bench / "benchmark.yaml"
    manifest.write_text(manifest.read_text() + "sandbox: {readable: [tools]}\n", encoding="utf-8")
    # the paths are only in the script's source: nothing but the declarations shows them
    paths = [project / "data" / "a.txt", bench / "tools" / "b.txt", project / "private.txt"]
    agent = _agent(
        project / "agent",
        f"for path in {list(map(str, paths))!r}:\n"
        "    try:\n        print(open(path).read())\n"
        "    except OSError as error:\n        print('refused', error.strerror)\n",
    )
    (project / "benchyard.yaml").write_text(
        f"agents:\n  mine:\n    command: {agent}\n    readable: [data]\n", encoding="utf-8"
    )
    cli = Cli(db_url, project)
    result = cli("run", str(bench), "--agent", "mine", "--sandbox", sandbox, "-q")
    assert result.exit_code == 0, result.output
    store = Store.open(db_url)
    try:
        [attempt] = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    finally:
        store.close()
    stdout = attempt.stdout or ""
    assert "from-agent-config" in stdout and "from-benchmark-shared" in stdout
    assert SECRET not in stdout and "refused" in stdout


def test_the_network_is_refused_in_docker_where_it_would_reach_a_store_on_this_host(
    project: Path,
) -> None:
    # A container on docker's bridge reaches this host's addresses (not its loopback): a store
    # URL naming one of them was let through, as every docker run with the network was.
    from benchyard.benchmarks.loader import load_benchmark
    from benchyard.runner.execute import RunSettings
    from benchyard.runner.isolation import UnsandboxedRefused, refuse_store_on_shared_network

    gateway = _docker_bridge_address()
    if not gateway or not is_local_address(gateway):
        pytest.skip("no docker bridge whose gateway is an address of this host")
    bench = load_benchmark(
        write_benchmark(
            project / "bench",
            [{"id": "a", "stimulus": "x", "checks": [{"type": "equals", "value": "x"}]}],
        )
    )
    settings = RunSettings(sandbox="docker", allow_network=True)
    with pytest.raises(UnsandboxedRefused, match=f"the store is on this host .*{gateway}"):
        refuse_store_on_shared_network(settings, bench, f"postgresql://root@{gateway}:5432/db")
    for elsewhere in ("postgresql://root@127.0.0.1:5432/db", "postgresql://root@/db"):
        refuse_store_on_shared_network(settings, bench, elsewhere)  # loopback, sockets: unreached


def _docker_bridge_address() -> str:
    """This host's address on docker's default bridge (what a container reaches it at): the
    source address of a datagram to the bridge's first container address."""
    subnet = subprocess.run(
        ["docker", "network", "inspect", "bridge", "-f", "{{(index .IPAM.Config 0).Subnet}}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if not subnet:
        return ""
    hosts = ipaddress.ip_network(subnet).hosts()
    next(hosts)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect((str(next(hosts)), 9))
        return str(probe.getsockname()[0])
