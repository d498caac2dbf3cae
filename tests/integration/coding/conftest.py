"""The sandboxes coding scenarios are tested in: bwrap and docker, each failing (never skipping)
with how to install it when it is missing."""

from __future__ import annotations

import pytest

from benchyard.sandbox.base import SandboxUnavailable
from benchyard.sandbox.limits import SandboxRequest
from tests.unit.checks.code_helpers import HOW_TO_INSTALL, code_sandbox

CODE_SANDBOXES = ("bwrap", "docker")


@pytest.fixture(params=CODE_SANDBOXES)
def sandbox_name(request: pytest.FixtureRequest) -> str:
    """Each sandbox that grades code, checked to work here (its default image too)."""
    name: str = request.param
    try:
        code_sandbox(name).check_requests([SandboxRequest()])
    except SandboxUnavailable as error:
        pytest.fail(f"the {name} sandbox is unavailable: {error}. To fix: {HOW_TO_INSTALL[name]}")
    return name
