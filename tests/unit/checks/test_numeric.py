from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchyard.checks.numeric import final_number, format_number

from .helpers import check_type, params_error, run_check


def test_numeric_is_registered_with_a_summary() -> None:
    assert check_type("numeric").summary.startswith("The final number in the answer")


@pytest.mark.parametrize(
    ("answer", "number"),
    [
        ("-3", -3),
        ("1,234", 1234),
        ("2.5", 2.5),
        ("It costs $1,234.50", 1234.5),
        ("The answer is 42.", 42),
        ("16 - 3 - 4 = 9\n####  42", 42),
        ("first 7, then 8", 8),
        ("pages 3-5", 5),
        ("covid-19 cases: 7", 7),
        ("a loss of -$5", -5),
        ("x = -2.5e3", -2500),
        ("\u22127 degrees", -7),
        (".5 of it", 0.5),
        ("12,345,678.90 total", 12345678.9),
        ("the list 1,2,3", 3),
        ("3.14.15", 3.14),
        ("50%", 50),
    ],
)
def test_final_number(answer: str, number: float) -> None:
    assert final_number(answer) == number


def test_final_number_none_without_digits() -> None:
    assert final_number("no idea, sorry.") is None


def test_numeric_passes_on_the_final_number() -> None:
    result = run_check("numeric", "9 * 2 = 18, so she makes $18.\n#### 18", value=18)
    assert result.passed and result.score == 1.0
    assert result.reason == "final number 18 equals expected 18"


def test_numeric_judges_only_the_final_number() -> None:
    result = run_check("numeric", "Not 42: the total is 41.", value=42)
    assert not result.passed
    assert result.reason == "final number 41 differs from expected 42 by 1 (allowed 0)"


def test_numeric_reason_when_no_number() -> None:
    result = run_check("numeric", "I cannot tell.", value=3)
    assert not result.passed
    assert result.reason == "no number in the answer 'I cannot tell.'"


def test_numeric_absolute_tolerance() -> None:
    result = run_check("numeric", "about 3.14", value=3.14159, tolerance=0.01)
    assert result.passed
    assert result.reason == "final number 3.14 is within 0.01 of expected 3.14159"
    assert not run_check("numeric", "about 3.1", value=3.14159, tolerance=0.01).passed


def test_numeric_relative_tolerance() -> None:
    assert run_check("numeric", "1,040", value=1000, rel_tolerance=0.05).passed
    result = run_check("numeric", "1,060", value=1000, rel_tolerance=0.05)
    assert not result.passed
    assert result.reason == "final number 1060 differs from expected 1000 by 60 (allowed 50)"


def test_numeric_tolerance_at_the_boundary_survives_float_noise() -> None:
    assert run_check("numeric", "0.4", value=0.3, tolerance=0.1).passed


def test_numeric_decimal_and_integer_forms_are_equal() -> None:
    assert run_check("numeric", "18.00", value=18).passed


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"value": 1, "tolerance": -1}, "tolerance"),
        ({"value": 1, "rel_tolerance": -0.1}, "rel_tolerance"),
        ({"value": "nan"}, "value"),
        ({"value": "forty-two"}, "value"),
        ({}, "value"),
    ],
)
def test_numeric_params_are_validated(params: dict[str, object], field: str) -> None:
    assert f"\n{field}\n" in params_error("numeric", **params)


def test_format_number() -> None:
    assert [format_number(x) for x in (42.0, -3.0, 2.5, 1e20)] == ["42", "-3", "2.5", "1e+20"]


PROSE = st.text(alphabet=st.sampled_from("abc XYZ:=#\n"), max_size=20)


@given(number=st.integers(min_value=-(10**15), max_value=10**15), prefix=PROSE)
def test_any_formatted_integer_is_found(number: int, prefix: str) -> None:
    sign = "-" if number < 0 else ""
    for written in (f"{sign}{abs(number)}", f"{sign}{abs(number):,}", f"{sign}${abs(number):,}"):
        assert final_number(f"{prefix} {written}.") == number


@given(cents=st.integers(min_value=0, max_value=10**12), prefix=PROSE)
def test_any_money_amount_is_found(cents: int, prefix: str) -> None:
    text = f"{prefix} total ${cents / 100:,.2f}"
    assert final_number(text) == pytest.approx(cents / 100)


@given(first=st.integers(min_value=0, max_value=10**6), last=st.integers(0, 10**6))
def test_the_last_of_two_numbers_wins(first: int, last: int) -> None:
    assert final_number(f"{first:,} apples, then {last:,} pears") == last
