"""Text an agent wrote, shown as what it is: invisible format characters made visible, and the
colours of ANSI escape sequences drawn as spans (of a fixed set of classes) instead of raw escapes.

Every value a template prints passes through `neutralise` (the environment's finalize): a
bidirectional override (U+202E), isolate (U+2066 to U+2069), mark (U+200E/F, U+061C) or zero-width
character, or an escape character, is printed as its code point in brackets, `[U+202E]`, so that
no name can display as another. `ansi` turns SGR sequences into spans, escaping the text
itself; every other escape sequence is dropped."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from markupsafe import Markup, escape

INVISIBLE = re.compile("[\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff\x1b]")
_SGR = re.compile(r"\x1b\[([0-9;:]*)m")
_OTHER_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
COLOURS = ("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white")


class Verbatim(str):
    """A value printed as it is (still escaped): what a form sends back, so that saving it writes
    the characters it had."""

    __slots__ = ()


def verbatim(value: str) -> Verbatim:
    return Verbatim(value)


def _visible(match: re.Match[str]) -> str:
    return f"[U+{ord(match.group()):04X}]"


def neutralise(value: Any) -> Any:
    """Invisible characters in a printed string shown as their code points (markup the filters
    below made, and Verbatim values, pass as they are)."""
    if isinstance(value, str) and not isinstance(value, Markup | Verbatim):
        return INVISIBLE.sub(_visible, value)
    return value


@dataclass(frozen=True)
class Style:
    foreground: str | None = None
    background: str | None = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False

    def classes(self) -> str:
        names = [
            *([f"ansi-{self.foreground}"] if self.foreground else []),
            *([f"ansi-bg-{self.background}"] if self.background else []),
            *(name for name, on in self._flags() if on),
        ]
        return " ".join(names)

    def _flags(self) -> tuple[tuple[str, bool], ...]:
        return (
            ("ansi-bold", self.bold),
            ("ansi-dim", self.dim),
            ("ansi-italic", self.italic),
            ("ansi-underline", self.underline),
        )


def ansi(text: str | None) -> Markup:
    """The text escaped, its SGR colours and weights as `<span class="ansi-…">`."""
    if not text:
        return Markup("")
    pieces: list[str] = []
    style = Style()
    position = 0
    for match in _SGR.finditer(text):
        pieces.append(_span(text[position : match.start()], style))
        style = _apply(style, match.group(1))
        position = match.end()
    pieces.append(_span(text[position:], style))
    return Markup("".join(pieces))


def _span(part: str, style: Style) -> str:
    shown = str(escape(neutralise(_OTHER_ESCAPE.sub("", part))))
    classes = style.classes()
    if not shown or not classes:
        return shown
    return f'<span class="{classes}">{shown}</span>'


def _apply(style: Style, parameters: str) -> Style:
    codes = [int(code) if code.isdigit() else 0 for code in re.split("[;:]", parameters)]
    index = 0
    while index < len(codes):
        code = codes[index]
        if code in (38, 48):  # extended colour: 5;N (the 16 first only) or 2;R;G;B (dropped)
            colour = _extended(codes[index + 1 :])
            index += 3 if codes[index + 1 : index + 2] == [5] else 5
            style = (
                replace(style, foreground=colour)
                if code == 38
                else replace(style, background=colour)
            )
            continue
        style = _code(style, code)
        index += 1
    return style


def _extended(rest: list[int]) -> str | None:
    if len(rest) >= 2 and rest[0] == 5 and rest[1] < 16:
        return _colour(rest[1] % 8, bright=rest[1] >= 8)
    return None


def _colour(number: int, *, bright: bool) -> str:
    return ("bright-" if bright else "") + COLOURS[number]


_RESETS: dict[int, dict[str, Any]] = {
    22: {"bold": False, "dim": False},
    23: {"italic": False},
    24: {"underline": False},
    39: {"foreground": None},
    49: {"background": None},
}
_SETS: dict[int, dict[str, Any]] = {
    1: {"bold": True},
    2: {"dim": True},
    3: {"italic": True},
    4: {"underline": True},
}


def _code(style: Style, code: int) -> Style:
    if code == 0:
        return Style()
    if code in _SETS or code in _RESETS:
        return replace(style, **(_SETS.get(code) or _RESETS[code]))
    for base, bright in ((30, False), (90, True)):
        if base <= code < base + 8:
            return replace(style, foreground=_colour(code - base, bright=bright))
    for base, bright in ((40, False), (100, True)):
        if base <= code < base + 8:
            return replace(style, background=_colour(code - base, bright=bright))
    return style
