"""The solution's process of `code_exec`: imports the model's solution and answers the tests
process's requests over the wire (code_exec_wire.py): calls, attribute reads, iteration, len,
indexing, str and repr on the solution's objects.

The driver (code_exec_driver.py) forks this process before it reads the marker or the tests, and
runs `serve` here, which waits for the driver's `start` (sent once the marker and the tests are
read and deleted, and the driver is non-dumpable) before it imports anything of the model's.

Everything here runs in the model's process, so the tests process trusts none of it: it decodes
only plain data and handles, whatever this process sends.
"""

from __future__ import annotations

import os
import sys

# No `contextlib`, `importlib` nor `types`: each import costs every grading its CPU (wire's note).
# TYPE_CHECKING is mypy's name.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

    Json = Any


Module = type(sys)


class Callback:
    """A function of the tests, which the solution can call and do nothing else with."""

    def __init__(self, server: Server, number: int) -> None:
        self._server, self._number = server, number

    def __call__(self, *args: object, **kwargs: object) -> object:
        return self._server.call_back(self._number, args, kwargs)


class Server:
    def __init__(self, wire: ModuleType, read_fd: int, write_fd: int) -> None:
        self.wire = wire
        self.endpoint = wire.Endpoint(read_fd, write_fd, self.serve)
        self.objects: dict[int, object] = {}  # handle number -> object, kept alive for the tests
        self.numbers: dict[int, int] = {}  # id(object) -> handle number: one handle per object
        self.exception_names: dict[type, str] = {}  # the module's exception classes

    def export(self, value: object) -> list[Json]:
        number = self.numbers.get(id(value))
        if number is None:
            number = self.numbers[id(value)] = len(self.objects)
            self.objects[number] = value
        return ["handle", number, type(value).__qualname__[:200]]

    def resolve(self, data: list[Json]) -> object:
        if data[0] == "ref" and data[1] in self.objects:
            return self.objects[data[1]]
        if data[0] == "callback" and isinstance(data[1], int):
            return Callback(self, data[1])
        raise self.wire.WireError(f"not a value the solution knows: {data[0]!r}")

    def encode(self, value: object) -> Json:
        return self.wire.encode(value, self.export)

    def decode(self, data: Json) -> object:
        return self.wire.decode(data, self.resolve)

    def names(self, module: ModuleType) -> dict[str, Json]:
        """The module's names for the tests: stdlib modules by name (the tests import their own),
        exception classes by their nearest built-in type, the rest as values or handles."""
        listed: dict[str, Json] = {}
        for name, value in list(vars(module).items()):
            if name.startswith("__"):
                continue
            if isinstance(value, Module):
                if value.__name__.partition(".")[0] in sys.stdlib_module_names:
                    listed[name] = ["module", value.__name__]
                    continue
            elif isinstance(value, type) and issubclass(value, BaseException):
                self.exception_names[value] = name
                listed[name] = ["exception", self.wire.nearest_builtin(value)]
                continue
            try:
                listed[name] = self.encode(value)
            except (self.wire.WireError, RecursionError):  # a value too deep to send: a handle
                listed[name] = self.export(value)
        return listed

    def serve(self, message: dict[str, Json]) -> Json:
        try:
            target = self.objects[message["target"]]
            op = message["op"]
            if op == "call":
                return self._call(target, message)
            return {"value": self.encode(self._ask(op, target, message))}
        except BaseException as error:  # SystemExit too: the tests see what the solution raised
            return {"error": self.wire.describe_error(error, self.exception_names)}

    def _call(self, target: Any, message: dict[str, Json]) -> Json:
        args = [self.decode(item) for item in message["args"]]
        kwargs = {str(key): self.decode(item) for key, item in message["kwargs"].items()}
        reply = {"value": self.encode(target(*args, **kwargs))}
        changed = self._changed(message, args, kwargs)
        if changed:
            reply["changed"] = changed
        return reply

    def _changed(
        self, message: dict[str, Json], args: list[object], kwargs: dict[str, object]
    ) -> list[Json]:
        """The arguments (list, dict, set) the call changed in place, for the tests' copies."""
        sent = [*enumerate(message["args"]), *message["kwargs"].items()]
        now = [*enumerate(args), *kwargs.items()]
        changed = []
        for (key, before), (_, value) in zip(sent, now, strict=True):
            if isinstance(before, list) and before and before[0] in ("list", "dict", "set"):
                after = self.encode(value)
                if after != before:
                    changed.append([key, after])
        return changed

    def _ask(self, op: str, target: Any, message: dict[str, Json]) -> object:
        if op == "getattr":
            return getattr(target, str(message["name"]))
        if op == "iter":
            return iter(target)
        if op == "next":
            return next(target)
        if op == "len":
            return len(target)
        if op == "getitem":
            return target[self.decode(message["key"])]
        if op == "str":
            return str(target)
        if op == "repr":
            return repr(target)
        raise self.wire.WireError(f"no such request: {op!r}")

    def call_back(self, number: int, args: tuple[object, ...], kwargs: dict[str, object]) -> object:
        reply = self.endpoint.request(
            {
                "op": "callback",
                "target": number,
                "args": [self.encode(item) for item in args],
                "kwargs": {key: self.encode(item) for key, item in kwargs.items()},
            }
        )
        if "error" in reply:
            raise self.wire.rebuild_error(reply["error"], {})
        return self.decode(reply.get("value"))


def serve(wire: ModuleType, module_name: str, read_fd: int, write_fd: int) -> int:
    """Wait for `start`, import the solution, send its names, then answer requests until the
    tests process closes the wire."""
    server = Server(wire, read_fd, write_fd)
    if wire.receive(read_fd) != {"op": "start"}:
        return 1
    sys.path.insert(0, os.getcwd())
    try:
        __import__(module_name)
        module = sys.modules[module_name]
    except BaseException as error:  # SystemExit too: exiting while imported is a failure
        wire.send(write_fd, {"failed": wire.describe_error(error, {})})
        return 1
    try:
        wire.send(write_fd, {"ready": server.names(module)})
    except wire.WireError as error:  # names too big to send
        wire.send(write_fd, {"failed": wire.describe_error(error, {})})
        return 1
    try:  # noqa: SIM105 (contextlib: an import more)
        server.endpoint.serve_forever()
    except wire.WireClosed:  # the tests are done
        pass
    return 0
