"""The check registry: built-ins listed by name with their module, imported on first use."""

from __future__ import annotations

import pytest

from benchyard.checks.base import CheckParams, CheckResult, Evidence
from benchyard.checks.registry import (
    BUILTIN_CHECKS,
    check,
    check_names,
    check_types,
    get_check_type,
)


@pytest.mark.parametrize(("name", "module"), sorted(BUILTIN_CHECKS.items()))
def test_each_builtin_is_registered_by_the_module_listed(name: str, module: str) -> None:
    found = get_check_type(name)
    assert found is not None and found.name == name
    assert found.evaluate.__module__ == module


def test_every_builtin_module_registers_only_listed_checks() -> None:
    # a check added to a module but not to BUILTIN_CHECKS would be unknown until that module
    # happened to be imported for another check
    assert set(check_types()) == set(BUILTIN_CHECKS)
    assert check_names() == sorted(BUILTIN_CHECKS)


def test_an_unknown_name_is_none() -> None:
    assert get_check_type("no_such_check") is None


def test_a_plugin_cannot_replace_a_builtin() -> None:
    def equals(params: CheckParams, evidence: Evidence) -> CheckResult:
        raise AssertionError("never registered")

    with pytest.raises(ValueError, match="'equals' is a built-in check type"):
        check("equals", CheckParams)(equals)
    found = get_check_type("equals")
    assert found is not None and found.evaluate.__module__ == "benchyard.checks.text"
