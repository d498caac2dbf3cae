"""The wire between `code_exec`'s two processes: the tests process and the solution process.

A message is a 4-byte length and that many bytes of JSON (64 MiB at most). Values travel as plain
data with type tags, and decoding builds nothing but values of types of the receiving process's
own (never the sender's classes, never its `__eq__`, such as one that always says yes):

- None, bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset, slice;
- `fractions.Fraction` (numerator and denominator), `decimal.Decimal` (its exact text);
- a namedtuple as a namedtuple of the same name and fields, built here (`collections.namedtuple`);
- `collections.Counter`, `OrderedDict` and `defaultdict` (its default factory when it is a
  builtin type such as `int` or `list`, else none);
- numpy scalars and arrays (dtype, shape and elements; numbers, booleans and text only) when the
  sender has numpy loaded: rebuilt with the receiver's numpy, or as Python numbers and nested
  lists where it has none.

Any other subclass of these arrives as its plain base type. What is not plain data travels as a
tagged reference that each side resolves its own way: a handle on an object of the solution, a
callback to a function of the tests. Never pickle.

The two bundled scripts load this file from its source (they run with `python3 -I -c`); benchyard's
own tests import it. Standard library only (numpy is used only where a value already is numpy's).
"""

from __future__ import annotations

import binascii
import builtins
import os
import sys

# What a grading imports costs its CPU: `json`, `base64`, `fractions` and `typing` import `re`
# (7 ms of regex compiling in every sandbox), `decimal` and `ctypes` load their C libraries, and
# `collections` with `functools` cost 3 ms. So the wire uses `_json` (the C codec beneath `json`),
# binascii, the C module beneath `collections` and int.to_bytes rather than `struct`; it looks for
# a Fraction, a Decimal or a Counter only where its module is loaded already (as for numpy) and
# imports the module when one arrives. `TYPE_CHECKING` is mypy's name.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections import OrderedDict, defaultdict
    from collections.abc import Callable, Mapping
    from typing import Any

    Json = Any
    Export = Callable[[object], list[Json]]  # what is not plain data -> its tagged reference
    Resolve = Callable[[list[Json]], object]  # a tagged reference -> the value it stands for
    Serve = Callable[[dict[str, Json]], Json]  # a request of the other side -> the reply
else:  # the same classes, without the Python half of `collections`
    from _collections import OrderedDict, defaultdict

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_ERROR_CHARS = 2000
_HEADER_BYTES = 4  # a message's length, big-endian
_READ_CHUNK = 1024 * 1024
_CONTAINERS: dict[str, Callable[[Any], Any]] = {
    "list": list,
    "tuple": tuple,
    "set": set,
    "frozenset": frozenset,
}
_DICTS: dict[str, Callable[[Any], Any]] = {
    "counter": lambda items: _imported("collections").Counter(items),
    "ordereddict": OrderedDict,
}
_FACTORIES: dict[str, type] = {
    kind.__name__: kind for kind in (int, float, complex, str, bytes, bool, list, tuple, dict, set)
}  # default factories of a defaultdict that cross by name
_NAMEDTUPLES: dict[tuple[str, tuple[str, ...]], Any] = {}  # built here, by name and fields
_MAX_NAMEDTUPLES = 256
_NUMPY_KINDS = "biufcUS"  # booleans, integers, floats, complex numbers and text: data only
_MAX_NUMPY_ITEM_BYTES = 4096
BUILTIN_ERRORS: dict[str, type[BaseException]] = {
    name: value
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}  # taken when this process starts, before anything of the model's can replace them


class WireError(Exception):
    """A message that breaks the protocol: too big, not JSON, not plain data, an unknown tag."""


class WireClosed(WireError):
    """The other process closed its end of the wire (it ended)."""


class SolutionError(Exception):
    """An exception raised by the solution whose type the tests process has no equivalent of."""


def send(fd: int, message: Json) -> None:
    data = _dumps(message).encode("ascii")
    if len(data) > MAX_MESSAGE_BYTES:
        raise WireError(f"a message of {len(data)} bytes, over the limit of {MAX_MESSAGE_BYTES}")
    view = memoryview(len(data).to_bytes(_HEADER_BYTES, "big") + data)
    while view:
        view = view[os.write(fd, view) :]


def receive(fd: int) -> Json:
    size = int.from_bytes(_read_exactly(fd, _HEADER_BYTES), "big")
    if size > MAX_MESSAGE_BYTES:
        raise WireError(f"a message of {size} bytes, over the limit of {MAX_MESSAGE_BYTES}")
    try:
        return _loads(_read_exactly(fd, size).decode("utf-8"))
    except (ValueError, RecursionError) as error:
        raise WireError(f"a message that is not JSON: {error}") from None


class _ScannerContext:
    """What `_json`'s scanner reads of a JSONDecoder: json.loads's defaults."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float = parse_constant = float
    parse_int = int


def _unserializable(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _codec() -> tuple[Callable[[Json], str], Callable[[str], Json]]:
    """Compact JSON text of a message, and a message from such text (the whole text, nothing
    after it): `_json`'s C encoder and scanner, else `json`'s where this interpreter lacks them."""
    try:
        from _json import encode_basestring_ascii, make_encoder, make_scanner

        encoder = make_encoder(
            None, _unserializable, encode_basestring_ascii, None, ":", ",", False, False, True
        )
        scanner = make_scanner(_ScannerContext())  # type: ignore[arg-type]  # typeshed: a decoder
    except (ImportError, TypeError):
        import json

        return lambda message: json.dumps(message, separators=(",", ":")), json.loads

    def loads(text: str) -> Json:
        try:
            value, end = scanner(text, 0)
        except StopIteration:  # the scanner's way of saying that no value starts there
            raise ValueError("no JSON value at character 0") from None
        if end != len(text):
            raise ValueError(f"extra data at character {end}")
        return value

    return lambda message: "".join(encoder(message, 0)), loads


_dumps, _loads = _codec()
_BASE64_DIGITS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _unbase64(text: str) -> bytes:
    """base64.b64decode(text, validate=True): only the alphabet, then at most two `=`."""
    digits = text.rstrip("=")
    if len(text) - len(digits) > 2 or not _BASE64_DIGITS.issuperset(digits):
        raise ValueError("not base64 (a character outside its alphabet)")
    return binascii.a2b_base64(text)


def _read_exactly(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, _READ_CHUNK))
        if not chunk:
            raise WireClosed("the other process closed the wire")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def encode(value: object, export: Export) -> Json:
    """Plain data as JSON with type tags (a subclass as its plain base); anything else through
    `export`."""
    if value is None or value is True or value is False:
        return value
    numpy_value = _encode_numpy(value, export)
    if numpy_value is not None:
        return numpy_value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return ["int", format(int(value), "x")]  # hex: no limit on the digits of big ints
    if isinstance(value, float):
        return ["float", float(value).hex()]  # exact, and 'nan', 'inf', '-inf' as they are
    if isinstance(value, complex):
        return ["complex", value.real.hex(), value.imag.hex()]
    if isinstance(value, bytes | bytearray):
        return ["bytes", binascii.b2a_base64(value, newline=False).decode("ascii")]
    fractions, decimal = sys.modules.get("fractions"), sys.modules.get("decimal")
    if fractions is not None and isinstance(value, fractions.Fraction):
        return ["fraction", format(int(value.numerator), "x"), format(int(value.denominator), "x")]
    if decimal is not None and isinstance(value, decimal.Decimal):
        return ["decimal", decimal.Decimal.__str__(value)]
    if isinstance(value, tuple) and _namedtuple_fields(value):
        fields = list(_namedtuple_fields(value) or ())
        items = [encode(item, export) for item in value]
        return ["namedtuple", str(type(value).__name__), fields, items]
    for tag, kind in (("list", list), ("tuple", tuple), ("set", set), ("frozenset", frozenset)):
        if isinstance(value, kind):
            return [tag, [encode(item, export) for item in value]]
    if isinstance(value, dict):
        pairs = [[encode(k, export), encode(v, export)] for k, v in value.items()]
        collections = sys.modules.get("collections")  # where a Counter can be
        if collections is not None and isinstance(value, collections.Counter):
            return ["counter", pairs]
        if isinstance(value, OrderedDict):
            return ["ordereddict", pairs]
        if isinstance(value, defaultdict):
            return ["defaultdict", _factory_name(value.default_factory), pairs]
        return ["dict", pairs]
    if isinstance(value, slice):
        return ["slice", [encode(part, export) for part in (value.start, value.stop, value.step)]]
    return export(value)


def decode(data: Json, resolve: Resolve) -> object:
    """Plain data, built from scratch here; the other tags go to `resolve`."""
    if data is None or isinstance(data, bool | str):
        return data
    if not isinstance(data, list) or not data or not isinstance(data[0], str):
        raise WireError(f"not a tagged value: {type(data).__name__}")
    tag = data[0]
    try:
        if tag == "int":
            return int(_text(data[1]), 16)
        if tag == "float":
            return float.fromhex(_text(data[1]))
        if tag == "complex":
            return complex(float.fromhex(_text(data[1])), float.fromhex(_text(data[2])))
        if tag == "bytes":
            return _unbase64(_text(data[1]))
        if tag in _CONTAINERS:
            return _CONTAINERS[tag](decode(item, resolve) for item in _items(data[1]))
        if tag == "dict":
            return {decode(k, resolve): decode(v, resolve) for k, v in _pairs(data[1])}
        if tag in _DICTS:
            return _DICTS[tag]({decode(k, resolve): decode(v, resolve) for k, v in _pairs(data[1])})
        if tag == "defaultdict":
            factory = None if data[1] is None else _FACTORIES[_text(data[1])]
            pairs = ((decode(k, resolve), decode(v, resolve)) for k, v in _pairs(data[2]))
            return defaultdict(factory, pairs)
        if tag == "fraction":
            import fractions

            return fractions.Fraction(int(_text(data[1]), 16), int(_text(data[2]), 16))
        if tag == "decimal":
            import decimal

            return decimal.Decimal(_text(data[1]))
        if tag == "namedtuple":
            kind = _namedtuple(_text(data[1]), tuple(_text(name) for name in _items(data[2])))
            return kind(*(decode(item, resolve) for item in _items(data[3])))
        if tag in ("npscalar", "ndarray"):
            return _decode_numpy(tag, data, resolve)
        if tag == "slice":
            start, stop, step = _items(data[1])
            return slice(decode(start, resolve), decode(stop, resolve), decode(step, resolve))
    except (
        TypeError,
        ValueError,
        IndexError,
        KeyError,
        ArithmeticError,
        binascii.Error,
        RecursionError,
    ) as error:
        raise WireError(f"a malformed {tag} value: {error}") from None
    return resolve(data)


def _factory_name(factory: object) -> str | None:
    """The name of a defaultdict's default factory when it is one of _FACTORIES, else None."""
    return next((name for name, kind in _FACTORIES.items() if factory is kind), None)


def _namedtuple_fields(value: tuple[Any, ...]) -> tuple[str, ...] | None:
    """The field names of a namedtuple (strings, one per item), else None."""
    fields = getattr(type(value), "_fields", None)
    if (
        isinstance(fields, tuple)
        and len(fields) == len(value)
        and all(type(name) is str for name in fields)
    ):
        return fields
    return None


def _namedtuple(name: str, fields: tuple[str, ...]) -> Any:
    """A namedtuple class built here (names checked as identifiers by collections.namedtuple),
    one for each name and fields among the last _MAX_NAMEDTUPLES."""
    key = (name, fields)
    if key not in _NAMEDTUPLES:
        if len(_NAMEDTUPLES) >= _MAX_NAMEDTUPLES:
            del _NAMEDTUPLES[next(iter(_NAMEDTUPLES))]
        _NAMEDTUPLES[key] = _imported("collections").namedtuple(name, fields)
    return _NAMEDTUPLES[key]


def _imported(name: str) -> Any:
    """A module imported when a value needs it (importlib.import_module, without importlib)."""
    __import__(name)
    return sys.modules[name]


def _encode_numpy(value: object, export: Export) -> Json | None:
    """A numpy scalar or array of numbers, booleans or text, where numpy is loaded already (so a
    value can only be numpy's if it is); None for anything else."""
    numpy = sys.modules.get("numpy")
    if numpy is None or not isinstance(value, numpy.generic | numpy.ndarray):
        return None
    dtype = value.dtype
    if dtype.kind not in _NUMPY_KINDS or dtype.fields is not None:
        return None
    if isinstance(value, numpy.generic):
        return ["npscalar", dtype.str, encode(value.item(), export)]
    return ["ndarray", dtype.str, list(value.shape), encode(value.tolist(), export)]


def _decode_numpy(tag: str, data: Json, resolve: Resolve) -> object:
    """A numpy value rebuilt with this process's numpy; without numpy, its Python numbers (and
    nested lists for an array)."""
    values = decode(data[3] if tag == "ndarray" else data[2], resolve)
    try:
        numpy = _imported("numpy")
    except ImportError:
        return values
    dtype = numpy.dtype(_text(data[1]))
    if dtype.kind not in _NUMPY_KINDS or dtype.fields is not None:
        raise ValueError(f"a dtype that is not plain data: {dtype}")
    if dtype.itemsize > _MAX_NUMPY_ITEM_BYTES:
        raise ValueError(f"a dtype of {dtype.itemsize} bytes an item")
    if tag == "npscalar":
        return dtype.type(values)
    shape = tuple(_whole(size) for size in _items(data[2]))
    return numpy.array(values, dtype=dtype).reshape(shape)


def _whole(data: Json) -> int:
    if type(data) is not int or data < 0:
        raise TypeError(f"expected a size, got {data!r}")
    return data


def _text(data: Json) -> str:
    if not isinstance(data, str):
        raise TypeError(f"expected a string, got {type(data).__name__}")
    return data


def _items(data: Json) -> list[Json]:
    if not isinstance(data, list):
        raise TypeError(f"expected a list, got {type(data).__name__}")
    return data


def _pairs(data: Json) -> list[tuple[Json, Json]]:
    pairs = []
    for pair in _items(data):
        key, value = _items(pair)
        pairs.append((key, value))
    return pairs


def describe_error(error: BaseException, named: Mapping[type, str]) -> dict[str, Json]:
    """An exception, as the other side rebuilds it: its type's name, its nearest built-in type,
    the solution's public name for its class (if `named` has one) and its message."""
    mro = type(error).__mro__
    name = next((named[c] for c in mro if c in named), None)
    try:  # KeyError's str() quotes its key: rebuilt from the key, it would be quoted twice
        single_key = isinstance(error, KeyError) and len(error.args) == 1
        message = str(error.args[0]) if single_key else str(error)
    except Exception:  # an exception whose __str__ fails is still an exception
        message = "<unprintable>"
    return {
        "type": type(error).__name__,
        "builtin": nearest_builtin(type(error)),
        "name": name,
        "message": message[:MAX_ERROR_CHARS],
    }


def nearest_builtin(cls: type[BaseException]) -> str:
    """The name of the first built-in exception type among `cls` and its bases."""
    return next(
        (c.__name__ for c in cls.__mro__ if BUILTIN_ERRORS.get(c.__name__) is c), "Exception"
    )


def rebuild_error(info: Json, local: Mapping[str, type[BaseException]]) -> BaseException:
    """The exception to raise for one the other side described: a class of `local` by its public
    name, else its nearest built-in type (the type's name first in the message when they differ),
    else a SolutionError carrying the type's name and message."""
    if not isinstance(info, dict):
        return SolutionError(f"an error that is not described: {type(info).__name__}")
    type_name, nearest = str(info.get("type")), str(info.get("builtin"))
    name, message = info.get("name"), str(info.get("message"))
    cls: type[BaseException] | None
    if isinstance(name, str) and name in local:
        cls, text = local[name], message
    else:
        cls = None if nearest in ("Exception", "BaseException") else BUILTIN_ERRORS.get(nearest)
        text = message if type_name == nearest else f"{type_name}: {message}"
    generic = SolutionError(f"{type_name}: {message}".rstrip(": "))
    if cls is None:
        return generic
    try:
        return cls(text)
    except Exception:  # a built-in type that wants other arguments (UnicodeDecodeError)
        return generic


class Endpoint:
    """One end of the wire: sends a request and waits for its reply, answering the other side's
    requests in between (a callback of the tests, or a call back into the solution from one)."""

    def __init__(self, read_fd: int, write_fd: int, serve: Serve) -> None:
        self.read_fd, self.write_fd, self.serve = read_fd, write_fd, serve

    def request(self, message: dict[str, Json]) -> dict[str, Json]:
        send(self.write_fd, message)
        while True:
            reply = receive(self.read_fd)
            if not isinstance(reply, dict):
                raise WireError(f"a reply that is not an object: {type(reply).__name__}")
            if "op" not in reply:
                return reply
            self.answer(reply)

    def answer(self, message: dict[str, Json]) -> None:
        reply = self.serve(message)
        try:
            send(self.write_fd, reply)
        except WireError as error:  # too big: nothing was sent, so say why instead
            send(self.write_fd, {"error": describe_error(error, {})})

    def serve_forever(self) -> None:
        """Answer requests until the other side closes the wire."""
        while True:
            message = receive(self.read_fd)
            if not isinstance(message, dict):
                raise WireError(f"a request that is not an object: {type(message).__name__}")
            self.answer(message)
