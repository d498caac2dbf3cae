"""The `response_shape` check: length, lists, code blocks, JSON keys, case and wording, no judge."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Literal

from pydantic import Field, model_validator

from benchyard.checks.answer_json import NotJson, json_type_name, parse_answer_json
from benchyard.checks.answer_text import fenced_blocks, quote, trimmed, without_fences
from benchyard.checks.base import CheckParams, CheckResult, Evidence
from benchyard.checks.registry import check

Unit = Literal["chars", "words", "lines", "sentences"]
Outcome = tuple[bool, str]
"""One constraint: whether it is met, and what it asks with what was found."""

_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+\S", re.MULTILINE)
_BOUNDED_PAIRS = (("min_length", "max_length"), ("min_list_items", "max_list_items"))
EDGE_SHOWN = 40


class ResponseShapeParams(CheckParams):
    min_length: int | None = Field(default=None, ge=0)
    max_length: int | None = Field(default=None, ge=0)
    unit: Unit = Field(default="words", description="What min_length and max_length count.")
    required_json_keys: list[str] = Field(
        default_factory=list, description="The answer is a JSON object with these keys."
    )
    min_list_items: int | None = Field(default=None, ge=0, description="Markdown list items.")
    max_list_items: int | None = Field(default=None, ge=0)
    min_code_blocks: int | None = Field(default=None, ge=0, description="Fenced code blocks.")
    code_language: str | None = Field(
        default=None,
        min_length=1,
        description="Count only blocks with this language tag; alone, it asks for one such block.",
    )
    case: Literal["lower", "upper"] | None = None
    starts_with: str | None = Field(default=None, min_length=1)
    ends_with: str | None = Field(default=None, min_length=1)
    forbidden: list[str] = Field(
        default_factory=list, description="Substrings that must not appear (any case)."
    )

    @model_validator(mode="after")
    def _consistent(self) -> ResponseShapeParams:
        if all(value in (None, []) for name, value in self if name != "unit"):
            raise ValueError("give at least one constraint (min_length, forbidden, case, ...)")
        for low_name, high_name in _BOUNDED_PAIRS:
            low, high = getattr(self, low_name), getattr(self, high_name)
            if low is not None and high is not None and low > high:
                raise ValueError(f"{low_name} ({low}) is greater than {high_name} ({high})")
        if "" in self.forbidden or "" in self.required_json_keys:
            raise ValueError("forbidden and required_json_keys take non-empty strings")
        return self


def measure(text: str, unit: Unit) -> int:
    """The size of `text`: characters (stripped), words, non-blank lines, or sentences."""
    if unit == "chars":
        return len(text.strip())
    if unit == "words":
        return len(text.split())
    if unit == "sentences":
        return count_sentences(text)
    return sum(1 for line in text.splitlines() if line.strip())


_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
# possessive, and never starting inside a run of marks: linear on any text
_SENTENCE_END = re.compile("(?<![.!?\u2026])[.!?\u2026]++[\"')\\]\u201d\u2019]*+(?=\\s|$)")
_WORD_CHAR = re.compile(r"\w")
ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "e.g", "i.e", "cf"}
)


def count_sentences(text: str) -> int:
    """Sentences in the prose of `text` (fenced code left out): each ends at `.`, `!`, `?` or `…`
    (closing quotes or brackets after it) followed by a space or the end, or at a blank line; a
    period after a title (Mr., Dr., e.g., ...) or an initial (J.) ends none, nor one inside a
    number (3.5); a text without any end mark is one sentence."""
    count = 0
    for block in _PARAGRAPH_BREAK.split(without_fences(text)):
        start = 0
        for end in _SENTENCE_END.finditer(block):
            if end.group(0)[0] == "." and _abbreviation(block, end.start()):
                continue
            count += bool(_WORD_CHAR.search(block, start, end.start()))
            start = end.end()
        count += bool(_WORD_CHAR.search(block, start))
    return count


def _abbreviation(text: str, dot: int) -> bool:
    """Whether the word before the period at `dot` is a title or an initial."""
    chunk = text[max(0, dot - 6) : dot]
    words = chunk.split()
    word = words[-1] if words else ""
    if len(word) == len(chunk) and dot > len(chunk):
        return False  # a longer word
    return word.casefold() in ABBREVIATIONS or (len(word) == 1 and word.isupper())


def _bounds(found: int, low: int | None, high: int | None, what: str) -> Iterator[Outcome]:
    if low is not None:
        yield found >= low, f"at least {low} {what} (found {found})"
    if high is not None:
        yield found <= high, f"at most {high} {what} (found {found})"


def _length(params: ResponseShapeParams, answer: str) -> Iterator[Outcome]:
    found = measure(answer, params.unit)
    yield from _bounds(found, params.min_length, params.max_length, params.unit)


def _list_items(params: ResponseShapeParams, answer: str) -> Iterator[Outcome]:
    found = len(_LIST_ITEM.findall(without_fences(answer)))
    yield from _bounds(found, params.min_list_items, params.max_list_items, "list items")


def _code_blocks(params: ResponseShapeParams, answer: str) -> Iterator[Outcome]:
    language = (params.code_language or "").lower()
    blocks = [b for b in fenced_blocks(answer) if not language or b.language == language]
    implied = 1 if language else None
    low = params.min_code_blocks if params.min_code_blocks is not None else implied
    yield from _bounds(len(blocks), low, None, f"{language} code blocks".lstrip())


def _json_keys(params: ResponseShapeParams, answer: str) -> Iterator[Outcome]:
    if not params.required_json_keys:
        return
    wanted = f"a JSON object with keys {', '.join(params.required_json_keys)}"
    try:
        data = parse_answer_json(answer)
    except NotJson:
        yield False, f"{wanted} (the answer is not JSON)"
        return
    if not isinstance(data, dict):
        yield False, f"{wanted} (found a JSON {json_type_name(data)})"
        return
    missing = [key for key in params.required_json_keys if key not in data]
    yield not missing, wanted + (f" (missing {', '.join(missing)})" if missing else "")


def _case(params: ResponseShapeParams, answer: str) -> Iterator[Outcome]:
    if params.case is not None:
        text = answer.strip()
        met = text == (text.lower() if params.case == "lower" else text.upper())
        yield met, f"all {params.case} case (found {quote(text, EDGE_SHOWN)})"


def _edges(params: ResponseShapeParams, answer: str) -> Iterator[Outcome]:
    text = answer.strip()
    if params.starts_with is not None:
        start = quote(text[:EDGE_SHOWN], EDGE_SHOWN)
        yield (
            text.startswith(params.starts_with),
            f"starts with {quote(params.starts_with)} (found {start})",
        )
    if params.ends_with is not None:
        end = quote(text[-EDGE_SHOWN:], EDGE_SHOWN)
        yield (
            text.endswith(params.ends_with),
            f"ends with {quote(params.ends_with)} (found {end})",
        )


def _forbidden(params: ResponseShapeParams, answer: str) -> Iterator[Outcome]:
    if params.forbidden:
        folded = answer.casefold()
        found = [word for word in params.forbidden if word.casefold() in folded]
        wanted = f"forbidden {', '.join(map(quote, params.forbidden))}"
        shown = f"found {', '.join(map(quote, found))}" if found else "found none of them"
        yield not found, f"{wanted} ({shown})"


CONSTRAINTS: tuple[Callable[[ResponseShapeParams, str], Iterator[Outcome]], ...] = (
    _length,
    _list_items,
    _code_blocks,
    _json_keys,
    _case,
    _edges,
    _forbidden,
)


@check("response_shape", ResponseShapeParams)
def response_shape(params: ResponseShapeParams, evidence: Evidence) -> CheckResult:
    """The answer has the required form: length, lists, code blocks, JSON keys, case, wording."""
    answer = trimmed(evidence.answer)
    outcomes = [outcome for rule in CONSTRAINTS for outcome in rule(params, answer)]
    unmet = [text for met, text in outcomes if not met]
    score = 1 - len(unmet) / len(outcomes)
    if unmet:
        reason = f"{len(unmet)} of {len(outcomes)} constraints unmet: " + "; ".join(unmet)
    else:
        reason = f"all {len(outcomes)} constraints met: " + "; ".join(text for _, text in outcomes)
    return CheckResult(passed=not unmet, score=score, reason=reason)
