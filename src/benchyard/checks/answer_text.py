"""Helpers for reading an answer's text: quoting it in reasons, and finding its fenced blocks."""

from __future__ import annotations

import re
from dataclasses import dataclass

QUOTE_LIMIT = 80

_FENCE = re.compile(
    r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<language>[^\s`]*)[^\n]*\n"
    r"(?P<body>.*?)\n?[ \t]*(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True)
class FencedBlock:
    """A fenced code block: its language tag (lower case, "" when untagged) and its body."""

    language: str
    body: str


def trimmed(answer: str) -> str:
    """The answer without the whitespace around it, as the checks that read its wording compare
    it. Answers are stored as the agent or model gave them (a trailing newline, a leading blank
    line): only the official format checks that read them whole (ifeval, function_call_ast's
    decoder) see that whitespace."""
    return answer.strip()


def clip(text: str, limit: int = QUOTE_LIMIT) -> str:
    """`text` cut to `limit` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    """`text` clipped and quoted, for a check's reason."""
    return repr(clip(text, limit))


def fenced_blocks(text: str) -> list[FencedBlock]:
    """The ``` or ~~~ fenced blocks of a markdown text, in order."""
    return [
        FencedBlock(language=match["language"].lower(), body=match["body"])
        for match in _FENCE.finditer(text)
    ]


def without_fences(text: str) -> str:
    """`text` with its fenced blocks removed (so that code is not read as prose)."""
    return _FENCE.sub("", text)
