"""Outputs stored once: what goes in comes back the same, and a large output costs its
compressed size once, not once per copy (stdout, the answer, the trajectory)."""

from __future__ import annotations

import random
import string
import zlib

import pytest
from sqlalchemy import LargeBinary, Text, cast, func, select, update

from benchyard.runner.trajectory import Event, message
from benchyard.store.browse import attempt_tries
from benchyard.store.outputs import compress
from benchyard.store.schema import attempts
from benchyard.store.store import Store
from tests.support import attempt_record, run_record

OUTPUT_BYTES = 100_000
ANSWER_CAP_CHARS = 64 * 1024  # runner/execute.py's cap on the stored answer
STORED_COLUMNS = ("outputs", "trajectory", "patch", "answer", "stdout", "stderr", "answers")
BLOBS = ("outputs", "trajectory", "patch")


def _printed(size: int, seed: int = 7) -> str:
    """Text like an agent's output: letters, spaces and newlines, compressing about 4:3."""
    chosen = random.Random(seed)
    return "".join(chosen.choice(string.ascii_letters + " \n") for _ in range(size))


def _store_try(store: Store, stdout: str, answer: str, **extra: object) -> None:
    store.create_run(run_record("r1"))
    trajectory = [message("user", "say it"), message("assistant", answer.rstrip())]
    store.record_attempts(
        [
            attempt_record(
                "r1",
                "a1",
                "s1",
                stdout=stdout,
                answer=answer[:ANSWER_CAP_CHARS],
                trajectory=trajectory,
                **extra,
            )
        ]
    )


def _stored_bytes(store: Store) -> int:
    sizes = [
        func.coalesce(
            func.length(cast(attempts.c[name], LargeBinary if name in BLOBS else Text)), 0
        )
        for name in STORED_COLUMNS
    ]
    with store.engine.connect() as connection:
        return int(connection.execute(select(sum(sizes[1:], sizes[0]))).scalar_one())


def test_outputs_answer_and_trajectory_come_back_exactly(store: Store) -> None:
    stdout = "héllo\x00 wörld \ud800 ✓\n" + _printed(5_000) + "\n\n"
    stderr = "warning: \x1b[31mred\x1b[0m\n"
    _store_try(store, stdout, stdout.rstrip(), stderr=stderr, patch="--- a\n+++ b\n")

    for shown in (
        store.attempts("r1", with_evidence=True)[0],
        attempt_tries(store, "a1")[0],
    ):
        assert shown.stdout == stdout
        assert shown.stderr == stderr
        assert shown.answer == stdout.rstrip()[:ANSWER_CAP_CHARS]
        assert shown.trajectory is not None
        assert [(e.role, e.content) for e in shown.trajectory] == [
            ("user", "say it"),
            ("assistant", stdout.rstrip()),
        ]
        assert shown.patch == "--- a\n+++ b\n"


def test_an_answer_that_is_not_stdout_is_kept_apart(store: Store) -> None:
    answer = "written to the output file, " * 10
    _store_try(store, "progress: done\n", answer)

    shown = store.attempts("r1", with_evidence=True)[0]
    assert (shown.stdout, shown.answer) == ("progress: done\n", answer)
    assert shown.trajectory is not None
    assert shown.trajectory[-1].content == answer.rstrip()


def test_a_try_without_outputs_comes_back_without_them(store: Store) -> None:
    store.create_run(run_record("r1"))
    store.record_attempts([attempt_record("r1", "a1", "s1", trajectory=[Event(kind="log")])])

    shown = store.attempts("r1", with_evidence=True)[0]
    assert (shown.stdout, shown.stderr, shown.answer) == (None, None, None)
    assert shown.trajectory is not None and [e.kind for e in shown.trajectory] == ["log"]


def test_a_100_kb_output_is_stored_once(store: Store) -> None:
    stdout = _printed(OUTPUT_BYTES)
    _store_try(store, stdout, stdout.rstrip())

    assert _stored_bytes(store) <= 1.1 * OUTPUT_BYTES


def test_rows_written_before_the_outputs_blob_read_from_their_text_columns(store: Store) -> None:
    _store_try(store, "old stdout\n", "old answer")
    with store.engine.begin() as connection:  # as migration 0011 found it: text, no blob
        connection.execute(
            update(attempts).values(
                outputs=None, stdout="old stdout\n", stderr="old stderr", answer="old answer"
            )
        )

    shown = store.attempts("r1", with_evidence=True)[0]
    assert (shown.stdout, shown.stderr, shown.answer) == (
        "old stdout\n",
        "old stderr",
        "old answer",
    )
    assert shown.trajectory is not None and shown.trajectory[-1].content == "old answer"


@pytest.mark.parametrize("size", [0, 1, 511, 512, 513, 4_000, 40_000, OUTPUT_BYTES])
def test_a_blob_compressed_with_a_window_its_size_reads_back_as_small(size: int) -> None:
    """A small blob gets a small window (fast to set up): zlib reads it back, and it is no larger
    than zlib.compress's default window makes it."""
    data = _printed(size).encode()
    blob = compress(data)
    assert zlib.decompress(blob) == data
    assert len(blob) == len(zlib.compress(data, 6))
