"""Agent text as it is (web/display.py): invisible format characters shown as their code points,
ANSI colours as spans of fixed classes, the text itself always escaped."""

from __future__ import annotations

import pytest
from markupsafe import Markup

from benchyard.web.display import ansi, neutralise, verbatim


@pytest.mark.parametrize("code", [0x202A, 0x202E, 0x2066, 0x2069, 0x200E, 0x200F, 0x200B, 0xFEFF])
def test_an_invisible_format_character_is_shown_as_its_code_point(code: int) -> None:
    assert neutralise(f"admin{chr(code)}txt.exe") == f"admin[U+{code:04X}]txt.exe"


def test_markup_and_form_values_pass_as_they_are() -> None:
    assert neutralise(Markup("<b>\u202e</b>")) == Markup("<b>\u202e</b>")
    assert neutralise(verbatim("a\u202eb")) == "a\u202eb"
    assert neutralise(3) == 3


def test_sgr_colours_become_spans_and_the_text_stays_escaped() -> None:
    shown = ansi("\x1b[1;31mFAIL <script>\x1b[0m ok \x1b[92mgreen\x1b[39m plain")
    assert shown == (
        '<span class="ansi-red ansi-bold">FAIL &lt;script&gt;</span> ok '
        '<span class="ansi-bright-green">green</span> plain'
    )


def test_other_escapes_are_dropped_and_a_lone_escape_is_visible() -> None:
    shown = ansi("a\x1b[2Kb\x1b]0;title\x07c\x1b[38;2;1;2;3md\x1b[38;5;4me \x1b")
    assert shown == 'abcd<span class="ansi-blue">e [U+001B]</span>'  # 24-bit colour: not drawn


def test_bidi_characters_inside_coloured_text_are_shown_too() -> None:
    assert ansi("\x1b[31mevil\u202eexe") == '<span class="ansi-red">evil[U+202E]exe</span>'


def test_a_class_name_never_comes_from_the_text() -> None:
    assert ansi('\x1b[31;"onclick=x;999m x') == "nclick=x;999m x"  # not SGR: the escape dropped
