"""A log written by Inspect AI's own eval (0.3.285 writes `.eval` zips of Zstandard members, which
Python's zipfile cannot read) is imported: its samples become the run's attempts, with Inspect's
scores as verdicts; the import says when `latest` still names another run."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from benchyard.interop.inspect_log import ZIP_ZSTANDARD
from benchyard.store.store import Store
from tests.support import Cli, scenario, write_benchmark

# A task of two samples and a model API that always answers "4" (Inspect's mockllm counts tokens
# with tiktoken, whose encodings it would download: this one needs nothing from the network).
TASK = """
import sys

from inspect_ai import Task, eval as inspect_eval, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelAPI, ModelOutput, modelapi
from inspect_ai.scorer import match
from inspect_ai.solver import generate


@modelapi(name="canned")
class Canned(ModelAPI):
    async def generate(self, input, tools, tool_choice, config):
        return ModelOutput.from_content(model="canned", content="4")


@task
def sums():
    samples = [Sample(id="four", input="2 + 2?", target="4"), Sample(id="five", input="2 + 3?", target="5")]
    return Task(dataset=samples, solver=generate(), scorer=match())


inspect_eval(sums(), model="canned/four", log_dir=sys.argv[1], display="none")
"""


def _inspect_eval(tmp_path: Path) -> Path:
    script = tmp_path / "task.py"
    script.write_text(TASK, encoding="utf-8")
    logs = tmp_path / "logs"
    subprocess.run([sys.executable, str(script), str(logs)], check=True, capture_output=True)
    [log] = logs.glob("*.eval")
    return log


def test_a_log_written_by_inspect_eval_is_imported(tmp_path: Path, cli: Cli, store: Store) -> None:
    log = _inspect_eval(tmp_path)
    with zipfile.ZipFile(log) as archive:  # what made import-run crash before
        assert {info.compress_type for info in archive.infolist()} == {ZIP_ZSTANDARD}
    cli("run", str(_benchmark(tmp_path)), "--agent", "oracle", "-q")  # a run started after it

    result = cli("import-run", str(log))

    assert result.exit_code == 0, result.output
    run = store.get_run(result.output.strip().splitlines()[-1])
    verdicts = {attempt.scenario_id: attempt.verdict for attempt in store.attempts(run.id)}
    assert verdicts == {"four": "passed", "five": "failed"}
    assert "so `latest` still names run" in result.output


def test_a_corrupt_zstandard_member_is_one_line_of_error(tmp_path: Path, cli: Cli) -> None:
    log = _inspect_eval(tmp_path)
    data = bytearray(log.read_bytes())
    with zipfile.ZipFile(log) as archive:
        header = archive.getinfo("header.json")
    middle = header.header_offset + 30 + len("header.json") + header.compress_size // 2
    data[middle] ^= 0xFF
    log.write_bytes(bytes(data))

    result = cli("import-run", str(log))

    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert f"{log}: " in result.output


def _benchmark(tmp_path: Path) -> Path:
    return write_benchmark(tmp_path / "bench", [scenario("a", "x")])
