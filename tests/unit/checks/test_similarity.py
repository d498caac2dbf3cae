"""`levenshtein`, `rouge_n` and `bleu`: exact figures (BLEU as sacrebleu 2.4's sentence_bleu
gives them, ROUGE as Google's rouge-score does), thresholds, the reference as the default text."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchyard.checks.base import CheckFailedToRun, CheckResult, Evidence
from benchyard.checks.similarity import (
    levenshtein_distance,
    levenshtein_similarity,
    rouge_n_scores,
    sentence_bleu,
)
from benchyard.spec.models import Scenario

from .helpers import check_type, params_error, run_check

GUIDE = "It is a guide to action which ensures that the military always obeys the commands of the party."
GUIDE_REFERENCES = [
    "It is a guide to action that ensures that the military will forever heed Party commands.",
    "It is the guiding principle which guarantees the military forces always being under the "
    "command of the Party.",
    "It is the practical guide for the army always to heed the directions of the party.",
]


def with_reference(name: str, answer: str, reference: Any, **params: Any) -> CheckResult:
    """The check on `answer` in a scenario whose reference is `reference` (no `value`)."""
    stimulus: Any = {"turns": ["first", "second"]} if isinstance(reference, list) else "q"
    scenario = Scenario.model_validate(
        {
            "id": "s",
            "stimulus": stimulus,
            "reference": reference,
            "checks": [{"type": "equals", "value": "x"}],
        }
    )
    answers = ["earlier answer", answer] if isinstance(reference, list) else [answer]
    kind = check_type(name)
    result = kind.evaluate(kind.params.model_validate(params), Evidence(answer, scenario, answers))
    assert isinstance(result, CheckResult)
    return result


def _naive_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, left in enumerate(a, 1):
        current = [i]
        for j, right in enumerate(b, 1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (left != right))
            )
        previous = current
    return previous[-1]


# --- levenshtein -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [("kitten", "sitting", 3), ("", "abc", 3), ("abc", "", 3), ("", "", 0), ("flaw", "lawn", 2)],
)
def test_levenshtein_distance_known_values(a: str, b: str, distance: int) -> None:
    assert levenshtein_distance(a, b) == distance


@given(st.text(alphabet="abcé", max_size=70), st.text(alphabet="abcé", max_size=70))
def test_levenshtein_distance_matches_the_textbook_algorithm(a: str, b: str) -> None:
    assert levenshtein_distance(a, b) == _naive_distance(a, b)


def test_levenshtein_similarity_is_normalised_by_the_longer_text() -> None:
    assert levenshtein_similarity("kitten", "sitting") == (pytest.approx(1 - 3 / 7), 3)
    assert levenshtein_similarity("", "") == (1.0, 0)


def test_levenshtein_passes_a_near_match_and_fails_a_far_one() -> None:
    near = run_check("levenshtein", "The quick brown fox", value="The quick brown fax")
    assert near.passed
    assert near.score == pytest.approx(1 - 1 / 19, abs=1e-6)
    assert near.reason == (
        "similarity 0.947 against 'The quick brown fax' (1 edit(s)); meets threshold 0.8"
    )
    far = run_check("levenshtein", "A slow red dog", value="The quick brown fox")
    assert not far.passed
    assert far.reason.endswith("; below threshold 0.8")


def test_levenshtein_max_distance_and_case() -> None:
    result = run_check("levenshtein", "HELLO WORLD", value="hello world", max_distance=2)
    assert not result.passed
    assert result.reason.endswith("(10 edit(s)); over max_distance 2")
    folded = run_check(
        "levenshtein", "HELLO WORLD", value="hello world", max_distance=0, case_sensitive=False
    )
    assert folded.passed
    assert folded.reason.endswith("; within max_distance 0")
    both = run_check("levenshtein", "helo", value="hello", threshold=0.9, max_distance=1)
    assert not both.passed
    assert both.reason.endswith("(1 edit(s)); below threshold 0.9")  # the unmet one only


def test_levenshtein_takes_the_best_of_several_values() -> None:
    result = run_check("levenshtein", "colour", value=["color", "colour", "hue"])
    assert result.passed
    assert result.score == 1.0
    assert result.reason.startswith("similarity 1.000 against 'colour' (the best of 3 texts)")


def test_levenshtein_defaults_to_the_reference_of_the_graded_turn() -> None:
    result = with_reference("levenshtein", "Paris", ["Rome", "Paris."])
    assert result.passed
    assert "against 'Paris.'" in result.reason


def test_a_huge_answer_is_compared_quickly() -> None:
    started = time.perf_counter()
    result = run_check("levenshtein", "x" * 1_000_000, value="y" * 30_000)
    assert time.perf_counter() - started < 10
    assert not result.passed
    assert result.reason.endswith("(the answer's first 50,000 characters compared)")


# --- rouge_n -----------------------------------------------------------------------------------


def test_rouge_figures() -> None:
    answer, reference = "The cat sat on the mat.", "the cat is on the mat"
    assert rouge_n_scores(answer, reference, 1) == (5 / 6, 5 / 6, pytest.approx(5 / 6), 5, 6, 6)
    assert rouge_n_scores(answer, reference, 2)[:3] == (0.6, 0.6, pytest.approx(0.6))
    recall, precision, _, overlap, wanted, found = rouge_n_scores("the cat", reference, 1)
    assert (recall, precision, overlap, wanted, found) == (2 / 6, 1.0, 2, 6, 2)
    assert rouge_n_scores("cat", "cat", 2)[:3] == (0.0, 0.0, 0.0)  # no bigram at all


def test_rouge_n_threshold_and_measure() -> None:
    result = run_check("rouge_n", "the cat", value="the cat is on the mat", measure="precision")
    assert result.passed
    assert result.reason == (
        "ROUGE-1 precision 1.000 against 'the cat is on the mat' (2 shared 1-gram(s) of the "
        "reference's 6 and the answer's 2); meets threshold 0.75"
    )
    recall = run_check("rouge_n", "the cat", value="the cat is on the mat", measure="recall")
    assert not recall.passed
    assert recall.score == pytest.approx(1 / 3)
    assert recall.reason.endswith("; below threshold 0.75")


def test_rouge_n_bigrams_with_a_reference() -> None:
    result = with_reference(
        "rouge_n", "The cat sat on the mat.", "The cat is on the mat.", n=2, threshold=0.5
    )
    assert result.passed
    assert result.score == pytest.approx(0.6)
    assert result.reason.startswith("ROUGE-2 f 0.600 against 'The cat is on the mat.'")


# --- bleu --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "references", "expected"),
    [
        ("The cat sat on the mat.", ["The cat is on the mat."], 0.4889230224349009),
        ("the cat sat on the mat.", ["The cat is on the mat."], 0.43472087194499137),
        (GUIDE, GUIDE_REFERENCES, 0.5401725898595141),
        ("Hello", ["Hello world, how are you?"], 0.0024787521766663594),
        ("sat", ["small on a", "small"], 0.0),  # nothing in common
        ("", ["x"], 0.0),
        ("a b c d e", ["a b c d e"], 1.0),
        ("x y", ["x y"], 1.0),  # the effective order: two words can match perfectly
    ],
)
def test_bleu_equals_sacrebleu_sentence_bleu(
    answer: str, references: list[str], expected: float
) -> None:
    assert sentence_bleu(answer, references)[0] == pytest.approx(expected, abs=1e-12)


def test_bleu_check() -> None:
    result = run_check("bleu", "The cat sat on the mat.", value="The cat is on the mat.")
    assert not result.passed
    assert result.score == pytest.approx(0.488923, abs=1e-6)
    assert result.reason == (
        "BLEU 0.489 against 'The cat is on the mat.' (1- to 4-gram precisions "
        "0.86/0.67/0.40/0.25, brevity penalty 1.00); below threshold 0.5"
    )
    several = run_check("bleu", GUIDE, value=GUIDE_REFERENCES, threshold=0.5)
    assert several.passed
    assert "; 3 reference texts together); meets threshold 0.5" in several.reason
    folded = run_check("bleu", "THE CAT IS ON THE MAT.", value="the cat is on the mat.")
    assert not folded.passed
    assert run_check(
        "bleu", "THE CAT IS ON THE MAT.", value="the cat is on the mat.", case_sensitive=False
    ).passed


# --- shared ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["levenshtein", "rouge_n", "bleu"])
def test_without_value_or_reference_the_check_cannot_run(name: str) -> None:
    with pytest.raises(CheckFailedToRun, match="needs a 'value' or a reference"):
        run_check(name, "anything")


@pytest.mark.parametrize("name", ["levenshtein", "rouge_n", "bleu"])
def test_parameters_are_checked_at_load_time(name: str) -> None:
    assert "less than or equal to 1" in params_error(name, value="x", threshold=1.5)
    assert "give at least one text" in params_error(name, value=[])
    assert "Extra inputs are not permitted" in params_error(name, value="x", treshold=0.5)


def test_rouge_n_takes_n_from_one_to_nine() -> None:
    assert "greater than or equal to 1" in params_error("rouge_n", n=0)
    assert "Input should be 'recall', 'precision' or 'f'" in params_error("rouge_n", measure="f1")
