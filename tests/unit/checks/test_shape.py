from __future__ import annotations

from typing import Any

import pytest

from benchyard.checks.shape import measure

from .helpers import check_type, params_error, run_check

REPORT = """Summary of findings

- first point
* second point
+ third point
1. numbered one
2) numbered two

```python
- not a list item
print("hi")
```

```bash
ls
```
"""


def shape(answer: str, **params: Any) -> tuple[bool, float, str]:
    result = run_check("response_shape", answer, **params)
    return result.passed, result.score, result.reason


def test_response_shape_is_registered_with_a_summary() -> None:
    assert check_type("response_shape").summary.startswith("The answer has the required form")


@pytest.mark.parametrize(
    ("unit", "size"), [("chars", len("one two\n\nthree")), ("words", 3), ("lines", 2)]
)
def test_measure(unit: Any, size: int) -> None:
    assert measure("  one two\n\nthree  \n", unit) == size


def test_length_in_words_by_default() -> None:
    assert shape("one two three", min_length=3, max_length=3) == (
        True,
        1.0,
        "all 2 constraints met: at least 3 words (found 3); at most 3 words (found 3)",
    )
    assert shape("one two", min_length=3) == (
        False,
        0.0,
        "1 of 1 constraints unmet: at least 3 words (found 2)",
    )


def test_length_in_chars_and_lines() -> None:
    assert shape("abcdef", max_length=5, unit="chars")[2] == (
        "1 of 1 constraints unmet: at most 5 chars (found 6)"
    )
    assert shape("a\nb\n\nc", min_length=3, unit="lines")[0]


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("One. Two! Three?", 3),
        ("Dr. Smith met J. R. R. Tolkien. He said hi.", 2),
        ("Pi is 3.14 and e is 2.72 today", 1),
        ('He said "stop." Then he left.', 2),
        ("Wait... what?! Fine.", 3),
        ("A heading\n\nThen a paragraph. And another sentence.", 3),
        ("```python\nx = 1. y = 2. z\n```\nDone.", 1),
        ("", 0),
    ],
)
def test_sentences(text: str, sentences: int) -> None:
    assert measure(text, "sentences") == sentences


def test_length_in_sentences() -> None:
    """word_count and sentence_count are response_shape with unit words or sentences."""
    assert shape("It rained. Then it stopped. We went out.", max_length=2, unit="sentences")[2] == (
        "1 of 1 constraints unmet: at most 2 sentences (found 3)"
    )
    assert shape("Dr. Who arrived. He left.", min_length=2, max_length=2, unit="sentences")[0]


def test_list_items_count_markdown_bullets_outside_code() -> None:
    assert shape(REPORT, min_list_items=5, max_list_items=5)[0]
    passed, _, reason = shape(REPORT, min_list_items=6)
    assert not passed and reason == "1 of 1 constraints unmet: at least 6 list items (found 5)"


def test_list_items_ignore_bold_text_and_rules() -> None:
    assert shape("**bold** line\n---\n-no space", max_list_items=0)[0]


def test_code_blocks_with_and_without_a_language() -> None:
    assert shape(REPORT, min_code_blocks=2)[0]
    assert shape(REPORT, min_code_blocks=1, code_language="Python")[0]
    passed, _, reason = shape(REPORT, min_code_blocks=2, code_language="python")
    assert not passed
    assert reason == "1 of 1 constraints unmet: at least 2 python code blocks (found 1)"


def test_code_language_alone_asks_for_one_block() -> None:
    assert shape(REPORT, code_language="bash")[0]
    assert shape(REPORT, code_language="rust")[2] == (
        "1 of 1 constraints unmet: at least 1 rust code blocks (found 0)"
    )


def test_required_json_keys() -> None:
    answer = '```json\n{"name": "Ada", "age": 36}\n```'
    assert shape(answer, required_json_keys=["name", "age"])[0]
    assert shape(answer, required_json_keys=["name", "email"])[2] == (
        "1 of 1 constraints unmet: a JSON object with keys name, email (missing email)"
    )
    assert shape("[1, 2]", required_json_keys=["a"])[2].endswith("(found a JSON array)")
    assert shape("name: Ada", required_json_keys=["a"])[2].endswith("(the answer is not JSON)")


def test_case() -> None:
    assert shape("all quiet, 42 times.", case="lower")[0]
    assert shape("LOUD NOISES!", case="upper")[0]
    assert shape("Mixed", case="lower")[2] == (
        "1 of 1 constraints unmet: all lower case (found 'Mixed')"
    )


def test_starts_and_ends_with_after_stripping() -> None:
    answer = "\n Dear team, we shipped it. Regards\n"
    assert shape(answer, starts_with="Dear", ends_with="Regards")[0]
    passed, score, reason = shape(answer, starts_with="Hello", ends_with="Regards")
    assert not passed and score == 0.5
    assert reason == (
        "1 of 2 constraints unmet: starts with 'Hello' (found 'Dear team, we shipped it. Regards')"
    )


def test_forbidden_is_case_insensitive() -> None:
    assert shape("All good.", forbidden=["sorry", "as an AI"])[0]
    assert shape("As an ai, I'm SORRY.", forbidden=["sorry", "as an AI", "oops"])[2] == (
        "1 of 1 constraints unmet: forbidden 'sorry', 'as an AI', 'oops' (found 'sorry', 'as an AI')"
    )


def test_score_is_the_fraction_of_constraints_met() -> None:
    passed, score, reason = shape(
        "yes", min_length=2, case="lower", forbidden=["no"], ends_with="!"
    )
    assert not passed
    assert score == 0.5
    assert reason.startswith("2 of 4 constraints unmet: at least 2 words (found 1); ends with '!'")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "give at least one constraint"),
        ({"unit": "chars"}, "give at least one constraint"),
        ({"forbidden": []}, "give at least one constraint"),
        ({"min_length": 5, "max_length": 2}, "min_length (5) is greater than max_length (2)"),
        ({"min_list_items": 3, "max_list_items": 1}, "min_list_items (3) is greater than"),
        ({"forbidden": ["ok", ""]}, "forbidden and required_json_keys take non-empty strings"),
        ({"min_length": -1}, "min_length\n  Input should be greater than or equal to 0"),
        (
            {"unit": "pages", "min_length": 1},
            "unit\n  Input should be 'chars', 'words', 'lines' or 'sentences'",
        ),
        ({"case": "title"}, "case\n  Input should be 'lower' or 'upper'"),
        ({"starts_with": ""}, "starts_with\n  String should have at least 1 character"),
        ({"max_words": 3}, "max_words\n  Extra inputs are not permitted"),
    ],
)
def test_response_shape_params_are_validated(params: dict[str, Any], message: str) -> None:
    assert message in params_error("response_shape", **params)
