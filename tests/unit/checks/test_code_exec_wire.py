"""The wire between code_exec's tests process and solution process: plain data only, whatever the
other side sends."""

from __future__ import annotations

import collections
import decimal
import fractions
import math
import os
import re
import struct
import threading
from typing import Any

import numpy
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


Point = collections.namedtuple("Point", ["x", "y"])


def _sent(value: object) -> Any:
    """`value` after a round trip, checked to hold no object of the sender's classes."""
    arrived = _round_trip(value)
    assert type(arrived).__module__ in ("builtins", "fractions", "decimal", "collections", "numpy")
    return arrived


@pytest.mark.parametrize(
    "value",
    [
        fractions.Fraction(1, 3),
        fractions.Fraction(-(2**200), 7),
        decimal.Decimal("1.10"),
        decimal.Decimal("-0"),
        decimal.Decimal("Infinity"),
        collections.Counter("abracadabra"),
        collections.OrderedDict([("b", 1), ("a", 2)]),
        collections.defaultdict(list, {"k": [1]}),
    ],
)
def test_standard_library_values_cross_by_value_with_their_type(value: object) -> None:
    arrived = _sent(value)
    assert type(arrived) is type(value)
    assert arrived == value
    assert repr(arrived) == repr(value)


def test_a_namedtuple_is_rebuilt_with_its_name_and_fields() -> None:
    arrived = _sent([Point(1, 2), Point(3, 4)])
    assert isinstance(arrived, list)
    first = arrived[0]
    assert first == Point(1, 2) == (1, 2)
    assert (first.x, first.y, type(first).__name__, first._fields) == (1, 2, "Point", ("x", "y"))
    assert type(arrived[1]) is type(first)  # one class per name and fields


def test_a_defaultdict_keeps_a_builtin_factory_only() -> None:
    counts = _sent(collections.defaultdict(int, {"a": 1}))
    assert isinstance(counts, collections.defaultdict) and counts["missing"] == 0
    made_by_the_sender: collections.defaultdict[str, object] = collections.defaultdict(object)
    made_by_the_sender["a"] = 1
    anything = _sent(made_by_the_sender)
    assert isinstance(anything, collections.defaultdict) and anything.default_factory is None
    counter = _sent(collections.Counter(a=2))
    assert isinstance(counter, collections.Counter) and counter["missing"] == 0


@pytest.mark.parametrize(
    "value",
    [
        numpy.int64(-7),
        numpy.uint8(255),
        numpy.float32(0.1),
        numpy.float64("nan"),
        numpy.bool_(True),
        numpy.complex128(1 + 2j),
        numpy.str_("é"),
        numpy.array([[1, 2], [3, 4]], dtype=numpy.int16),
        numpy.zeros((0, 3)),
        numpy.array(5.5),
        numpy.array(["ab", "c"]),
        numpy.array([b"x", b"yz"]),
        numpy.array([True, False]),
    ],
)
def test_numpy_scalars_and_arrays_cross_by_value(value: Any) -> None:
    arrived = _sent(value)
    assert type(arrived) is type(value)
    assert arrived.dtype == value.dtype and arrived.shape == value.shape
    assert numpy.array_equal(arrived, value, equal_nan=value.dtype.kind in "fc")


def test_lying_subclasses_of_numbers_arrive_as_the_plain_type() -> None:
    class Liar(fractions.Fraction):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = fractions.Fraction.__hash__

    class Lying(decimal.Decimal):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = decimal.Decimal.__hash__

    arrived = _sent([Liar(1, 2), Lying("3")])
    assert [type(item) for item in arrived] == [fractions.Fraction, decimal.Decimal]
    assert arrived != [5, 5]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (["fraction", "1", "0"], "a malformed fraction value"),
        (["decimal", "one"], "a malformed decimal value"),
        (["namedtuple", "class", ["a"], [["int", "1"]]], "a malformed namedtuple value"),
        (["namedtuple", "P", ["__import__('os')"], [None]], "a malformed namedtuple value"),
        (["defaultdict", "eval", []], "a malformed defaultdict value"),
        (["ndarray", "|O", [1], ["list", [None]]], "a dtype that is not plain data"),
        (["ndarray", "<U100000", [1], ["list", ["a"]]], "bytes an item"),
        (["ndarray", "<i8", [3], ["list", [["int", "1"]]]], "a malformed ndarray value"),
        (["npscalar", "<M8[s]", ["int", "1"]], "a dtype that is not plain data"),
    ],
)
def test_malformed_library_values_are_refused(data: object, message: str) -> None:
    with pytest.raises(wire.WireError, match=re.escape(message)):
        wire.decode(data, _refuse)


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (b'{"op":"call"} {}', "extra data at character 13"),
        (b"", "no JSON value at character 0"),
        (b' {"op":1}', "no JSON value at character 0"),
        (b'{"op":', "no JSON value"),
        (b'{"op":"\xff"}', "can't decode byte 0xff"),
        (b"[" * 100_000 + b"]" * 100_000, "recursion"),
    ],
)
def test_a_message_that_is_not_one_json_value_is_refused(message: bytes, reason: str) -> None:
    read, write = os.pipe()
    try:
        data = struct.pack(">I", len(message)) + message
        with open(write, "wb", buffering=0, closefd=False) as pipe:  # over a pipe's buffer
            writer = threading.Thread(target=pipe.write, args=(data,))
            writer.start()
            with pytest.raises(wire.WireError, match=f"not JSON: .*{re.escape(reason)}"):
                wire.receive(read)
            writer.join()
    finally:
        os.close(read)
        os.close(write)
