"""The wire between code_exec's tests process and solution process: plain data only, whatever the
other side sends."""

from __future__ import annotations

import math
import os
import struct

import pytest

from benchyard.checks.scripts import code_exec_wire as wire


def _no_other(value: object) -> list[object]:
    raise AssertionError(f"not plain data: {value!r}")


def _refuse(tagged: list[object]) -> object:
    raise wire.WireError(f"unknown tag {tagged[0]!r}")


def _round_trip(value: object) -> object:
    read, write = os.pipe()
    try:
        wire.send(write, wire.encode(value, _no_other))
        return wire.decode(wire.receive(read), _refuse)
    finally:
        os.close(read)
        os.close(write)


def _exact(value: object) -> object:
    """A value with its exact types, to compare (1 == 1.0 == True otherwise)."""
    if isinstance(value, set | frozenset):  # a set rebuilt may iterate in another order
        return (type(value).__name__, sorted((_exact(item) for item in value), key=repr))
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_exact(item) for item in value])
    if isinstance(value, dict):
        return ("dict", [(_exact(k), _exact(v)) for k, v in value.items()])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, repr(value))


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -7,
        2**4000,
        -(2**70),
        0.1,
        -0.0,
        float("nan"),
        float("inf"),
        float("-inf"),
        1 + 2j,
        "",
        "naïve \udc80 \x00",
        b"\x00\xff",
        [1, [2.0, (3, "4")]],
        (1,),
        {1, "a", (2, 3), frozenset({4})},
        frozenset(),
        {(1, 2): [3], 4: {"x": None}, "k": b""},
        slice(1, None, -1),
    ],
)
def test_plain_data_crosses_with_its_exact_types(value: object) -> None:
    assert _exact(_round_trip(value)) == _exact(value)


def test_subclasses_arrive_as_their_plain_base_so_their_behaviour_stays_behind() -> None:
    class Liar(int):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = int.__hash__

    class Text(str):
        pass

    class Pairs(dict[str, int]):
        pass

    arrived = _round_trip([Liar(0), Text("x"), Pairs(a=1), bytearray(b"z")])
    assert arrived == [0, "x", {"a": 1}, b"z"]
    assert [type(item) for item in arrived] == [int, str, dict, bytes]  # type: ignore[union-attr]
    assert arrived[0] != 1  # type: ignore[index]


def test_what_is_not_plain_data_goes_through_export_and_resolve() -> None:
    exported: list[object] = []

    def export(value: object) -> list[object]:
        exported.append(value)
        return ["handle", len(exported) - 1, type(value).__name__]

    marker = object()
    data = wire.encode({"key": [marker]}, export)
    assert data == ["dict", [["key", ["list", [["handle", 0, "object"]]]]]]
    assert wire.decode(data, lambda tagged: ("resolved", tagged[1])) == {"key": [("resolved", 0)]}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (5, "not a tagged value: int"),
        ({"x": 1}, "not a tagged value: dict"),
        (["int", 5], "a malformed int value"),
        (["float", "one"], "a malformed float value"),
        (["bytes", "***"], "a malformed bytes value"),
        (["set", [["list", []]]], "a malformed set value: unhashable type: 'list'"),
        (["dict", [[1]]], "a malformed dict value"),
        (["object", "os.system"], "unknown tag 'object'"),
    ],
)
def test_anything_else_is_refused(data: object, message: str) -> None:
    with pytest.raises(wire.WireError, match=message):
        wire.decode(data, _refuse)


def test_a_message_over_the_size_limit_is_refused_before_it_is_read() -> None:
    read, write = os.pipe()
    try:
        os.write(write, struct.pack(">I", wire.MAX_MESSAGE_BYTES + 1))
        with pytest.raises(wire.WireError, match="over the limit"):
            wire.receive(read)
        os.close(write)
        with pytest.raises(wire.WireClosed):
            wire.receive(read)
    finally:
        os.close(read)


class BadInput(ValueError):
    pass


class Unknown(Exception):
    pass


@pytest.mark.parametrize(
    ("raised", "local", "expected_type", "expected_text"),
    [
        (ValueError("bad"), {}, ValueError, "bad"),
        (KeyError("k"), {}, KeyError, "'k'"),
        (BadInput("bad"), {}, ValueError, "BadInput: bad"),
        (BadInput("bad"), {"BadInput": ZeroDivisionError}, ZeroDivisionError, "bad"),
        (Unknown("what?"), {}, wire.SolutionError, "Unknown: what?"),
        (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "no"), {}, wire.SolutionError, "UnicodeDec"),
    ],
)
def test_an_exception_is_rebuilt_as_its_nearest_builtin_type(
    raised: BaseException,
    local: dict[str, type[BaseException]],
    expected_type: type[BaseException],
    expected_text: str,
) -> None:
    named = {BadInput: "BadInput"}
    rebuilt = wire.rebuild_error(wire.describe_error(raised, named), local)
    assert type(rebuilt) is expected_type
    assert str(rebuilt).startswith(expected_text)
