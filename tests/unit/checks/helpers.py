"""Helpers for check tests: evaluate a check type by name, or collect its load-time errors."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from benchyard.checks.base import CheckResult, Evidence
from benchyard.checks.registry import CheckType, get_check_type
from benchyard.spec.models import Scenario


def check_type(name: str) -> CheckType:
    found = get_check_type(name)
    assert found is not None, f"check type {name!r} is not registered"
    return found


def evidence(answer: str) -> Evidence:
    scenario = Scenario.model_validate(
        {"id": "s1", "stimulus": "q", "checks": [{"type": "equals", "value": "x"}]}
    )
    return Evidence(answer=answer, scenario=scenario)


def run_check(name: str, answer: str, **params: Any) -> CheckResult:
    """Validate `params` as the loader would, then evaluate the check on `answer`."""
    kind = check_type(name)
    return kind.evaluate(kind.params.model_validate(params), evidence(answer))


def params_error(name: str, **params: Any) -> str:
    """The ValidationError text that loading these params gives (fails if they load)."""
    with pytest.raises(ValidationError) as info:
        check_type(name).params.model_validate(params)
    return str(info.value)
