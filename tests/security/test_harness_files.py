"""Attack class 2, "turn the harness against the host": the harness reads and writes the protocol
files in an io dir the agent controls, and collects the agent's change from a workdir it
controls. An agent replaces those files with links (to read a host file as its answer, or make
the harness overwrite a host file), with FIFOs (to hang the harness, Ctrl-C included), and leaves
file names that are not UTF-8 or files too big to diff. Every one of these worked or broke the
run before; now the harness refuses them and the run finishes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from benchyard.store.records import AttemptRecord
from benchyard.store.store import Store
from benchyard.untrusted import remove_tree
from tests.support import Cli, write_benchmark

RUN_LIMIT_SEC = 300  # far beyond what these runs need: only a hang reaches it
SECRET = "host-secret-0b1c2d"
CONTROL = {
    "id": "control",
    "stimulus": "say ok",
    "checks": [{"type": "equals", "value": "ok"}],
    "reference": "ok",
}


def _script(directory: Path, source: str) -> str:
    path = directory / "agents" / "agent.sh"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    return f"sh {path}"


def _ended(process: subprocess.Popen[str]) -> tuple[str, str]:
    """The process's stdout and stderr once it ended; a hang fails at RUN_LIMIT_SEC."""
    try:
        return process.communicate(timeout=RUN_LIMIT_SEC)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"benchyard run hung for {RUN_LIMIT_SEC}s") from None


def _run_process(cli: Cli, bench: Path, command: str) -> dict[str, AttemptRecord]:
    """`benchyard run` as a real process: a harness that hangs is caught by the time limit."""
    process = cli.process("run", str(bench), "--agent-cmd", command, "-q")
    out, err = _ended(process)
    assert process.returncode == 0, out + err
    store = Store.open(cli.db_url)
    try:
        run = store.resolve_run("latest")
        return {a.scenario_id: a for a in store.attempts(run.id, with_evidence=True)}
    finally:
        store.close()


def test_an_output_file_linked_to_a_host_file_is_not_read(project_cli: Cli) -> None:
    secret = project_cli.cwd / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    secret.chmod(0o600)
    bench = write_benchmark(
        project_cli.cwd / "bench",
        [
            CONTROL,
            {
                "id": "link",
                "stimulus": "what is the secret?",
                "checks": [{"type": "equals", "value": SECRET}],
                "reference": SECRET,
            },
        ],
    )
    agent = _script(
        project_cli.cwd,
        f'if grep -q secret "$BENCHYARD_INSTRUCTION_FILE"; then\n'
        f'  ln -s {secret} "$BENCHYARD_OUTPUT_FILE"\n'
        f"else echo ok; fi\n",
    )
    attempts = _run_process(project_cli, bench, agent)
    assert attempts["control"].verdict == "passed"
    assert attempts["link"].verdict == "failed"
    assert SECRET not in (attempts["link"].answer or "")


def test_the_harness_never_writes_through_a_link_the_agent_left(project_cli: Cli) -> None:
    target = project_cli.cwd / "root-owned-target"
    target.write_text("untouched", encoding="utf-8")
    created = project_cli.cwd / "created-by-root"
    bench = write_benchmark(
        project_cli.cwd / "bench",
        [
            CONTROL,
            {
                "id": "turns",
                "stimulus": {"turns": ["first", "second"]},
                "checks": [{"type": "contains", "value": "second"}],
                "reference": ["first", "second"],
            },
        ],
    )
    # Turn 1 leaves links where the harness writes turn 2's input files.
    agent = _script(
        project_cli.cwd,
        'cat "$BENCHYARD_INSTRUCTION_FILE"\n'
        f'ln -sf {target} "$BENCHYARD_MESSAGES_FILE"\n'
        f'ln -sf {created} "$(dirname "$BENCHYARD_MESSAGES_FILE")/instruction.txt"\n',
    )
    attempts = _run_process(project_cli, bench, agent)
    assert attempts["turns"].verdict == "passed"
    assert attempts["turns"].answers == ["first", "second"]
    assert target.read_text(encoding="utf-8") == "untouched"
    assert not created.exists()


def test_fifos_in_place_of_the_protocol_files_do_not_hang_the_run(project_cli: Cli) -> None:
    bench = write_benchmark(
        project_cli.cwd / "bench",
        [
            CONTROL,
            {
                "id": "fifo-output",
                "stimulus": "fifo",
                "checks": [{"type": "equals", "value": "x"}],
                "reference": "x",
            },
            {
                "id": "fifo-trajectory",
                "stimulus": "fifo",
                "checks": [{"type": "equals", "value": "x"}],
                "reference": "x",
            },
        ],
    )
    agent = _script(
        project_cli.cwd,
        'case "$BENCHYARD_SCENARIO_ID" in\n'
        '  fifo-output) mkfifo "$BENCHYARD_OUTPUT_FILE";;\n'
        '  fifo-trajectory) mkfifo "$BENCHYARD_TRAJECTORY_FILE"; echo x;;\n'
        "  *) echo ok;;\n"
        "esac\n",
    )
    attempts = _run_process(project_cli, bench, agent)
    assert attempts["control"].verdict == "passed"
    assert attempts["fifo-output"].verdict == "failed"
    # the answer on stdout still counts; the FIFO is reported in the trajectory, not read
    assert attempts["fifo-trajectory"].verdict == "passed"
    assert any(
        "trajectory file ignored" in event.content
        for event in attempts["fifo-trajectory"].trajectory or []
    )


def test_a_fifo_named_as_the_agent_s_program_or_interpreter_does_not_hang_the_run(
    project_cli: Cli,
) -> None:
    """Preflight reads each program's `#!` line to show its interpreters in the sandbox: a FIFO
    there, with no writer, would block that read for ever."""
    bench = write_benchmark(project_cli.cwd / "bench", [CONTROL])
    agents = project_cli.cwd / "agents"
    agents.mkdir()
    program, interpreter, script = agents / "program", agents / "interpreter", agents / "script"
    for fifo in (program, interpreter):
        os.mkfifo(fifo)
        fifo.chmod(0o755)
    script.write_text(f"#!{interpreter}\nprint('ok')\n", encoding="utf-8")
    script.chmod(0o755)
    for command, said in [
        (str(program), f"{program} is not a regular file"),
        (str(script), f"{script}'s interpreter: {interpreter} is not a regular file"),
    ]:  # each refused before the run, as a configuration error
        process = project_cli.process("run", str(bench), "--agent-cmd", command, "--retries", "0")
        out, err = _ended(process)
        assert process.returncode == 2, out + err
        assert said in out + err and "Traceback" not in err, out + err


def test_a_change_with_odd_files_is_collected_without_a_harness_error(project_cli: Cli) -> None:
    fixtures = project_cli.cwd / "bench" / "scenarios" / "fixtures" / "repo"
    fixtures.mkdir(parents=True)
    (fixtures / "module.py").write_text("VALUE = 1\n", encoding="utf-8")
    coding = {
        "category": "coding",
        "stimulus": {"task": "change module.py"},
        "fixtures": {"files": [{"src": "fixtures/repo", "dest": "."}]},
        "checks": [{"type": "diff_quality", "protected_paths": []}],
    }
    bench = write_benchmark(
        project_cli.cwd / "bench",
        [
            CONTROL,
            {"id": "odd-name", **coding},
            {"id": "special-files", **coding},
            {"id": "nested-git", **coding},
        ],
    )
    agent = _script(
        project_cli.cwd,
        'if [ "$BENCHYARD_SCENARIO_ID" = control ]; then echo ok; exit 0; fi\n'
        "echo 'VALUE = 2' > module.py\n"
        'case "$BENCHYARD_SCENARIO_ID" in\n'
        "  odd-name) printf x > \"$(printf 'bad\\377name.txt')\";;\n"
        "  special-files) mkfifo pipe; truncate -s 100G sparse.bin;;\n"
        "  nested-git) mkdir -p sub/.git && echo 'gitdir: /etc' > sub2.git"
        " && mkdir sub2 && mv sub2.git sub2/.git;;\n"
        "esac\n",
    )
    attempts = _run_process(project_cli, bench, agent)
    for name in ("odd-name", "special-files", "nested-git"):
        attempt = attempts[name]
        assert attempt.failure_kind != "harness_error", attempt.cause
        assert attempt.verdict in ("passed", "failed"), attempt.cause
    assert attempts["odd-name"].verdict == "passed"
    assert "bad\\377name.txt" in (attempts["odd-name"].patch or "")
    assert attempts["special-files"].verdict == "failed"
    assert "sparse.bin" in (attempts["special-files"].patch or "")  # the reason it was refused
    assert attempts["nested-git"].verdict == "passed"


DEEP_AGENT = """\
import os, sys
answer = "ok"
for _ in range(5000):  # a tree deeper than any recursion limit
    os.mkdir("d")
    os.chdir("d")
    open("f", "w").close()
print(answer)
"""


def _deep_run(cli: Cli, bench: Path, command: str, work_root: Path) -> tuple[str, str]:
    process = cli.process(
        "run", str(bench), "--agent-cmd", command, "-q",
        env={**os.environ, "BENCHYARD_WORK_ROOT": str(work_root)},
    )  # fmt: skip
    try:
        out, err = process.communicate(timeout=RUN_LIMIT_SEC)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"benchyard run hung for {RUN_LIMIT_SEC}s") from None
    assert process.returncode == 0, out + err
    return out, err


def test_a_deep_tree_in_the_workdir_is_the_agent_s_own_failure(
    project_cli: Cli, tmp_path: Path
) -> None:
    """5,000 nested directories: shutil.rmtree raised RecursionError (the run exited 1 with a
    traceback and left its scratch directory); now the tree is removed, the change refused with
    its cause, and nothing is left in the work root."""
    fixtures = project_cli.cwd / "bench" / "scenarios" / "fixtures" / "repo"
    fixtures.mkdir(parents=True)
    (fixtures / "module.py").write_text("VALUE = 1\n", encoding="utf-8")
    coding = {
        "id": "deep-coding",
        "category": "coding",
        "stimulus": {"task": "change module.py"},
        "fixtures": {"files": [{"src": "fixtures/repo", "dest": "."}]},
        "checks": [{"type": "diff_quality", "protected_paths": []}],
    }
    bench = write_benchmark(project_cli.cwd / "bench", [{**CONTROL, "id": "deep"}, coding])
    agent = project_cli.cwd / "agents" / "deep.py"
    agent.parent.mkdir(parents=True, exist_ok=True)
    agent.write_text(DEEP_AGENT, encoding="utf-8")
    work_root = tmp_path / "work-root"
    work_root.mkdir()
    try:
        _, err = _deep_run(project_cli, bench, f"python3 {agent}", work_root)
        left = list(work_root.iterdir())
    finally:  # a failing harness leaves the tree: never leave it to pytest's recursive cleanup
        remove_tree(work_root, ignore_errors=True)
    assert "Traceback" not in err, err
    assert left == []  # every scratch directory removed
    store = Store.open(project_cli.db_url)
    try:
        attempts = {a.scenario_id: a for a in store.attempts(store.resolve_run("latest").id)}
    finally:
        store.close()
    assert attempts["deep"].verdict == "passed"
    assert attempts["deep-coding"].verdict == "failed"  # its own change: counted against it
    assert attempts["deep-coding"].failure_kind != "harness_error"
    assert "levels deep" in (attempts["deep-coding"].cause or "") + str(
        [check.reason for check in attempts["deep-coding"].checks]
    )
