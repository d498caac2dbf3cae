"""Paths in a check's parameters stay inside the benchmark: a hand-written `harbor_verifier`
whose `tests` or `run_tests` climbs out of the benchmark (or reaches out through a link) mounted
that host directory into the verifier's container, whose test.sh echoed it into the stored check
reason. Now `validate` (and so `run`) refuses it at load, naming the file, line and field, before
anything is mounted."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import Cli, write_benchmark


def _harbor_benchmark(root: Path, **params: str) -> Path:
    check = {"type": "harbor_verifier", "image": "benchyard/sandbox:bookworm", **params}
    scenario = {"id": "task", "category": "coding", "stimulus": {"task": "fix it"}}
    bench = write_benchmark(root, [{**scenario, "checks": [check]}])
    (bench / "scenarios" / "tests").mkdir()
    (bench / "scenarios" / "tests" / "test.sh").write_text("exit 0\n", encoding="utf-8")
    return bench


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"tests": "../../../../../../../root"}, "tests"),
        ({"tests": "tests", "run_tests": "../../../../../../../etc/shadow"}, "run_tests"),
    ],
)
def test_a_check_path_out_of_the_benchmark_is_refused_at_load(
    tmp_path: Path, project_cli: Cli, params: dict[str, str], field: str
) -> None:
    bench = _harbor_benchmark(tmp_path / "bench", **params)

    result = project_cli("validate", str(bench), db=False)

    assert result.exit_code == 1, result.output
    assert f"checks[0].{field}" in result.output
    assert "outside the benchmark directory" in result.output
    assert "scenarios/" in result.output and ".yaml:" in result.output  # file and line


def test_a_tests_directory_linked_to_the_host_is_refused(tmp_path: Path, project_cli: Cli) -> None:
    secrets = tmp_path / "host-secrets"
    secrets.mkdir()
    (secrets / "id_rsa").write_text("PRIVATE KEY", encoding="utf-8")
    bench = _harbor_benchmark(tmp_path / "bench", tests="linked")
    (bench / "scenarios" / "linked").symlink_to(secrets)

    result = project_cli("run", str(bench), "--agent", "oracle", "-q")

    assert result.exit_code == 1, result.output  # the benchmark's problems, before any attempt
    assert "checks[0].tests" in result.output and "through a link" in result.output
    assert "PRIVATE KEY" not in result.output
