"""`ifeval`: one of IFEval's 25 verifiable instructions, in the official strict or loose mode.

Each rule below reproduces the official `check_following` of its instruction, quirks included
(keywords are regular expressions, letters are counted in the lower-cased text, a bullet is a line
starting with `*` or `-`, a failed language detection counts as followed). Strict: the response
is non-empty and follows the rule. Loose: any of eight variants follows it: the response, without
its first line, without its last line, without both, and each of those four with every `*`
removed (each stripped, and non-empty). A prompt is followed when all its instructions are; the
report's IFEval figures give prompt-level and instruction-level accuracy in both modes.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, model_validator

from benchyard.checks.base import CheckParams, CheckResult, Evidence
from benchyard.checks.registry import check
from benchyard.formats.ifeval import text as ifeval_text

Args = dict[str, Any]
Rule = Callable[[str, Args], bool]
LESS_THAN, AT_LEAST = "less than", "at least"
CONSTRAINED_OPTIONS = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


def _compare(count: int, relation: str, threshold: int) -> bool:
    """IFEval's relation: `less than` is <, `at least` is >= (and nothing else is followed)."""
    if relation == LESS_THAN:
        return count < threshold
    if relation == AT_LEAST:
        return count >= threshold
    return False


def _compare_else_at_least(count: int, relation: str, threshold: int) -> bool:
    """The letter and capital-word rules: `less than` is <, anything else >=."""
    return count < threshold if relation == LESS_THAN else count >= threshold


def keywords_existence(text: str, args: Args) -> bool:
    return all(re.search(word, text, flags=re.IGNORECASE) for word in sorted(args["keywords"]))


def keywords_frequency(text: str, args: Args) -> bool:
    found = len(re.findall(args["keyword"].strip(), text, flags=re.IGNORECASE))
    return _compare(found, args["relation"], args["frequency"])


def forbidden_words(text: str, args: Args) -> bool:
    return not any(
        re.search(r"\b" + word + r"\b", text, flags=re.IGNORECASE)
        for word in sorted(set(args["forbidden_words"]))
    )


def letter_frequency(text: str, args: Args) -> bool:
    letter = args["letter"].strip().lower()
    return _compare_else_at_least(
        Counter(text.lower())[letter], args["let_relation"], args["let_frequency"]
    )


def response_language(text: str, args: Args) -> bool:
    try:
        return bool(ifeval_text.detect_language(text) == args["language"])
    except ifeval_text.LanguageUnknown:
        return True


def number_sentences(text: str, args: Args) -> bool:
    return _compare(ifeval_text.count_sentences(text), args["relation"], args["num_sentences"])


def number_paragraphs(text: str, args: Args) -> bool:
    paragraphs = re.split(r"\s?\*\*\*\s?", text)
    count = len(paragraphs)
    for index, paragraph in enumerate(paragraphs):
        if not paragraph.strip():
            if index in (0, len(paragraphs) - 1):
                count -= 1
            else:
                return False
    return bool(count == args["num_paragraphs"])


def number_words(text: str, args: Args) -> bool:
    return _compare(ifeval_text.count_words(text), args["relation"], args["num_words"])


def nth_paragraph_first_word(text: str, args: Args) -> bool:
    paragraphs = re.split(r"\n\n", text)
    count = len(paragraphs) - sum(1 for paragraph in paragraphs if not paragraph.strip())
    nth = args["nth_paragraph"]
    if nth > count:
        return False
    paragraph = paragraphs[nth - 1].strip()
    if not paragraph:
        return False
    word = paragraph.split()[0].strip().lstrip("'").lstrip('"')
    first = ""
    for letter in word:
        if letter in {".", ",", "?", "!", "'", '"'}:
            break
        first += letter.lower()
    return bool(count == args["num_paragraphs"] and first == args["first_word"].lower())


def number_placeholders(text: str, args: Args) -> bool:
    return bool(len(re.findall(r"\[.*?\]", text)) >= args["num_placeholders"])


def postscript(text: str, args: Args) -> bool:
    marker = args["postscript_marker"].strip()
    if marker == "P.P.S":
        pattern = r"\s*p\.\s?p\.\s?s.*$"
    elif marker == "P.S.":
        pattern = r"\s*p\.\s?s\..*$"
    else:
        pattern = r"\s*" + marker.lower() + r".*$"
    return bool(re.findall(pattern, text.lower(), flags=re.MULTILINE))


def number_bullet_lists(text: str, args: Args) -> bool:
    stars = re.findall(r"^\s*\*[^\*].*$", text, flags=re.MULTILINE)
    dashes = re.findall(r"^\s*-.*$", text, flags=re.MULTILINE)
    return bool(len(stars) + len(dashes) == args["num_bullets"])


def constrained_response(text: str, args: Args) -> bool:
    stripped = text.strip()
    return any(option in stripped for option in CONSTRAINED_OPTIONS)


def number_highlighted_sections(text: str, args: Args) -> bool:
    count = sum(1 for h in re.findall(r"\*[^\n\*]*\*", text) if h.strip("*").strip())
    count += sum(
        1
        for h in re.findall(r"\*\*[^\n\*]*\*\*", text)
        if h.removeprefix("**").removesuffix("**").strip()
    )
    return bool(count >= args["num_highlights"])


def multiple_sections(text: str, args: Args) -> bool:
    splitter = args["section_spliter"].strip()
    sections = re.split(r"\s?" + splitter + r"\s?\d+\s?", text)
    return bool(len(sections) - 1 >= args["num_sections"])


def json_format(text: str, args: Args) -> bool:
    value = text.strip()
    for prefix in ("```json", "```Json", "```JSON", "```"):
        value = value.removeprefix(prefix)
    value = value.removesuffix("```").strip()
    try:
        json.loads(value)
    except ValueError:
        return False
    return True


def title(text: str, args: Args) -> bool:
    return any(t.lstrip("<").rstrip(">").strip() for t in re.findall(r"<<[^\n]+>>", text))


def two_responses(text: str, args: Args) -> bool:
    responses = text.split("******")
    valid = []
    for index, response in enumerate(responses):
        if not response.strip():
            if index not in (0, len(responses) - 1):
                return False
        else:
            valid.append(response)
    return len(valid) == 2 and valid[0].strip() != valid[1].strip()


def repeat_prompt(text: str, args: Args) -> bool:
    return text.strip().lower().startswith(args["prompt_to_repeat"].strip().lower())


def end_checker(text: str, args: Args) -> bool:
    return text.strip().strip('"').lower().endswith(args["end_phrase"].strip().lower())


def capital_word_frequency(text: str, args: Args) -> bool:
    capitals = sum(1 for word in ifeval_text.word_tokens(text) if word.isupper())
    return _compare_else_at_least(capitals, args["capital_relation"], args["capital_frequency"])


def english_capital(text: str, args: Args) -> bool:
    try:
        return text.isupper() and ifeval_text.detect_language(text) == "en"
    except ifeval_text.LanguageUnknown:
        return True


def english_lowercase(text: str, args: Args) -> bool:
    try:
        return text.islower() and ifeval_text.detect_language(text) == "en"
    except ifeval_text.LanguageUnknown:
        return True


def no_comma(text: str, args: Args) -> bool:
    return not re.search(r"\,", text)


def quotation(text: str, args: Args) -> bool:
    stripped = text.strip()
    return len(stripped) > 1 and stripped[0] == '"' and stripped[-1] == '"'


INSTRUCTIONS: dict[str, tuple[Rule, tuple[str, ...]]] = {
    "keywords:existence": (keywords_existence, ("keywords",)),
    "keywords:frequency": (keywords_frequency, ("keyword", "frequency", "relation")),
    "keywords:forbidden_words": (forbidden_words, ("forbidden_words",)),
    "keywords:letter_frequency": (letter_frequency, ("letter", "let_frequency", "let_relation")),
    "language:response_language": (response_language, ("language",)),
    "length_constraints:number_sentences": (number_sentences, ("num_sentences", "relation")),
    "length_constraints:number_paragraphs": (number_paragraphs, ("num_paragraphs",)),
    "length_constraints:number_words": (number_words, ("num_words", "relation")),
    "length_constraints:nth_paragraph_first_word": (
        nth_paragraph_first_word,
        ("num_paragraphs", "nth_paragraph", "first_word"),
    ),
    "detectable_content:number_placeholders": (number_placeholders, ("num_placeholders",)),
    "detectable_content:postscript": (postscript, ("postscript_marker",)),
    "detectable_format:number_bullet_lists": (number_bullet_lists, ("num_bullets",)),
    "detectable_format:constrained_response": (constrained_response, ()),
    "detectable_format:number_highlighted_sections": (
        number_highlighted_sections,
        ("num_highlights",),
    ),
    "detectable_format:multiple_sections": (multiple_sections, ("section_spliter", "num_sections")),
    "detectable_format:json_format": (json_format, ()),
    "detectable_format:title": (title, ()),
    "combination:two_responses": (two_responses, ()),
    "combination:repeat_prompt": (repeat_prompt, ("prompt_to_repeat",)),
    "startend:end_checker": (end_checker, ("end_phrase",)),
    "change_case:capital_word_frequency": (
        capital_word_frequency,
        ("capital_frequency", "capital_relation"),
    ),
    "change_case:english_capital": (english_capital, ()),
    "change_case:english_lowercase": (english_lowercase, ()),
    "punctuation:no_comma": (no_comma, ()),
    "startend:quotation": (quotation, ()),
}
"""Every instruction id of IFEval, its rule and the arguments it needs."""

_INTEGER_ARGS = frozenset(
    {
        "frequency",
        "let_frequency",
        "num_sentences",
        "num_paragraphs",
        "num_words",
        "nth_paragraph",
        "num_placeholders",
        "num_bullets",
        "num_highlights",
        "num_sections",
        "capital_frequency",
    }
)
_LIST_ARGS = frozenset({"keywords", "forbidden_words"})


def loose_variants(response: str) -> list[str]:
    """The official loose mode's eight responses."""
    lines = response.split("\n")
    without_first = "\n".join(lines[1:]).strip()
    without_last = "\n".join(lines[:-1]).strip()
    without_both = "\n".join(lines[1:-1]).strip()
    return [
        response,
        response.replace("*", ""),
        without_first,
        without_last,
        without_both,
        without_first.replace("*", ""),
        without_last.replace("*", ""),
        without_both.replace("*", ""),
    ]


def follows(instruction: str, kwargs: Args, response: str, mode: str) -> bool:
    """Whether `response` follows the instruction, as the official strict or loose mode says."""
    rule = INSTRUCTIONS[instruction][0]
    candidates = [response] if mode == "strict" else loose_variants(response)
    return any(text.strip() and rule(text, kwargs) for text in candidates)


class IfevalParams(CheckParams):
    instruction: str = Field(description="The instruction id, e.g. punctuation:no_comma.")
    kwargs: dict[str, Any] = Field(default_factory=dict, description="Its arguments.")
    mode: Literal["strict", "loose"] = "strict"

    @model_validator(mode="after")
    def _known_with_arguments(self) -> IfevalParams:
        if self.instruction not in INSTRUCTIONS:
            raise ValueError(
                f"unknown IFEval instruction '{self.instruction}' "
                f"(known: {', '.join(sorted(INSTRUCTIONS))})"
            )
        needed = INSTRUCTIONS[self.instruction][1]
        given = {key for key, value in self.kwargs.items() if value is not None}
        missing = [name for name in needed if name not in given]
        if missing:
            raise ValueError(f"{self.instruction} needs kwargs {', '.join(missing)}")
        for name in needed:
            value = self.kwargs[name]
            if name in _INTEGER_ARGS and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"kwargs.{name} must be a whole number")
            if name in _LIST_ARGS and not (
                isinstance(value, list) and all(isinstance(item, str) for item in value)
            ):
                raise ValueError(f"kwargs.{name} must be a list of text")
            if name not in _INTEGER_ARGS | _LIST_ARGS and not isinstance(value, str):
                raise ValueError(f"kwargs.{name} must be text")
        if self.instruction == "keywords:letter_frequency" and len(self.kwargs["letter"]) != 1:
            raise ValueError("kwargs.letter must be one letter")
        return self


@check("ifeval", IfevalParams)
def ifeval(params: IfevalParams, evidence: Evidence) -> CheckResult:
    """One IFEval instruction followed, in the official strict or loose mode."""
    followed = follows(params.instruction, params.kwargs, evidence.answer, params.mode)
    verb = "followed" if followed else "not followed"
    how = "the response" if params.mode == "strict" else "one of the 8 loose variants"
    if not followed and not evidence.answer.strip():
        return CheckResult.of(
            False, f"{params.mode}: {params.instruction} not followed: empty response"
        )
    return CheckResult.of(followed, f"{params.mode}: {params.instruction} {verb} ({how})")
