"""SWE-bench's grading rules in real containers: a patch after which no test runs (its conftest.py
stops pytest before any test) is an invalid evaluation by the rules of swebench 5.0.2, the default
(`infra_failure` in the report, and an error, not a failure, for the `swebench` check), and a plain
failure by the rules of swebench 4.1 (`--rules 4.1`)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.formats.test_swebench import GOLD, _instances, instance_image
from tests.support import Cli
from tests.unit.importers.sources import write_jsonl

__all__ = ["instance_image"]  # the module-scoped image fixture, shared

NO_TESTS = GOLD + "\n".join(
    [
        "diff --git a/conftest.py b/conftest.py",
        "new file mode 100644",
        "--- /dev/null",
        "+++ b/conftest.py",
        "@@ -0,0 +1 @@",
        '+raise SystemExit("conftest stops pytest before any test runs")',
        "",
    ]
)


def _graded(cli: Cli, tmp_path: Path, image: str, commit: str, *rules: str) -> dict[str, object]:
    instances = _instances(tmp_path / "instances.jsonl", commit)
    predictions = write_jsonl(
        tmp_path / "preds.jsonl",
        [{"instance_id": "toy__calc-1", "model_patch": NO_TESTS, "model_name_or_path": "m"}],
    )
    out = tmp_path / "report.json"
    result = cli(
        "grade-patches",
        str(instances),
        str(predictions),
        "--option",
        f"image={image}",
        "-o",
        str(out),
        *rules,
        db=False,
    )
    assert result.exit_code == 0, result.output
    report: dict[str, object] = json.loads(out.read_text())["toy__calc-1"]
    report["output"] = result.output
    return report


def test_swebench_5_0_2_no_test_ran_is_an_infra_failure_in_grade_patches(
    cli: Cli, tmp_path: Path, instance_image: tuple[str, Path, str]
) -> None:
    image, _, commit = instance_image
    report = _graded(cli, tmp_path, image, commit)
    assert report["patch_successfully_applied"] is True and report["resolved"] is False
    assert report["infra_failure"] is True
    assert str(report["infra_failure_reason"]).startswith("no test ran")
    assert "1 invalid evaluations (no test ran) (swebench 5.0.2 rules)" in str(report["output"])


def test_swebench_4_1_no_test_ran_fails_every_test_in_grade_patches(
    cli: Cli, tmp_path: Path, instance_image: tuple[str, Path, str]
) -> None:
    image, _, commit = instance_image
    report = _graded(cli, tmp_path, image, commit, "--rules", "4.1")
    assert report["resolved"] is False and "infra_failure" not in report
    assert report["tests_status"]["FAIL_TO_PASS"]["failure"] == ["tests/test_calc.py::test_add"]  # type: ignore[index]


def test_swebench_5_0_2_no_test_ran_is_an_error_of_the_check_not_a_failure(
    storeless_cli: Cli, tmp_path: Path, instance_image: tuple[str, Path, str]
) -> None:
    """`verify` grades the instance's own patch through the `swebench` check: an evaluation where
    no test ran is an infrastructure error (retried, left out of accuracy), never `failed`."""
    image, clones, commit = instance_image
    instances = _instances(tmp_path / "instances.jsonl", commit)
    record = json.loads(instances.read_text().splitlines()[0])
    write_jsonl(instances, [{**record, "patch": NO_TESTS}])
    out = tmp_path / "swe"
    options = ("--option", f"image={image}", "--option", f"repos={clones}")
    imported = storeless_cli("import", "swe-bench", str(instances), "-o", str(out), *options)
    assert imported.exit_code == 0, imported.output
    verified = storeless_cli("verify", str(out))
    assert verified.exit_code != 0
    assert (
        "check swebench could not run: invalid evaluation (swebench 5.0.2): no test ran"
        in verified.output
    )
