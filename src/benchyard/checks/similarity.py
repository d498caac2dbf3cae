"""Similarity to a reference text, with a threshold: `levenshtein` (normalised edit similarity),
`rouge_n` (n-gram overlap: recall, precision or F) and `bleu` (sentence BLEU, as sacrebleu's
`sentence_bleu` computes it). The standard library only.

Each compares the answer with the check's `value` (a text, or several: the best one counts) or, by
default, the scenario's reference for the graded turn. The score is the similarity itself, so a
scenario `threshold` and the report's near-threshold flags see how close the answer came.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from benchyard.checks.answer_reference import graded_reference
from benchyard.checks.answer_text import quote
from benchyard.checks.base import CheckFailedToRun, CheckParams, CheckResult, Evidence
from benchyard.checks.registry import check

MAX_LEVENSHTEIN_CHARS = 50_000  # each text; the edit distance takes time in the product of lengths
DEFAULT_LEVENSHTEIN = 0.8
DEFAULT_ROUGE = 0.75
DEFAULT_BLEU = 0.5
BLEU_MAX_ORDER = 4


def _texts(value: str | list[str] | None) -> str | list[str] | None:
    if isinstance(value, list) and not value:
        raise ValueError("give at least one text")
    return value


class SimilarityParams(CheckParams):
    value: str | list[str] | None = Field(
        default=None,
        description="The text(s) to compare with (the best match counts); default: the "
        "scenario's reference for the graded turn.",
    )

    _check_value = field_validator("value")(_texts)

    def expected(self, evidence: Evidence, check: str) -> list[str]:
        if self.value is not None:
            return [self.value] if isinstance(self.value, str) else list(self.value)
        reference = graded_reference(evidence)
        if reference is None:
            raise CheckFailedToRun(
                f"{check} needs a 'value' or a reference: the scenario has no reference"
            )
        return [reference]


class LevenshteinParams(SimilarityParams):
    threshold: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="The least normalised similarity that passes, 0 to 1 (default "
        f"{DEFAULT_LEVENSHTEIN} when max_distance is not given).",
    )
    max_distance: int | None = Field(
        default=None, ge=0, description="The most edits (insert, delete, substitute) that pass."
    )
    case_sensitive: bool = True

    @model_validator(mode="before")
    @classmethod
    def _default_threshold(cls, value: Any) -> Any:
        if isinstance(value, dict) and "threshold" not in value and "max_distance" not in value:
            return {**value, "threshold": DEFAULT_LEVENSHTEIN}
        return value


class RougeParams(SimilarityParams):
    n: int = Field(default=1, ge=1, le=9, description="The n-gram size: 1 (words), 2 (pairs)...")
    measure: Literal["recall", "precision", "f"] = Field(
        default="f",
        description="recall: the share of the reference's n-grams in the answer; precision: the "
        "share of the answer's n-grams in the reference; f: their harmonic mean.",
    )
    threshold: float = Field(
        default=DEFAULT_ROUGE, ge=0, le=1, description="The least score that passes, 0 to 1."
    )


class BleuParams(SimilarityParams):
    threshold: float = Field(
        default=DEFAULT_BLEU, ge=0, le=1, description="The least BLEU that passes, 0 to 1."
    )
    case_sensitive: bool = True


@dataclass(frozen=True)
class Compared:
    """A comparison of the answer with one expected text."""

    score: float
    expected: str
    detail: str  # what the score is made of, for the reason
    distance: int = 0  # levenshtein's edit count


def _best(expected: list[str], measure: Callable[[str], Compared]) -> Compared:
    return max((measure(text) for text in expected), key=lambda compared: compared.score)


def _reason(name: str, best: Compared, count: int, verdicts: list[str]) -> str:
    """`<name> <score> against <text> (<detail>); <verdicts>`: verdicts such as `below threshold
    0.8`, the unmet ones alone when there are any."""
    against = quote(best.expected, 60)
    if count > 1:
        against = f"{against} (the best of {count} texts)"
    return f"{name} {best.score:.3f} against {against} ({best.detail}); {' and '.join(verdicts)}"


def _threshold_verdict(score: float, threshold: float) -> tuple[bool, str]:
    met = score >= threshold
    return met, f"{'meets' if met else 'below'} threshold {threshold:g}"


# --- levenshtein -------------------------------------------------------------------------------


def levenshtein_distance(a: str, b: str) -> int:
    """The edit distance (insertions, deletions, substitutions of one character each).

    Hyyrö's bit-vector form of Myers' algorithm, with Python's integers as bit vectors as long as
    the longer text: one pass over the shorter text, each step a few operations on big integers.
    """
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    length = len(a)
    full = (1 << length) - 1
    top = 1 << (length - 1)
    matches: dict[str, int] = {}
    for index, char in enumerate(a):
        matches[char] = matches.get(char, 0) | (1 << index)
    plus, minus, distance = full, 0, length  # vertical deltas +1 / -1 of the current column
    for char in b:
        equal = matches.get(char, 0)
        cross_v = equal | minus
        cross_h = ((((equal & plus) + plus) ^ plus) | equal) & full
        h_plus = (minus | ~(cross_h | plus)) & full
        h_minus = plus & cross_h
        if h_plus & top:
            distance += 1
        elif h_minus & top:
            distance -= 1
        h_plus = ((h_plus << 1) | 1) & full
        h_minus = (h_minus << 1) & full
        plus = (h_minus | ~(cross_v | h_plus)) & full
        minus = h_plus & cross_v
    return distance


def levenshtein_similarity(a: str, b: str) -> tuple[float, int]:
    """1 - distance / the longer length (1 for two empty texts), and the distance."""
    distance = levenshtein_distance(a, b)
    longest = max(len(a), len(b))
    return (1.0 - distance / longest if longest else 1.0), distance


@check("levenshtein", LevenshteinParams)
def levenshtein(params: LevenshteinParams, evidence: Evidence) -> CheckResult:
    """The answer is within an edit distance of the expected text (normalised similarity)."""
    fold = str if params.case_sensitive else str.casefold
    answer = fold(evidence.answer.strip())
    cut = len(answer) > MAX_LEVENSHTEIN_CHARS
    answer = answer[:MAX_LEVENSHTEIN_CHARS]

    def measure(text: str) -> Compared:
        similarity, distance = levenshtein_similarity(
            answer, fold(text.strip())[:MAX_LEVENSHTEIN_CHARS]
        )
        return Compared(similarity, text, f"{distance} edit(s)", distance)

    expected = params.expected(evidence, "levenshtein")
    best = _best(expected, measure)
    outcomes: list[tuple[bool, str]] = []
    if params.threshold is not None:
        outcomes.append(_threshold_verdict(best.score, params.threshold))
    if params.max_distance is not None:
        within = best.distance <= params.max_distance
        outcomes.append(
            (within, f"{'within' if within else 'over'} max_distance {params.max_distance}")
        )
    passed = all(met for met, _ in outcomes)
    verdicts = [text for met, text in outcomes if met == passed]
    reason = _reason("similarity", best, len(expected), verdicts)
    if cut:
        reason += f" (the answer's first {MAX_LEVENSHTEIN_CHARS:,} characters compared)"
    return CheckResult(passed, round(best.score, 6), reason)


# --- rouge_n -----------------------------------------------------------------------------------

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """Lower-case runs of letters and digits (punctuation and `_` dropped)."""
    return _WORD.findall(text.casefold().replace("_", " "))


def ngrams(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def rouge_n_scores(
    answer: str, reference: str, n: int
) -> tuple[float, float, float, int, int, int]:
    """(recall, precision, f, overlapping n-grams, the reference's, the answer's) with clipped
    counts, as ROUGE-N defines them; 0 when either text has no n-gram."""
    found, wanted = ngrams(words(answer), n), ngrams(words(reference), n)
    overlap = sum((found & wanted).values())
    total_found, total_wanted = sum(found.values()), sum(wanted.values())
    recall = overlap / total_wanted if total_wanted else 0.0
    precision = overlap / total_found if total_found else 0.0
    f = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
    return recall, precision, f, overlap, total_wanted, total_found


@check("rouge_n", RougeParams)
def rouge_n(params: RougeParams, evidence: Evidence) -> CheckResult:
    """ROUGE-N (recall, precision or F) of the answer against the expected text reaches a threshold."""
    index = {"recall": 0, "precision": 1, "f": 2}[params.measure]

    def measure(text: str) -> Compared:
        scores = rouge_n_scores(evidence.answer, text, params.n)
        overlap, wanted, found = scores[3:]
        detail = f"{overlap} shared {params.n}-gram(s) of the reference's {wanted} and the answer's {found}"
        return Compared(scores[index], text, detail)

    expected = params.expected(evidence, "rouge_n")
    best = _best(expected, measure)
    passed, verdict = _threshold_verdict(best.score, params.threshold)
    reason = _reason(f"ROUGE-{params.n} {params.measure}", best, len(expected), [verdict])
    return CheckResult(passed, round(best.score, 6), reason)


# --- bleu --------------------------------------------------------------------------------------

# sacrebleu's `13a` tokenizer (mteval-v13a): punctuation apart, '.' and ',' apart unless between
# digits, '-' apart after a digit.
_13A = (
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
)
_ENTITIES = (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"))


def bleu_tokens(text: str) -> list[str]:
    """The words and punctuation of a text, as sacrebleu's 13a tokenizer splits them."""
    text = text.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in text:
        for entity, char in _ENTITIES:
            text = text.replace(entity, char)
    text = f" {text} "
    for pattern, replacement in _13A:
        text = pattern.sub(replacement, text)
    return text.split()


def sentence_bleu(answer: str, references: list[str]) -> tuple[float, list[float], float]:
    """Sentence BLEU from 0 to 1, with its n-gram precisions and brevity penalty: up to 4-grams,
    counts clipped by the most each reference has, the reference length closest to the answer's
    (the shorter on a tie), exponential smoothing of zero counts and the effective order, as
    sacrebleu's sentence_bleu computes it (divided by 100)."""
    hypothesis = bleu_tokens(answer)
    refs = [bleu_tokens(reference) for reference in references]
    correct, total = [0] * BLEU_MAX_ORDER, [0] * BLEU_MAX_ORDER
    for n in range(1, BLEU_MAX_ORDER + 1):
        found = ngrams(hypothesis, n)
        most: Counter[tuple[str, ...]] = Counter()
        for ref in refs:
            most |= ngrams(ref, n)
        correct[n - 1] = sum((found & most).values())
        total[n - 1] = sum(found.values())
    length = len(hypothesis)
    ref_length = min((abs(len(ref) - length), len(ref)) for ref in refs)[1]
    penalty = 1.0 if length >= ref_length else math.exp(1 - ref_length / length) if length else 0.0
    if not any(correct):  # no n-gram in common: 0, as sacrebleu has it
        return 0.0, [0.0] * BLEU_MAX_ORDER, penalty
    precisions = [0.0] * BLEU_MAX_ORDER
    smooth, order = 1.0, BLEU_MAX_ORDER
    for n in range(1, BLEU_MAX_ORDER + 1):
        if total[n - 1] == 0:
            break
        order = n
        if correct[n - 1] == 0:
            smooth *= 2
            precisions[n - 1] = 1.0 / (smooth * total[n - 1])
        else:
            precisions[n - 1] = correct[n - 1] / total[n - 1]
    mean = math.exp(sum(math.log(p) for p in precisions[:order]) / order)
    return penalty * mean, precisions, penalty


@check("bleu", BleuParams)
def bleu(params: BleuParams, evidence: Evidence) -> CheckResult:
    """Sentence BLEU (up to 4-grams, smoothed) of the answer against the expected text(s)."""
    fold = str if params.case_sensitive else str.casefold
    expected = params.expected(evidence, "bleu")
    score, precisions, penalty = sentence_bleu(fold(evidence.answer), [fold(t) for t in expected])
    passed, verdict = _threshold_verdict(score, params.threshold)
    shown = "/".join(f"{p:.2f}" for p in precisions)
    detail = f"1- to 4-gram precisions {shown}, brevity penalty {penalty:.2f}"
    if len(expected) > 1:
        detail += f"; {len(expected)} reference texts together"
    reason = _reason("BLEU", Compared(score, expected[0], detail), 1, [verdict])
    return CheckResult(passed, round(score, 6), reason)
