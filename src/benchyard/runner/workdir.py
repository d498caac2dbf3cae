"""Each attempt's private workdir (the agent's cwd, holding the fixtures) and its protocol files,
kept outside the workdir so that they never show up in what the agent changed."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from benchyard.spec.models import Scenario


@dataclass(frozen=True)
class AttemptDirs:
    workdir: Path
    io_dir: Path  # the protocol files, outside the workdir

    def remove(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)
        shutil.rmtree(self.io_dir, ignore_errors=True)


def make_scratch_layout(scratch: Path) -> None:
    (scratch / "work").mkdir()
    (scratch / "io").mkdir()


def prepare_dirs(
    scratch: Path, attempt_id: str, scenario: Scenario, scenario_dir: Path
) -> AttemptDirs:
    """Create the attempt's workdir under `scratch` (laid out by make_scratch_layout) and copy its fixtures."""
    dirs = AttemptDirs(scratch / "work" / attempt_id, scratch / "io" / attempt_id)
    dirs.workdir.mkdir()
    dirs.io_dir.mkdir()
    for fixture in scenario.fixtures.files:
        target = dirs.workdir / fixture.dest
        target.parent.mkdir(parents=True, exist_ok=True)
        if fixture.content is not None:
            target.write_text(fixture.content, encoding="utf-8")
            continue
        assert fixture.src is not None
        source = scenario_dir / fixture.src
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copyfile(source, target)
    return dirs
