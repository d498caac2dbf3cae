"""The `code_exec` driver: run the test asserts against the model's solution, then print the marker.

Usage: python3 -I -c <this file> MARKER_FILE MODULE TESTS_FILE MODE [NAMES], with the sources of
code_exec_wire.py and code_exec_solution.py (each maybe packed: checks/code_support.py, packed) in
the variables BENCHYARD_MODULE_code_exec_wire and BENCHYARD_MODULE_code_exec_solution.

The tests run with the solution's module (MODULE) and some of its names as globals: the names in
NAMES (comma-separated: the entry point and the names the benchmark declares, which may be named
like a builtin, as MBPP's `sum`) or, without NAMES, all of them but those named like a builtin
(`abs`, `len`, `sorted`, `isinstance`, ...), which stay the tests' own: a solution's module-level
`abs` would otherwise be what the asserts call. Every name stays reachable as an attribute of the
module (`import solution`).

MODE `process` (the default): this process runs the tests and the solution runs in a process of
its own (code_exec_solution.py), forked before this one reads the marker and the tests. Before
letting it import the solution, this process reads and deletes the marker and the tests, and makes
itself non-dumpable, so that the solution, though it runs as the same user, can neither read this
process's memory nor reach its file descriptors (/proc/PID/mem, /fd). The tests see proxies of
the solution's names: a call crosses a pipe and its result comes back as plain data
(code_exec_wire.py), or as a handle on an object of the solution whose ==, hash and truth are
those of any object. Nothing the solution does to its own process (tracing hooks, patched builtins,
frames walked, an `__eq__` that always says yes, an early exit) reaches the tests.

MODE `same`: the solution is imported into this process, next to the tests; its code can forge a
pass (the `same_process` parameter, for tests that need the solution's own objects).

This process alone writes on stdout, which the harness reads: first `benchyard: ready` (or
`benchyard: cannot run: <why>` when the sandbox lacks what this needs), before anything of the
model's runs; then, after the last assert, the marker, or else a line `benchyard-code-exec: <why>`.
The tests' own prints go to stderr, as does everything the solution process writes.
"""

from __future__ import annotations

import builtins
import os
import sys

# What this process imports before it forks, the solution's process pays too; what it imports
# after, it pays alone: each costs a grading its CPU (code_exec_wire.py's note). So no
# `contextlib`, `importlib` (`__import__` instead) nor `types` (ModuleType is type(sys)), and
# `ctypes` only where `_ctypes` cannot do prctl (forbid_dumps). TYPE_CHECKING is mypy's name.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType, TracebackType
    from typing import Any

    Json = Any

READY = b"benchyard: ready\n"
CANNOT_RUN = "benchyard: cannot run: "
PREFIX = "benchyard-code-exec: "
APART, SAME = "process", "same"
MODULE_ENV = "BENCHYARD_MODULE_"  # + a bundled module's name: its source (code_support.py's)
WIRE, SERVER = "code_exec_wire", "code_exec_solution"
PR_GET_DUMPABLE, PR_SET_DUMPABLE = 3, 4
SIGKILL = 9  # Linux's; `signal` would import `enum`
FUNCTION_TYPES = ("function", "method", "builtin_function_or_method", "partial")
BUILTIN_NAMES = frozenset(vars(builtins))  # taken before anything of the model's runs
Module = type(sys)


class Lost(BaseException):
    """The solution process ended, or broke the protocol, while the tests ran. A BaseException,
    so that a test's `except Exception` does not swallow it (and it is remembered anyway)."""


class NotImported(Exception):
    """The solution's process could not import the solution (its error, described)."""


class Remote:
    """An object of the solution's process. Calls, attribute reads, iteration, len, indexing, str
    and repr go across; ==, ordering, hashing and truth stay those of any object (identity), so a
    Remote never passes for a value it is not."""

    __slots__ = ("_label", "_number", "_solution", "_type")

    def __init__(self, solution: Solution, number: int, type_name: str, label: str) -> None:
        self._solution, self._number, self._type, self._label = solution, number, type_name, label

    def __call__(self, *args: object, **kwargs: object) -> object:
        return self._solution.call(self, args, kwargs)

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):  # probes such as __deepcopy__ stay here
            raise AttributeError(name)
        return self._solution.ask("getattr", self, f"{self._label}.{name}", name=name)

    def __iter__(self) -> Any:
        return self._solution.ask("iter", self, f"iter({self._label})")

    def __next__(self) -> object:
        return self._solution.ask("next", self, f"next({self._label})")

    def __len__(self) -> int:
        length = self._solution.ask("len", self, "")
        if type(length) is not int:
            raise TypeError(f"len() of a {self._type} gave a {type(length).__name__}")
        return length

    def __getitem__(self, key: object) -> object:
        encoded = self._solution.encode(key)
        return self._solution.ask("getitem", self, f"{self._label}[...]", key=encoded)

    def __str__(self) -> str:
        return self._text("str")

    def __repr__(self) -> str:
        return self._text("repr")

    def __bool__(self) -> bool:
        return True  # as any object: the solution does not decide what a test's `if` sees

    def _text(self, op: str) -> str:
        try:
            text = self._solution.ask(op, self, "")
        except Lost:  # remembered by the Solution; a failure's description must not fail
            return f"<{self._type} of the solution>"
        if type(text) is not str:
            raise TypeError(f"{op}() of a {self._type} gave a {type(text).__name__}")
        return text


class Solution:
    """The solution's process, as the tests process talks to it."""

    def __init__(self, wire: Any, pid: int, read_fd: int, write_fd: int) -> None:
        self.wire, self.pid = wire, pid
        self.endpoint = wire.Endpoint(read_fd, write_fd, self._serve)
        self.remotes: dict[int, Remote] = {}
        self.callbacks: list[Callable[..., object]] = []
        self.exceptions: dict[str, type[BaseException]] = {}  # the solution's, rebuilt here
        self.returned: list[str] = []  # functions that returned a non-plain object
        self.broken: str | None = None  # why the solution's process is gone, if it is
        self.ready = False

    def first_message(self) -> dict[str, Json]:
        try:
            message = self.wire.receive(self.endpoint.read_fd)
        except (self.wire.WireError, OSError) as error:
            raise self._lose(error) from None
        if not isinstance(message, dict):
            raise self._lose(self.wire.WireError("its first message is not an object"))
        return message

    def names(self, listed: Json, module_name: str) -> dict[str, object]:
        """The solution's names, as the tests see them."""
        if not isinstance(listed, dict):
            raise self._lose(self.wire.WireError("its names are not an object"))
        names: dict[str, object] = {}
        for name, data in listed.items():
            tag = data[0] if isinstance(data, list) and data else None
            if tag == "module":
                module = _stdlib_module(data[1])
                if module is not None:
                    names[name] = module
            elif tag == "exception":
                base = self.wire.BUILTIN_ERRORS.get(data[1], Exception)
                rebuilt = type(name, (base,), {"__module__": module_name})
                names[name] = self.exceptions[name] = rebuilt
            else:
                names[name] = self.decode(data, name)
        return names

    def call(self, remote: Remote, args: tuple[object, ...], kwargs: dict[str, object]) -> object:
        reply = self._request(
            {
                "op": "call",
                "target": remote._number,
                "args": [self.encode(item) for item in args],
                "kwargs": {key: self.encode(item) for key, item in kwargs.items()},
            }
        )
        self._update(reply.get("changed"), args, kwargs)
        result = self.decode(reply.get("value"), f"{remote._label}()")
        if isinstance(result, Remote) and remote._type in FUNCTION_TYPES:
            self.returned.append(f"{remote._label}() returned a non-plain object ({result._type})")
        return result

    def ask(self, op: str, remote: Remote, label: str, **fields: Json) -> object:
        reply = self._request({"op": op, "target": remote._number, **fields})
        return self.decode(reply.get("value"), label)

    def encode(self, value: object) -> Json:
        return self.wire.encode(value, self._export)

    def decode(self, data: Json, label: str) -> object:
        try:
            return self.wire.decode(data, lambda tagged: self._resolve(tagged, label))
        except self.wire.WireError as error:
            raise self._lose(error) from None

    def start(self) -> None:
        """Let the solution's process import the solution."""
        try:
            self.wire.send(self.endpoint.write_fd, {"op": "start"})
        except OSError as error:
            raise self._lose(error) from None

    def stop(self) -> None:
        try:  # noqa: SIM105 (contextlib: an import more)
            os.kill(self.pid, SIGKILL)
        except OSError:  # ended already
            pass

    def wait(self) -> int:
        """The exit status of the solution's process (it closed its end: it is ending)."""
        return os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])

    def _request(self, message: dict[str, Json]) -> dict[str, Json]:
        if self.broken is not None:
            raise Lost(self.broken)
        try:
            reply: dict[str, Json] = self.endpoint.request(message)
        except (self.wire.WireError, OSError) as error:
            raise self._lose(error) from None
        if "error" in reply:
            raise self.wire.rebuild_error(reply["error"], self.exceptions) from None
        return reply

    def _lose(self, error: Exception) -> Lost:
        if self.broken is None:
            when = "while the tests ran" if self.ready else "before it was ready"
            self.broken = (
                f"the solution's process ended (exit {self.wait()}) {when}"
                if isinstance(error, self.wire.WireClosed | OSError)
                else f"the solution's process broke the protocol {when}: {error}"
            )
        return Lost(self.broken)

    def _resolve(self, tagged: list[Json], label: str) -> Remote:
        if len(tagged) != 3 or tagged[0] != "handle" or type(tagged[1]) is not int:
            raise self.wire.WireError(f"not plain data nor a handle: {str(tagged[0])[:40]!r}")
        number = tagged[1]
        if number not in self.remotes:  # one Remote per object of the solution
            self.remotes[number] = Remote(self, number, str(tagged[2])[:200], label)
        return self.remotes[number]

    def _export(self, value: object) -> list[Json]:
        if isinstance(value, Remote) and value._solution is self:
            return ["ref", value._number]
        if callable(value):
            self.callbacks.append(value)
            return ["callback", len(self.callbacks) - 1]
        raise TypeError(
            f"a {type(value).__name__} cannot be passed to the solution's process: only plain "
            "data, the solution's own objects and functions go across (see same_process)"
        )

    def _update(self, changed: Json, args: tuple[object, ...], kwargs: dict[str, object]) -> None:
        """Arguments the solution changed in place (a list sorted, a dict filled): the tests' own
        objects get the new contents, as if the call had been made in their process."""
        for entry in changed if isinstance(changed, list) else []:
            key, data = entry if isinstance(entry, list) and len(entry) == 2 else (None, None)
            original = (
                args[key]
                if type(key) is int and 0 <= key < len(args)
                else kwargs.get(key)
                if type(key) is str
                else None
            )
            if type(original) not in (list, dict, set):
                continue
            new = self.decode(data, "")
            if type(new) is not type(original):
                continue
            if isinstance(original, list) and isinstance(new, list):
                original[:] = new
            elif isinstance(original, dict) and isinstance(new, dict):  # noqa: SIM114 (types)
                original.clear()
                original.update(new)
            elif isinstance(original, set) and isinstance(new, set):
                original.clear()
                original.update(new)

    def _serve(self, message: dict[str, Json]) -> Json:
        """A callback: the solution calls one of the functions the tests passed it."""
        try:
            number = message.get("target")
            if message.get("op") != "callback" or type(number) is not int:
                raise self.wire.WireError("the tests process answers only callbacks")
            if not 0 <= number < len(self.callbacks):
                raise self.wire.WireError(f"no callback {number}")
            args = [self.decode(item, "") for item in message.get("args", [])]
            kwargs = {str(k): self.decode(v, "") for k, v in message.get("kwargs", {}).items()}
            return {"value": self.encode(self.callbacks[number](*args, **kwargs))}
        except Exception as error:  # the test function's own exception, for the solution
            return {"error": self.wire.describe_error(error, {})}


def _stdlib_module(name: Json) -> ModuleType | None:
    """A standard-library module the solution imported, imported here for the tests (this process
    has no workdir on its path, so it gets the genuine one)."""
    if not isinstance(name, str) or name.partition(".")[0] not in sys.stdlib_module_names:
        return None
    try:
        return import_module(name)
    except ImportError:
        return None


def import_module(name: str) -> ModuleType:
    """importlib.import_module(name), without importing importlib."""
    __import__(name)
    return sys.modules[name]


def bundled(name: str) -> str:
    """The source of a bundled module, taken out of the environment (MODULE_ENV + its name), so
    that no process started from here inherits it."""
    return os.environ.pop(MODULE_ENV + name)


def load_source(source: str, name: str) -> ModuleType:
    """A bundled script, given as source or packed with its bytecode (`#benchyard-code <magic>
    <bytecode> <source>`, the last two zlib-compressed and in base64: checks/code_support.py,
    packed), loaded as a module: from the bytecode when this interpreter has that magic number,
    else from the source, compiled here."""
    module = Module(name)
    sys.modules[name] = module
    if source.startswith("#benchyard-code "):
        import binascii
        import zlib

        _, magic, packed_code, packed_source = source.split(" ")
        here = getattr(sys.modules.get("_frozen_importlib_external"), "MAGIC_NUMBER", b"")
        if magic == here.hex():
            import marshal

            exec(marshal.loads(zlib.decompress(binascii.a2b_base64(packed_code))), module.__dict__)
            return module
        source = zlib.decompress(binascii.a2b_base64(packed_source)).decode("utf-8")
    exec(compile(source, f"{name}.py", "exec"), module.__dict__)
    return module


def forbid_dumps() -> None:
    """prctl(PR_SET_DUMPABLE, 0): processes of the same user can no longer read this one's memory,
    environment or file descriptors through /proc, nor ptrace it. Made through `_ctypes` (a fifth
    of `ctypes`'s import) and confirmed by PR_GET_DUMPABLE; else through `ctypes`, which says why
    prctl failed."""
    if not _undumpable_through_ctypes_module():
        _forbid_dumps_through_ctypes()


def _undumpable_through_ctypes_module() -> bool:
    """Whether prctl, called through `_ctypes` (ctypes's C module), left this process
    non-dumpable; False too where that module lacks a function this needs."""
    try:
        import _ctypes

        this_program = _ctypes.dlopen(None)  # type: ignore[arg-type]  # dlopen(NULL): with libc
        prctl = _ctypes.dlsym(this_program, "prctl")
        _ctypes.call_function(prctl, (PR_SET_DUMPABLE, 0, 0, 0, 0))
        dumpable: int = _ctypes.call_function(prctl, (PR_GET_DUMPABLE, 0, 0, 0, 0))
        return dumpable == 0
    except (ImportError, AttributeError, OSError, TypeError):
        return False


def _forbid_dumps_through_ctypes() -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl(PR_SET_DUMPABLE, 0) failed: {os.strerror(errno)}")


def take(path: str) -> str:
    """Read a file, then delete it, so that nothing started later can read it."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    os.unlink(path)
    return text


def fork_solution(wire: Any, solution_source: str, module: str) -> Solution:
    """Fork the solution's process, before this one reads the marker or the tests (so the copy
    holds neither); it waits for `start` before it imports the solution. Its stdout and stderr
    are this process's stderr, never its stdout, which carries the marker. Forking an interpreter
    already started costs a fraction of starting one."""
    request_read, request_write = os.pipe()
    reply_read, reply_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the solution's process
        status = 1
        try:
            os.dup2(2, 1)
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            for fd in _open_fds():  # the stdout pipe, this process's other ends, the sandbox's
                if fd not in (request_read, reply_write):
                    try:  # noqa: SIM105 (contextlib: an import more)
                        os.close(fd)
                    except OSError:  # the listing's own fd, closed since
                        pass
            server = load_source(solution_source, SERVER)
            status = server.serve(wire, module, request_read, reply_write)
        finally:
            os._exit(status)
    os.close(request_read)
    os.close(reply_write)
    return Solution(wire, pid, reply_read, request_write)


def _open_fds() -> list[int]:
    return [int(name) for name in os.listdir("/proc/self/fd") if int(name) > 2]


def _where(trace: TracebackType | None, tests: str) -> str:
    """The line of the tests that failed, as `tests line N: <source>: `: the innermost frame of
    the tests' own (walked here: `traceback` costs a grading 4 ms of imports)."""
    number: int | None = None
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == "<tests>":
            number = trace.tb_lineno
        trace = trace.tb_next
    if number is None:
        return ""
    lines = tests.splitlines()
    source = lines[number - 1].strip() if 0 < number <= len(lines) else ""
    return f"tests line {number}: {source}: "


def _say(line: str) -> None:
    os.write(1, f"\n{line}\n".encode("utf-8", errors="replace"))


def _fail(stage: str, error: BaseException | None = None, where: str = "", note: str = "") -> int:
    detail = f"{type(error).__name__}: {error}".rstrip(": ") if error is not None else ""
    _say(f"{PREFIX}{stage}: {where}{detail}".rstrip(": ") + note)
    return 1


def _in_process(module_name: str) -> dict[str, object]:
    """The `same` mode: the solution imported here, its names next to the tests'."""
    sys.path.insert(0, os.getcwd())
    solution = import_module(module_name)
    names = {name: value for name, value in vars(solution).items() if not name.startswith("__")}
    return {module_name: solution, **names}  # a function named like the module keeps its name


def _apart(solution: Solution, module_name: str) -> dict[str, object]:
    """The default mode: proxies of the solution's names, and `import <module>` gives them too."""
    first = solution.first_message()
    if "failed" in first:
        info = first["failed"] if isinstance(first["failed"], dict) else {}
        raise NotImported(f"{info.get('type')}: {info.get('message')}".rstrip(": "))
    names = solution.names(first.get("ready"), module_name)
    solution.ready = True
    proxy = Module(module_name, "The solution, running in a process of its own.")
    proxy.__dict__.update(names)
    sys.modules[module_name] = proxy
    return {module_name: proxy, **names}


def crossing(
    names: dict[str, object], module_name: str, declared: list[str] | None
) -> dict[str, object]:
    """The solution's names that become globals of the tests: the module and the declared names
    (a declared one may be named like a builtin: it is the benchmark's entry point); when none
    are declared, every name but one that would shadow a builtin."""
    if declared is None:
        return {name: value for name, value in names.items() if name not in BUILTIN_NAMES}
    allowed = {module_name, *declared}
    return {name: value for name, value in names.items() if name in allowed}


def run(tests: str, module_name: str, solution: Solution | None, declared: list[str] | None) -> int:
    """Compile and run the tests; 0 when every assert held."""
    try:
        code = compile(tests, "<tests>", "exec", dont_inherit=True)
    except SyntaxError as error:
        return _fail("the tests do not compile", error)
    try:
        if solution is not None:
            solution.start()
        names = _in_process(module_name) if solution is None else _apart(solution, module_name)
    except Lost as error:
        return _fail(str(error))
    except BaseException as error:  # SystemExit too: exiting while imported is a failure
        if isinstance(error, NotImported):
            return _fail(f"the solution could not be imported: {error}")
        return _fail("the solution could not be imported", error)
    namespace = {**crossing(names, module_name, declared), "__name__": "__benchyard_tests__"}
    try:
        exec(code, namespace)
    except BaseException as error:
        where = _where(error.__traceback__, tests)
        if solution is not None and solution.broken is not None:
            return _fail(solution.broken, where=where)
        note = ""
        if solution is not None and solution.returned:
            note = f" (note: {solution.returned[-1]}, which the tests compare by identity)"
        return _fail("a test failed", error, where, note)
    if solution is not None and solution.broken is not None:  # caught by the tests: still lost
        return _fail(solution.broken)
    return 0


def main(argv: list[str]) -> int:
    marker_file, module_name, tests_file, mode, *listed = argv
    declared = listed[0].split(",") if listed else None
    write = os.write  # kept before the solution can replace it (the `same` mode)
    solution = None
    try:
        wire_source, solution_source = bundled(WIRE), bundled(SERVER)
        wire = load_source(wire_source, WIRE)
        if mode == APART:
            solution = fork_solution(wire, solution_source, module_name)
        marker = take(marker_file)
        if mode == APART:
            forbid_dumps()
    except (OSError, ImportError, AttributeError, KeyError) as error:
        write(1, f"{CANNOT_RUN}{type(error).__name__}: {error}\n".encode())
        return 2
    write(1, READY)
    sys.stdout = sys.stderr  # the tests' prints: stdout carries this driver's lines alone
    try:
        tests = take(tests_file)
    except (OSError, UnicodeDecodeError) as error:
        return _fail("the tests could not be read", error)
    status = run(tests, module_name, solution, declared)
    if solution is not None:
        solution.stop()
    if status == 0:
        write(1, f"\n{marker}\n".encode())
    return status


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stderr.flush()
    os._exit(status)  # neither the solution's threads nor its atexit hooks may change the outcome
