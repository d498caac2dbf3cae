"""report/listing.py's write_streamed_json writes the text write_strict_json writes of the same
payload with its StreamedLists as lists, byte for byte, reading each list's objects as it goes."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest

from benchyard.report.listing import (
    STREAMED_BATCH,
    StreamedList,
    strict_json,
    write_streamed_json,
)

ODD = 'quote " backslash \\ newline \n tab \t brace }, {"k": 1} comma ",\n      " é 漢 \u2028'


def _objects(count: int) -> list[dict[str, Any]]:
    """Flat objects of every JSON scalar, with strings that look like JSON's own separators."""
    return [
        {"n": n, "text": f"{ODD} {n}", "none": None, "yes": n % 2 == 0, "x": n / 3, "}": "{"}
        for n in range(count)
    ]


def _streamed(payload: Any, ensure_ascii: bool = True) -> str:
    out = io.StringIO()
    write_streamed_json(payload, out, ensure_ascii=ensure_ascii)
    return out.getvalue()


def _as_lists(value: Any) -> Any:
    if isinstance(value, StreamedList):
        return list(value.items)
    if isinstance(value, dict):
        return {key: _as_lists(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_lists(item) for item in value]
    return value


@pytest.mark.parametrize("count", [0, 1, 2, STREAMED_BATCH, STREAMED_BATCH + 1])
@pytest.mark.parametrize("ensure_ascii", [True, False])
def test_a_streamed_report_is_the_whole_ones_text(count: int, ensure_ascii: bool) -> None:
    def payload(lists: bool) -> dict[str, Any]:
        objects = _objects(count)
        return {
            "schema_version": "1",
            "summary": {"accuracy": float("nan"), "nested": {"a": [1, 2], "b": {}}, "c": []},
            "failures": objects if lists else StreamedList(iter(objects)),
            "flags": [] if lists else StreamedList(iter([])),
            "tail": ODD,
        }

    want = strict_json(payload(lists=True), ensure_ascii=ensure_ascii)

    got = _streamed(payload(lists=False), ensure_ascii=ensure_ascii)

    assert got == want
    assert json.loads(got)["failures"] == _objects(count)


def test_a_list_of_streamed_reports_is_the_whole_lists_text() -> None:
    def report(n: int) -> dict[str, Any]:
        return {"run": {"id": str(n)}, "failures": StreamedList(iter(_objects(n)))}

    payload = [report(n) for n in range(3)]
    want = strict_json([_as_lists(report(n)) for n in range(3)])

    assert _streamed(payload) == want


def test_the_objects_are_read_as_they_are_written() -> None:
    read: list[int] = []

    def objects() -> Iterator[dict[str, Any]]:
        for n in range(3 * STREAMED_BATCH):
            read.append(n)
            yield {"n": n}

    read_when_written: list[int] = []

    class Watching(io.StringIO):
        def write(self, text: str) -> int:
            read_when_written.append(len(read))
            return super().write(text)

    write_streamed_json({"failures": StreamedList(objects())}, Watching())

    assert len(read) == 3 * STREAMED_BATCH
    assert min(n for n in read_when_written if n) <= STREAMED_BATCH  # not all read first
