"""The `static` check's scanner: syntax, a few lint rules and forbidden patterns over files.

Usage: python3 -I -c <this file> CONFIG_JSON

CONFIG_JSON holds `files` (glob patterns, relative to the current directory), `only` (a list of
paths to keep, or null), `syntax` (bool), `lint` (rule names) and `forbidden` (regular
expressions). Prints `benchyard: ready`, then one JSON object:
{"checked": [paths], "findings": [{file, line, rule, message}]}.
Nothing it reads is imported or executed.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

MAX_FILE_BYTES = 2 * 1024 * 1024
READY = b"benchyard: ready\n"
Finding = dict[str, Any]


def _finding(path: str, line: int, rule: str, message: str) -> Finding:
    return {"file": path, "line": line, "rule": rule, "message": message}


def _unused_imports(tree: ast.Module, path: str) -> list[Finding]:
    imported: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                continue
            for alias in node.names:
                if alias.name != "*":
                    imported[alias.asname or alias.name.split(".")[0]] = node.lineno
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    exported = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    return [
        _finding(path, line, "unused-import", f"'{name}' imported but unused")
        for name, line in imported.items()
        if name not in used and name not in exported
    ]


def _is_mutable(node: ast.expr) -> bool:
    if isinstance(node, ast.List | ast.Dict | ast.Set):
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in {"list", "dict", "set"}
    )


def _is_star_import(node: ast.AST) -> bool:
    return isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names)


def _node_rules(tree: ast.Module, path: str, rules: set[str]) -> list[Finding]:
    found = []
    for node in ast.walk(tree):
        if "bare-except" in rules and isinstance(node, ast.ExceptHandler) and node.type is None:
            found.append(_finding(path, node.lineno, "bare-except", "bare 'except:'"))
        if "star-import" in rules and _is_star_import(node):
            line = getattr(node, "lineno", 0)
            found.append(_finding(path, line, "star-import", "'import *'"))
        if "mutable-default" in rules and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for default in [*node.args.defaults, *node.args.kw_defaults]:
                if default is not None and _is_mutable(default):
                    found.append(
                        _finding(
                            path,
                            default.lineno,
                            "mutable-default",
                            f"mutable default argument in '{node.name}'",
                        )
                    )
    return found


def _python(path: str, text: str, config: dict[str, Any]) -> list[Finding]:
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as error:
        if not config["syntax"]:
            return []
        return [_finding(path, error.lineno or 0, "syntax", f"{error.msg}")]
    except (ValueError, RecursionError, MemoryError) as error:  # a NUL byte, nesting too deep:
        # the file's own doing, so a finding; a crash here would make the check unable to run
        return [_finding(path, 0, "syntax", f"cannot be parsed: {type(error).__name__}")]
    rules = set(config["lint"])
    found = _unused_imports(tree, path) if "unused-import" in rules else []
    return found + _node_rules(tree, path, rules)


def _json(path: str, text: str, config: dict[str, Any]) -> list[Finding]:
    if not config["syntax"]:
        return []
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        return [_finding(path, error.lineno, "syntax", error.msg)]
    except (RecursionError, MemoryError) as error:
        return [_finding(path, 0, "syntax", f"cannot be parsed: {type(error).__name__}")]
    return []


def _forbidden(path: str, text: str, patterns: list[str]) -> list[Finding]:
    found = []
    for pattern in patterns:
        match = re.search(pattern, text, re.MULTILINE)
        if match:
            line = text.count("\n", 0, match.start()) + 1
            found.append(
                _finding(path, line, "forbidden", f"matches forbidden pattern /{pattern}/")
            )
    return found


def _files(config: dict[str, Any]) -> list[str]:
    only = set(config["only"]) if config["only"] is not None else None
    paths: set[str] = set()
    for pattern in config["files"]:
        for path in Path(".").glob(pattern):
            name = path.as_posix()
            if path.is_file() and not path.is_symlink() and (only is None or name in only):
                paths.add(name)
    return sorted(paths)


def main(argv: list[str]) -> int:
    os.write(1, READY)  # the harness's sign that python3 started (checks/code_support.py)
    config = json.loads(argv[0])
    checked, findings = [], []
    for path in _files(config):
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES)
        text = data.decode("utf-8", errors="replace")
        checked.append(path)
        if path.endswith(".py"):
            findings += _python(path, text, config)
        elif path.endswith(".json"):
            findings += _json(path, text, config)
        findings += _forbidden(path, text, config["forbidden"])
    findings.sort(key=lambda finding: (finding["file"], finding["line"]))
    print(json.dumps({"checked": checked, "findings": findings}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
