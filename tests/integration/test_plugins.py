"""Other packages extend benchyard through entry points: a check type and an agent kind from a plugin."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support import write_benchmark

PLUGIN = '''
from benchyard.checks.base import CheckParams, CheckResult, Evidence
from benchyard.checks.registry import check


class PalindromeParams(CheckParams):
    ignore_case: bool = True


@check("palindrome", PalindromeParams)
def palindrome(params: PalindromeParams, evidence: Evidence) -> CheckResult:
    """The answer reads the same backwards."""
    text = evidence.answer.lower() if params.ignore_case else evidence.answer
    return CheckResult.of(text == text[::-1], f"{evidence.answer!r} reversed is {evidence.answer[::-1]!r}")


class Echo:
    needs_workdir = False

    def __init__(self, name, config):
        self.name = name
        self.config = config

    def describe(self):
        return dict(self.config)

    async def run(self, task):
        from benchyard.agents.base import AgentResult
        return AgentResult(answers=[task.scenario.stimulus.turns[-1]], turns=1)


def make_echo(name, config):
    return Echo(name, config)
'''


def test_check_and_agent_plugins_from_entry_points(tmp_path: Path, db_url: str) -> None:
    site = tmp_path / "site"
    (site / "by_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "by_plugin.py").write_text(PLUGIN)
    (site / "by_plugin-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: by-plugin\nVersion: 1.0\n"
    )
    (site / "by_plugin-1.0.dist-info" / "entry_points.txt").write_text(
        "[benchyard.checks]\npalindrome = by_plugin\n\n[benchyard.agents]\necho = by_plugin:make_echo\n"
    )
    bench = write_benchmark(
        tmp_path / "b",
        [
            {"id": "yes", "stimulus": "Level", "checks": [{"type": "palindrome"}]},
            {"id": "no", "stimulus": "benchyard", "checks": [{"type": "palindrome"}]},
            {
                "id": "strict",
                "stimulus": "Level",
                "checks": [{"type": "palindrome", "ignore_case": False}],
            },
        ],
    )
    (tmp_path / "benchyard.yaml").write_text("agents:\n  parrot: {kind: echo, voice: loud}\n")
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    base = [sys.executable, "-m", "benchyard"]
    validated = subprocess.run(
        [*base, "validate", str(bench)], env=env, capture_output=True, text=True, cwd=tmp_path
    )
    assert validated.returncode == 0, validated.stderr
    ran = subprocess.run(
        [*base, "run", str(bench), "--agent", "parrot", "--db", db_url, "-q"],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    report = subprocess.run(
        [*base, "report", "latest", "--db", db_url, "--format", "md"],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert "| parrot |" in report.stdout
    assert "**no**" in report.stdout and "**strict**" in report.stdout
    assert "**yes**" not in report.stdout
    assert "'benchyard' reversed is 'drayhcneb'" in report.stdout
