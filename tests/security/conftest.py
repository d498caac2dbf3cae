"""Fixtures of the attack tests: a project directory outside /tmp (where real projects live: a
sandbox's /tmp is private anyway, so an attack on a project under /tmp would prove nothing)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import Cli

PROJECTS = Path(__file__).resolve().parents[2] / "build" / "security-projects"

# The attack on a Ray node starts a cluster and uses a PostgreSQL store whatever the half of
# `make test`: it runs once, in its PostgreSQL half, as tests/integration/ray's do.
if os.environ.get("BENCHYARD_TEST_DB", "sqlite") == "sqlite":
    collect_ignore = ["test_ray_deep_tree.py"]


@pytest.fixture
def project() -> Iterator[Path]:
    """A fresh project directory under the repository's build/ (outside /tmp), removed after."""
    PROJECTS.mkdir(parents=True, exist_ok=True)
    directory = Path(tempfile.mkdtemp(dir=PROJECTS))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def project_cli(project: Path, db_url: str) -> Cli:
    """The CLI run from the project directory, on the test's store."""
    return Cli(db_url, project)
