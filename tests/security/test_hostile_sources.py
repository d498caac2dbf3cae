"""Hostile sources turned against the host: datasets and task directories given to
`benchyard import`, and logs given to `benchyard import-run`.

Before: a SWE-bench `instance_id` of `../../..` wrote the gold patch and the repository's files
outside the output directory (under /root), and the import failed only afterwards, leaving what it
had written; a Harbor task's `tests` link copied the host directory it pointed at into the
benchmark. Now every name that becomes a path is checked before anything is written, the
benchmark is written beside its output directory and renamed at the end, and a failed import
leaves nothing behind."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import zipfile
from pathlib import Path

import pytest

from benchyard.untrusted import remove_tree
from tests.support import Cli
from tests.unit.importers.sources import write_jsonl

LIMIT_SEC = 300


def _finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=LIMIT_SEC)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"the command hung for {LIMIT_SEC} s")
    return process.returncode, out, err


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def _clone(root: Path) -> str:
    """A repository `acme/calc` under `root/clones` (as `acme__calc`); its commit."""
    repo = root / "clones" / "acme__calc"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    return _git(repo, "rev-parse", "HEAD")


def _instance(instance_id: str, commit: str) -> dict[str, object]:
    return {
        "instance_id": instance_id,
        "repo": "acme/calc",
        "base_commit": commit,
        "patch": "diff --git a/calc.py b/calc.py\n",
        "test_patch": "",
        "problem_statement": "add adds",
        "FAIL_TO_PASS": ["test_add"],
        "PASS_TO_PASS": [],
    }


def _leftovers(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def _import_swe_bench(project_cli: Cli, source: Path, tmp_path: Path) -> tuple[int, str]:
    """`benchyard import swe-bench SOURCE -o tmp_path/out` from the clones under tmp_path:
    its exit status and stderr."""
    code, _, err = _finish(
        project_cli.process(
            "import", "swe-bench", str(source), "-o", str(tmp_path / "out"),
            "--option", f"repos={tmp_path / 'clones'}", db=False,
        )
    )  # fmt: skip
    return code, err


def test_a_swe_bench_instance_id_never_writes_outside_the_output(
    tmp_path: Path, project: Path, project_cli: Cli
) -> None:
    commit = _clone(tmp_path)
    victim = tmp_path / "victim"  # out/scenarios/fixtures/../../../victim
    source = write_jsonl(
        tmp_path / "instances.jsonl",
        [_instance("acme__calc-1", commit), _instance("../../../victim", commit)],
    )
    before = _leftovers(tmp_path)
    code, err = _import_swe_bench(project_cli, source, tmp_path)
    assert "Traceback" not in err, err
    assert code == 1, err
    assert f"{source}:2: instance_id: '../../../victim' leads out of its directory" in err
    assert not victim.exists()
    assert _leftovers(tmp_path) == before  # no output, no staging directory


def test_an_import_that_fails_to_load_leaves_nothing(
    tmp_path: Path, project: Path, project_cli: Cli
) -> None:
    """Written in full, then refused by the loader (two instances with one id): removed again."""
    commit = _clone(tmp_path)
    source = write_jsonl(
        tmp_path / "instances.jsonl",
        [_instance("acme__calc-1", commit), _instance("acme__calc-1", commit)],
    )
    before = _leftovers(tmp_path)
    code, err = _import_swe_bench(project_cli, source, tmp_path)
    assert "Traceback" not in err, err
    assert code == 1, err
    assert "acme__calc-1" in err
    assert _leftovers(tmp_path) == before


def test_a_harbor_task_link_copies_no_host_directory(
    tmp_path: Path, project: Path, project_cli: Cli
) -> None:
    """A task whose `tests` is a link to a host directory: refused, nothing copied."""
    secret = tmp_path / "host-secrets"
    secret.mkdir()
    (secret / "id_rsa").write_text("PRIVATE KEY")
    (secret / "test.sh").write_text("exit 0\n")
    task = tmp_path / "tasks" / "leak"
    (task / "environment").mkdir(parents=True)
    (task / "environment" / "Dockerfile").write_text("FROM scratch\n")
    (task / "task.toml").write_text("[agent]\ntimeout_sec = 60\n")
    (task / "instruction.md").write_text("Do it.")
    (task / "tests").symlink_to(secret)
    out = tmp_path / "out"
    code, _, err = _finish(
        project_cli.process(
            "import", "harbor", str(tmp_path / "tasks"), "-o", str(out),
            "--option", "build=false", db=False,
        )
    )  # fmt: skip
    assert "Traceback" not in err, err
    assert code == 1, err
    assert f"{task / 'tests'}: is a link" in err
    assert not out.exists()
    found = subprocess.run(
        ["grep", "-r", "PRIVATE KEY", str(tmp_path), "--exclude-dir=host-secrets"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.stdout == ""


def test_a_harbor_task_reached_through_a_link_is_refused(
    tmp_path: Path, project: Path, project_cli: Cli
) -> None:
    """A directory of tasks holding a link to a task elsewhere on the host: its files are not
    copied into the benchmark."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "environment").mkdir(parents=True)
    (elsewhere / "environment" / "Dockerfile").write_text("FROM scratch\n")
    (elsewhere / "task.toml").write_text("[agent]\ntimeout_sec = 60\n")
    (elsewhere / "instruction.md").write_text("Do it.")
    (elsewhere / "tests").mkdir()
    (elsewhere / "tests" / "test.sh").write_text("exit 0\n")
    (elsewhere / "tests" / "id_rsa").write_text("PRIVATE KEY")
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "linked").symlink_to(elsewhere)
    out = tmp_path / "out"
    code, _, err = _finish(
        project_cli.process(
            "import", "harbor", str(tmp_path / "tasks"), "-o", str(out),
            "--option", "build=false", db=False,
        )
    )  # fmt: skip
    assert "Traceback" not in err, err
    assert code == 1, err
    assert "leads outside" in err and "through a link" in err
    assert not out.exists()


def _nest(directory: Path, levels: int) -> None:
    """`levels` directories, one inside the other, below `directory`, a file at the bottom."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir("d", dir_fd=fd)
            below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = below
        os.close(os.open("f", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    finally:
        os.close(fd)


def test_a_deep_task_directory_is_a_problem_not_a_recursion_error(
    tmp_path: Path, project: Path, project_cli: Cli
) -> None:
    """A task whose tests nest 3,000 directories deep: the import copied them recursively
    (RecursionError, a traceback); now the copy refuses the tree and nothing is left, and a
    benchmark holding such a tree is a problem for `validate`, not a traceback."""
    task = tmp_path / "tasks" / "deep"
    (task / "environment").mkdir(parents=True)
    (task / "environment" / "Dockerfile").write_text("FROM scratch\n")
    (task / "task.toml").write_text("[agent]\ntimeout_sec = 60\n")
    (task / "instruction.md").write_text("Do it.")
    (task / "tests").mkdir()
    (task / "tests" / "test.sh").write_text("exit 0\n")
    bench = tmp_path / "bench"
    (bench / "scenarios" / "fixtures").mkdir(parents=True)
    (bench / "benchmark.yaml").write_text('name: b\nversion: "1"\n')
    (bench / "scenarios" / "main.yaml").write_text("- {id: a, stimulus: hi}\n")
    try:
        _nest(task / "tests", 3000)
        _nest(bench / "scenarios" / "fixtures", 3000)
        out = tmp_path / "out"
        code, _, err = _finish(
            project_cli.process(
                "import", "harbor", str(tmp_path / "tasks"), "-o", str(out),
                "--option", "build=false", db=False,
            )
        )  # fmt: skip
        assert "Traceback" not in err, err[-2000:]
        assert code == 1, err[-2000:]
        assert "cannot be imported: directories nest over 256 levels deep" in err
        assert not out.exists()
        assert sorted(path.name for path in tmp_path.iterdir()) == ["bench", "tasks"]
        code, _, err = _finish(project_cli.process("validate", str(bench), db=False))
        assert "Traceback" not in err, err[-2000:]
        assert code == 1, err[-2000:]
        assert "cannot be searched: the benchmark's directories nest too deep" in err
    finally:  # never leave pytest's recursive cleanup a tree it cannot remove
        remove_tree(task / "tests", ignore_errors=True)
        remove_tree(bench, ignore_errors=True)


def test_a_prediction_s_model_name_never_names_a_file_it_cannot_be(
    tmp_path: Path, project: Path, project_cli: Cli
) -> None:
    """`grade-patches` writes `<model_name_or_path>.benchyard.json`: a name with a NUL (or over
    255 bytes) ended in a traceback after grading; now it is refused before any container runs."""
    instances = write_jsonl(tmp_path / "instances.jsonl", [_instance("acme__calc-1", "0" * 40)])
    for model in ("bad\u0000name", "m" * 300):
        predictions = write_jsonl(
            tmp_path / "predictions.jsonl",
            [{"instance_id": "acme__calc-1", "model_patch": "", "model_name_or_path": model}],
        )
        code, _, err = _finish(
            project_cli.process("grade-patches", str(instances), str(predictions), db=False)
        )
        assert "Traceback" not in err, err
        assert code == 2, err
        assert "cannot name the report's file" in err and "give the file with -o" in err
        assert len(err.strip().splitlines()) == 1, err


# ---- logs and JSON Lines ---------------------------------------------------------------------

HEADER = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}}
SAMPLE = {"id": "s1", "epoch": 1, "scores": {"match": {"value": "C"}}, "messages": []}
MEMORY_LIMIT_BYTES = 1536 * 1024 * 1024  # far above what an import needs; the bomb took 2.1 GB


def _eval_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _zip_bomb(path: Path) -> Path:
    """A .eval whose sample decompresses to 1 GiB (about 1 MiB on disk), written in pieces."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(HEADER))
        with archive.open("samples/s1_epoch_1.json", "w", force_zip64=True) as member:
            member.write(b'{"id": "s1", "pad": "')
            block = b" " * (1 << 20)
            for _ in range(1024):
                member.write(block)
            member.write(b'"}')
    return path


def _bad_crc(path: Path) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("header.json", json.dumps(HEADER))
        archive.writestr("samples/s1_epoch_1.json", json.dumps(SAMPLE))
    data = bytearray(path.read_bytes())
    at = data.index(b'"scores"')
    data[at + 1] ^= 0x20  # the content changes, its recorded CRC does not
    path.write_bytes(bytes(data))
    return path


def _json_log(path: Path, text: bytes) -> Path:
    path.write_bytes(text)
    return path


HOSTILE_LOGS = {
    "zip-bomb": (_zip_bomb, "samples/s1_epoch_1.json: the log decompresses to over 256 MiB"),
    "bad-crc": (_bad_crc, "not a readable .eval (zip) log: Bad CRC-32"),
    "deep": (
        lambda p: _json_log(p, b'{"eval": {},\n"samples": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"),
        ":2: not an Inspect log (invalid JSON: nested more than 100 levels deep",
    ),
    "invalid": (
        lambda p: _json_log(p, b'{"eval": {},\n\n"samples": [}'),
        ":3: not an Inspect log (invalid JSON: Expecting value at column 13)",
    ),
    "huge-integer": (
        lambda p: _json_log(p, b'{"eval": {"task": "t"},\n"n": ' + b"9" * 5000 + b"}"),
        ":2: not an Inspect log (invalid JSON: a number of 5000 characters (at most 1000))",
    ),
    "not-utf-8": (
        lambda p: _json_log(p, b'{"eval": {"task": "t"},\n"x": "\xff\xfe"}'),
        ":2: not UTF-8 text",
    ),
    "wrong-kinds": (
        lambda p: _json_log(
            p, json.dumps({**HEADER, "samples": [{**SAMPLE, "total_time": "slow"}]}).encode()
        ),
        ": samples[0]: a field benchyard cannot read",
    ),
}


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


@pytest.mark.parametrize("kind", list(HOSTILE_LOGS))
def test_a_hostile_inspect_log_is_one_line_of_error(
    kind: str, tmp_path: Path, project: Path, project_cli: Cli
) -> None:
    make, message = HOSTILE_LOGS[kind]
    log = make(tmp_path / ("log.eval" if kind in ("zip-bomb", "bad-crc") else "log.json"))
    code, out, err = _finish(project_cli.process("import-run", str(log), preexec_fn=_limited))
    assert "Traceback" not in err, err[-3000:]
    assert code == 2, err[-3000:]
    assert err.startswith(f"error: {log}"), err
    assert message in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert out == ""


def test_a_jsonl_source_with_a_huge_number_or_line_is_a_problem_each(
    tmp_path: Path, project: Path, project_cli: Cli
) -> None:
    """A 5,000-digit integer ended in `ValueError: Exceeds the limit (4300 digits)` with a
    traceback; a 60 MB line was read whole. Each is now a problem naming its line."""
    good = {"question": "1 + 1?", "answer": "#### 2"}
    source = tmp_path / "gsm8k.jsonl"
    with source.open("wb") as handle:
        handle.write(json.dumps(good).encode() + b"\n")
        handle.write(b'{"question": "q", "answer": "#### 1", "n": ' + b"7" * 5000 + b"}\n")
        handle.write(b'{"question": "' + b"x" * (60 << 20) + b'", "answer": "#### 1"}\n')
        handle.write(b'{"question": "q", "answer": "#### 1", "cost": 1e999999}\n')
        handle.write(json.dumps(good).encode() + b"\n")
    code, _, err = _finish(
        project_cli.process("import", "gsm8k", str(source), "-o", str(tmp_path / "out"), db=False)
    )
    assert "Traceback" not in err, err[-3000:]
    assert code == 1, err
    assert err.splitlines() == [
        f"{source}:2: invalid JSON: a number of 5000 characters (at most 1000)",
        f"{source}:3: the line is longer than 16 MiB (not read)",
        f"{source}:4: invalid JSON: the number 1e999999 is too large (it would be infinite)",
        "3 problems found",
    ]
    assert not (tmp_path / "out").exists()


def test_a_jsonl_scenario_file_with_a_huge_number_or_line_is_a_problem(
    tmp_path: Path, project: Path, project_cli: Cli
) -> None:
    """Benchmark JSONL scenario files share the reader: a 5,000-digit integer ended in a
    traceback, and a line of any length was read whole."""
    bench = tmp_path / "bench"
    (bench / "scenarios").mkdir(parents=True)
    (bench / "benchmark.yaml").write_text('name: b\nversion: "1"\n')
    line = {"id": "a", "stimulus": "hi", "checks": [{"type": "equals", "value": "x"}]}
    (bench / "scenarios" / "main.jsonl").write_bytes(
        json.dumps(line).encode() + b'\n{"id": "b", "stimulus": "hi", "n": ' + b"1" * 5000 + b"}\n"
    )
    (bench / "scenarios" / "long.jsonl").write_bytes(
        b'{"id": "c", "stimulus": "' + b"x" * (17 << 20) + b'"}\n'
    )
    code, _, err = _finish(project_cli.process("validate", str(bench), db=False))
    assert "Traceback" not in err, err[-3000:]
    assert code == 1, err
    assert sorted(err.splitlines()) == [
        "2 problems found",
        "scenarios/long.jsonl:1: the line is longer than 16 MiB (not read)",
        "scenarios/main.jsonl:2: invalid JSON: a number of 5000 characters (at most 1000)",
    ]
