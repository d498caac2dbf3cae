"""Checks on an answer's text: exact equality, substrings, regular expressions and key facts."""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from pydantic import Field, field_validator

from benchyard.checks.answer_text import quote, trimmed
from benchyard.checks.base import CheckParams, CheckResult, Evidence
from benchyard.checks.registry import check

REGEX_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}

# A comma between digits that groups thousands: "1,200" -> "1200", "1,2" stays.
_THOUSANDS_COMMA = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
# Punctuation, except a '.' or ',' between digits as in "2.5".
_PUNCTUATION = re.compile(r"(?<!\d)[.,]|[.,](?!\d)|[^\w\s.,]|_")


class EqualsParams(CheckParams):
    value: str
    case_sensitive: bool = True
    normalize_whitespace: bool = Field(
        default=False, description="Treat every run of whitespace as one space."
    )


class ContainsParams(CheckParams):
    value: str | list[str] = Field(description="A substring, or several.")
    mode: Literal["all", "any"] = "all"
    case_sensitive: bool = False

    @field_validator("value")
    @classmethod
    def _not_empty(cls, value: str | list[str]) -> str | list[str]:
        needles = [value] if isinstance(value, str) else value
        if not needles or not all(needles):
            raise ValueError("give at least one non-empty substring")
        return value

    def needles(self) -> list[str]:
        return [self.value] if isinstance(self.value, str) else list(self.value)


class RegexParams(CheckParams):
    pattern: str
    flags: str = Field(default="", description="Any of i (ignore case), m (multiline), s (dotall).")
    full_match: bool = Field(default=False, description="The whole stripped answer must match.")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as error:
            raise ValueError(f"invalid regular expression: {error}") from None
        return pattern

    @field_validator("flags")
    @classmethod
    def _known_flags(cls, flags: str) -> str:
        unknown = sorted(set(flags) - REGEX_FLAGS.keys())
        if unknown:
            raise ValueError(f"unknown flag(s) {''.join(unknown)!r}; use i, m or s")
        return flags

    def compiled(self) -> re.Pattern[str]:
        combined = re.NOFLAG
        for letter in self.flags:
            combined |= REGEX_FLAGS[letter]
        return re.compile(self.pattern, combined)


Fact = str | list[str]


class FactsParams(CheckParams):
    facts: list[Fact] = Field(
        min_length=1, description="Each fact is a phrase, or a list of alternative phrasings."
    )
    min_ratio: float = Field(
        default=1.0, gt=0, le=1, description="Share of facts that must appear."
    )

    @field_validator("facts")
    @classmethod
    def _phrases_not_empty(cls, facts: list[Fact]) -> list[Fact]:
        for fact in facts:
            phrasings = [fact] if isinstance(fact, str) else fact
            if not phrasings or not all(normalize_for_facts(p) for p in phrasings):
                raise ValueError(
                    f"fact {fact!r} needs at least one phrasing with letters or digits"
                )
        return facts


def normalize_for_facts(text: str) -> str:
    """Lower case, no punctuation or thousands separators, single spaces."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _PUNCTUATION.sub(" ", _THOUSANDS_COMMA.sub("", text))
    return " ".join(text.split())


@check("equals", EqualsParams)
def equals(params: EqualsParams, evidence: Evidence) -> CheckResult:
    """The answer equals the expected text (surrounding whitespace ignored)."""

    def canonical(text: str) -> str:
        text = " ".join(text.split()) if params.normalize_whitespace else text.strip()
        return text if params.case_sensitive else text.casefold()

    if canonical(evidence.answer) == canonical(params.value):
        return CheckResult.of(True, f"answer equals {quote(params.value)}")
    return CheckResult.of(
        False, f"expected {quote(params.value)}, found {quote(evidence.answer.strip())}"
    )


@check("contains", ContainsParams)
def contains(params: ContainsParams, evidence: Evidence) -> CheckResult:
    """The answer contains the given substring(s): all of them, or any one (the whitespace around
    the answer left out)."""
    fold = str if params.case_sensitive else str.casefold
    answer = fold(trimmed(evidence.answer))
    needles = params.needles()
    found = [needle for needle in needles if fold(needle) in answer]
    missing = [needle for needle in needles if needle not in found]
    # The constraint, then what was found: never a bare list that reads as its own opposite.
    listed = ", ".join(map(quote, needles))
    wanted = f"contains {listed}" if len(needles) == 1 else f"contains {params.mode} of {listed}"
    shown = quote(trimmed(evidence.answer))
    if params.mode == "any":
        if found:
            return CheckResult.of(True, f"{wanted}: found {', '.join(map(quote, found))}")
        return CheckResult.of(False, f"{wanted}: found none in answer {shown}")
    if not missing:
        return CheckResult.of(True, f"{wanted}: found {'it' if len(needles) == 1 else 'all'}")
    present = f" (found {', '.join(map(quote, found))})" if found else ""
    return CheckResult.of(
        False, f"{wanted}: missing {', '.join(map(quote, missing))}{present} in answer {shown}"
    )


@check("regex", RegexParams)
def regex(params: RegexParams, evidence: Evidence) -> CheckResult:
    """The answer, without the whitespace around it, matches a regular expression (anywhere, or
    in full)."""
    pattern = params.compiled()
    answer = trimmed(evidence.answer)
    if params.full_match:
        if pattern.fullmatch(answer):
            return CheckResult.of(True, f"answer fully matches /{params.pattern}/")
        return CheckResult.of(
            False, f"answer does not fully match /{params.pattern}/: {quote(answer)}"
        )
    match = pattern.search(answer)
    if match:
        return CheckResult.of(True, f"/{params.pattern}/ matched {quote(match.group(0))}")
    return CheckResult.of(False, f"/{params.pattern}/ not found in answer {quote(answer)}")


@check("facts", FactsParams)
def facts(params: FactsParams, evidence: Evidence) -> CheckResult:
    """The answer states the key facts, each in one of its phrasings (case, punctuation aside)."""
    answer = f" {normalize_for_facts(evidence.answer)} "
    missing = [fact for fact in params.facts if not _fact_found(fact, answer)]
    total = len(params.facts)
    ratio = (total - len(missing)) / total
    summary = f"found {total - len(missing)}/{total} facts"
    if missing:
        summary += f" (need {params.min_ratio:.0%}); missing: " + "; ".join(map(_describe, missing))
    return CheckResult(passed=ratio >= params.min_ratio, score=ratio, reason=summary)


def _fact_found(fact: Fact, padded_answer: str) -> bool:
    phrasings = [fact] if isinstance(fact, str) else fact
    return any(f" {normalize_for_facts(phrase)} " in padded_answer for phrase in phrasings)


def _describe(fact: Fact) -> str:
    return quote(fact) if isinstance(fact, str) else " / ".join(map(quote, fact))
