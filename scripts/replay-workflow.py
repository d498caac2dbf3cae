#!/usr/bin/env python3
"""Replay the GitHub Actions workflow of docs/ci.md on this machine, as GitHub would run it.

GitHub cannot be reached from here, so this reads the workflow (the first ```yaml block of a
Markdown file, or a .yml file) and runs its job's steps in order, the way a runner does:

- `run:` steps with `bash --noprofile --norc -eo pipefail`, as an unprivileged user (`--user`,
  created when missing, when this runs as root), with GITHUB_ENV, GITHUB_OUTPUT, GITHUB_PATH and
  GITHUB_STEP_SUMMARY files, step `env:`, `if:` conditions (`always()`, `success()`, `failure()`,
  `==`, `!=`, `&&`, `||`, `!`) and `${{ }}` expressions evaluated against inputs, steps' outputs
  and the parts of the `github` context a pull request has (base and head commits given here);
- `uses:` of benchyard's own action (this repository's action.yml: `./`, `OWNER/benchyard@REF`)
  expanded into its composite steps, its inputs from `with:`, defaults and `--input`;
- `actions/checkout`: a clone of `--repo` into the workspace (full history only with
  `fetch-depth: 0`, a single commit otherwise, as the real action does) at the head commit;
- `actions/setup-python`: `--python-bin` (a directory holding `python` and `pip`) first on PATH;
- `actions/upload-artifact`: the paths copied into OUT/artifacts/NAME, hidden files and
  directories left out unless `include-hidden-files: true` (as upload-artifact@v4 does);
- `actions/cache` (restore, save): GitHub's cache service; recorded as not replayed.

It writes OUT/replay.json: each step's name, outcome (success, failure, skipped) and exit
status, the job's outcome, the steps' outputs; OUT/step-summary.md holds what the steps wrote to
GITHUB_STEP_SUMMARY. It exits 0 when the job succeeded, 1 when it failed.

    usage: scripts/replay-workflow.py --workflow docs/ci.md --repo SRC --base SHA --head SHA
               --workspace DIR --out DIR [--user benchyard-ci] [--python-bin DIR] [--input K=V]
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
PASSED_THROUGH = re.compile(
    r"^(PIP_\w+|SSL_CERT_\w+|REQUESTS_CA_BUNDLE|HTTPS?_PROXY|NO_PROXY|https?_proxy|no_proxy)$"
)


def load_workflow(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        text = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    loaded = yaml.safe_load(text)
    if True in loaded:  # YAML 1.1 reads the key `on` as true
        loaded["on"] = loaded.pop(True)
    return dict(loaded)


# --- expressions -------------------------------------------------------------------------------

TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>&&|\|\||==|!=|!|\(|\))"
    r"|(?P<call>(?:always|success|failure|cancelled)\(\))|(?P<num>\d+)"
    r"|(?P<path>[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*)|(?P<bad>\S))"
)


def evaluate(expression: str, context: dict[str, Any], job_failed: bool) -> Any:
    """Evaluate one expression of GitHub's language (the subset action.yml and docs/ci.md use)."""
    tokens: list[tuple[str, str]] = []
    for match in TOKEN.finditer(expression):
        kind = match.lastgroup or "bad"
        if kind == "bad":
            raise ValueError(f"cannot evaluate ${{{{ {expression} }}}}: {match.group(kind)!r}")
        tokens.append((kind, match.group(kind)))
    position = 0

    def peek() -> str:
        return tokens[position][1] if position < len(tokens) else ""

    def take() -> tuple[str, str]:
        nonlocal position
        position += 1
        return tokens[position - 1]

    def primary() -> Any:
        kind, value = take()
        if value == "!":
            return not primary()
        if value == "(":
            result = either()
            take()
            return result
        if kind == "str":
            return value[1:-1].replace("''", "'")
        if kind == "num":
            return int(value)
        if kind == "call":
            return {"always()": True, "success()": not job_failed, "failure()": job_failed}.get(
                value, False
            )
        if value in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[value]
        found: Any = context
        for part in value.split("."):
            found = found.get(part) if isinstance(found, dict) else None
        return found

    def comparison() -> Any:
        left = primary()
        while peek() in ("==", "!="):
            operator = take()[1]
            right = primary()
            same = str(left).lower() == str(right).lower() if left is not None else right is None
            left = same if operator == "==" else not same
        return left

    def both() -> Any:
        left = comparison()
        while peek() == "&&":
            take()
            right = comparison()
            left = left and right
        return left

    def either() -> Any:
        left = both()
        while peek() == "||":
            take()
            right = both()
            left = left or right
        return left

    return either()


def substitute(text: str, context: dict[str, Any], job_failed: bool = False) -> str:
    def one(match: re.Match[str]) -> str:
        value = evaluate(match.group(1), context, job_failed)
        return (
            "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
        )

    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", one, str(text))


def condition(step: dict[str, Any], context: dict[str, Any], job_failed: bool) -> bool:
    expression = str(step.get("if", "success()")).strip()
    if expression.startswith("${{"):
        expression = expression[3:].rstrip("}").strip()
    if not re.search(r"\b(always|failure|cancelled|success)\(\)", expression):
        expression = f"success() && ({expression})"
    return bool(evaluate(expression, context, job_failed))


# --- the runner --------------------------------------------------------------------------------


class Runner:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.out = Path(args.out).resolve()
        self.workspace = Path(args.workspace).resolve()
        self.temp = self.out / "runner-temp"
        self.summary = self.out / "step-summary.md"
        self.paths: list[str] = []
        self.env: dict[str, str] = {}
        self.steps: list[dict[str, Any]] = []
        self.failed = False
        self.user = args.user if os.geteuid() == 0 and args.user else None
        if self.user:
            self.home = Path(ensure_user(self.user).pw_dir)
        else:
            self.home = Path.home()
        for directory in (self.out, self.temp, self.workspace.parent):
            directory.mkdir(parents=True, exist_ok=True)
        self.summary.touch()
        self.own(self.out, self.temp, self.summary, self.workspace.parent)
        self.github = {
            "event_name": "pull_request",
            "event": {
                "pull_request": {
                    "number": 1,
                    "base": {"sha": args.base, "ref": "main"},
                    "head": {"sha": args.head, "ref": "change"},
                }
            },
            "sha": args.head,
            "ref": "refs/pull/1/merge",
            "ref_name": "1/merge",
            "repository": "OWNER/project",
            "run_id": "1",
            "workspace": str(self.workspace),
            "action_path": "",
        }

    def own(self, *paths: Path) -> None:
        """Give the step's user what it writes: these paths themselves, never what they hold."""
        if self.user:
            entry = pwd.getpwnam(self.user)
            for path in paths:
                os.chown(path, entry.pw_uid, entry.pw_gid)

    def context(self, inputs: dict[str, Any], steps: dict[str, Any]) -> dict[str, Any]:
        return {
            "github": self.github,
            "inputs": inputs,
            "steps": steps,
            "env": self.env,
            "runner": {"temp": str(self.temp), "os": "Linux"},
            "secrets": {},
            "vars": {},
        }

    def run_job(self, workflow: dict[str, Any]) -> None:
        (job,) = workflow["jobs"].values()
        self.run_steps(job["steps"], inputs={}, action_path="")

    def run_steps(
        self, steps: list[dict[str, Any]], inputs: dict[str, Any], action_path: str
    ) -> None:
        outputs: dict[str, Any] = {}
        for number, step in enumerate(steps):
            context = self.context(inputs, outputs)
            name = str(step.get("name") or step.get("uses") or f"step {number + 1}")
            name = substitute(name, context)
            record: dict[str, Any] = {"name": name, "outcome": "skipped", "exit": None}
            if not condition(step, context, self.failed):
                self.steps.append(record)
                continue
            with_ = {k: substitute(v, context) for k, v in (step.get("with") or {}).items()}
            if "run" in step:
                env = {k: substitute(v, context) for k, v in (step.get("env") or {}).items()}
                status, step_outputs = self.shell(
                    substitute(step["run"], context), env, action_path, name
                )
                if step.get("id"):
                    outputs[step["id"]] = {"outputs": step_outputs}
            else:
                status, note = self.uses(str(step["uses"]), with_)
                record["note"] = note
            record["exit"] = status
            record["outcome"] = "success" if status == 0 else "failure"
            if status != 0:
                self.failed = True
            self.steps.append(record)

    def uses(self, uses: str, with_: dict[str, str]) -> tuple[int, str]:
        action = uses.split("@", 1)[0]
        if action == "./" or action == "." or action.endswith("/benchyard"):
            definition = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
            context = self.context({}, {})
            inputs: dict[str, Any] = {}
            for key, spec in (definition.get("inputs") or {}).items():
                inputs[key] = substitute(str(spec.get("default", "")), context)
            unknown = set(with_) - set(inputs)
            if unknown:
                return 1, f"unknown inputs: {sorted(unknown)}"
            inputs.update(with_)
            for item in self.args.input:
                key, _, value = item.partition("=")
                inputs[key] = value
            self.run_steps(definition["runs"]["steps"], inputs, str(ROOT))
            return (1 if self.failed else 0), "benchyard's action.yml, its steps replayed"
        if action == "actions/checkout":
            full = str(with_.get("fetch-depth", "1")) == "0"
            depth = [] if full else ["--depth", "1"]
            if self.workspace.exists():
                shutil.rmtree(self.workspace)
            status = self.command(
                [
                    "git",
                    "-c",
                    "safe.directory=*",
                    "clone",
                    "--quiet",
                    "--no-local",
                    *depth,
                    f"file://{self.args.repo}",
                    str(self.workspace),
                ],
                cwd=self.workspace.parent,
            )
            status = status or self.command(["git", "checkout", "--quiet", self.args.head])
            return status, "cloned" + (" with its whole history" if full else " at depth 1")
        if action == "actions/setup-python":
            self.paths.insert(0, str(Path(self.args.python_bin).resolve()))
            return 0, f"python from {self.args.python_bin}"
        if action == "actions/upload-artifact":
            return self.upload(with_)
        if action.startswith("actions/cache"):
            return 0, "GitHub's cache service: not replayed"
        return 1, f"no replay for {uses}"

    def upload(self, with_: dict[str, str]) -> tuple[int, str]:
        target = self.out / "artifacts" / with_.get("name", "artifact")
        hidden = str(with_.get("include-hidden-files", "false")).lower() == "true"
        copied: list[str] = []
        for line in str(with_.get("path", "")).splitlines():
            relative = line.strip().rstrip("/")
            source = self.workspace / relative
            if not relative or not source.exists():
                continue
            files = (
                [source]
                if source.is_file()
                else sorted(p for p in source.rglob("*") if p.is_file())
            )
            for file in files:
                inside = file.relative_to(self.workspace)
                if not hidden and any(part.startswith(".") for part in inside.parts):
                    continue
                (target / inside).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(file, target / inside)
                copied.append(str(inside))
        if not copied and with_.get("if-no-files-found", "warn") == "error":
            return 1, "no files found"
        return 0, f"uploaded {len(copied)} files"

    def base_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if PASSED_THROUGH.match(k)}
        path = [
            *self.paths,
            "/usr/local/sbin",
            "/usr/local/bin",
            "/usr/sbin",
            "/usr/bin",
            "/sbin",
            "/bin",
        ]
        env.update(
            HOME=str(self.home),
            USER=self.user or os.environ.get("USER", ""),
            PATH=":".join(path),
            LANG="C.UTF-8",
            CI="true",
            GITHUB_ACTIONS="true",
            GITHUB_WORKSPACE=str(self.workspace),
            GITHUB_STEP_SUMMARY=str(self.summary),
            GITHUB_EVENT_NAME="pull_request",
            GITHUB_SHA=self.args.head,
            GITHUB_RUN_ID="1",
            RUNNER_TEMP=str(self.temp),
            RUNNER_OS="Linux",
        )
        return env

    def as_user(self, argv: list[str]) -> list[str]:
        return ["runuser", "-u", self.user, "--", *argv] if self.user else argv

    def command(self, argv: list[str], cwd: Path | None = None) -> int:
        env = [f"{k}={v}" for k, v in self.base_env().items()]
        done = subprocess.run(
            self.as_user(["env", "-i", *env, *argv]), cwd=cwd or self.workspace, check=False
        )
        return done.returncode

    def shell(
        self, script: str, env: dict[str, str], action_path: str, name: str
    ) -> tuple[int, dict[str, str]]:
        files = {
            key: self.temp / f"{key.lower()}-{len(self.steps)}"
            for key in ("GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH")
        }
        for file in files.values():
            file.write_text("", encoding="utf-8")
        script_file = self.temp / f"step-{len(self.steps)}.sh"
        script_file.write_text(script, encoding="utf-8")
        self.own(script_file, *files.values())
        full = {**self.base_env(), **self.env, **env, **{k: str(v) for k, v in files.items()}}
        if action_path:
            full["GITHUB_ACTION_PATH"] = action_path
        print(f"== replay: {name}", flush=True)
        argv = ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script_file)]
        done = subprocess.run(
            self.as_user(["env", "-i", *(f"{k}={v}" for k, v in full.items()), *argv]),
            cwd=self.workspace,
            check=False,
        )
        self.env.update(read_pairs(files["GITHUB_ENV"]))
        self.paths[:0] = [
            p for p in files["GITHUB_PATH"].read_text(encoding="utf-8").splitlines() if p
        ]
        return done.returncode, read_pairs(files["GITHUB_OUTPUT"])


def read_pairs(path: Path) -> dict[str, str]:
    """KEY=value lines, and KEY<<DELIMITER blocks, as GitHub reads GITHUB_ENV and GITHUB_OUTPUT."""
    pairs: dict[str, str] = {}
    lines = iter(path.read_text(encoding="utf-8").splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delimiter = line.split("<<", 1)
            block: list[str] = []
            for inner in lines:
                if inner == delimiter:
                    break
                block.append(inner)
            pairs[key] = "\n".join(block)
        elif "=" in line:
            key, value = line.split("=", 1)
            pairs[key] = value
    return pairs


def ensure_user(name: str) -> pwd.struct_passwd:
    """The unprivileged user the steps run as (a runner's user), created when missing."""
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--create-home",
                "--home-dir",
                f"/var/lib/{name}",
                "--shell",
                "/bin/bash",
                name,
            ],
            check=True,
        )
        return pwd.getpwnam(name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workflow", default=str(ROOT / "docs" / "ci.md"))
    parser.add_argument("--repo", required=True, help="the repository the workflow runs on")
    parser.add_argument("--base", required=True, help="the pull request's base commit")
    parser.add_argument("--head", required=True, help="the pull request's head commit")
    parser.add_argument("--workspace", required=True, help="where it is checked out (created)")
    parser.add_argument("--out", required=True, help="replay.json, step-summary.md, artifacts/")
    parser.add_argument("--user", default="benchyard-ci", help="run steps as this user when root")
    parser.add_argument("--python-bin", default=str(Path(sys.executable).parent))
    parser.add_argument("--input", action="append", default=[], help="NAME=VALUE for the action")
    args = parser.parse_args()
    args.repo = str(Path(args.repo).resolve())
    runner = Runner(args)
    workflow = load_workflow(Path(args.workflow))
    runner.run_job(workflow)
    report = {
        "outcome": "failure" if runner.failed else "success",
        "steps": runner.steps,
        "env": runner.env,
        "user": runner.user,
    }
    (runner.out / "replay.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(f"== replay: the job's outcome: {report['outcome']}", flush=True)
    return 1 if runner.failed else 0


if __name__ == "__main__":
    sys.exit(main())
