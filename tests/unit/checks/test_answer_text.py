from __future__ import annotations

from benchyard.checks.answer_text import FencedBlock, clip, fenced_blocks, quote, without_fences

MARKDOWN = """Intro
```Python title="x"
print(1)
```
middle
~~~
plain
~~~
````md
```inner```
````
"""


def test_fenced_blocks_find_backtick_and_tilde_fences() -> None:
    assert fenced_blocks(MARKDOWN) == [
        FencedBlock(language="python", body="print(1)"),
        FencedBlock(language="", body="plain"),
        FencedBlock(language="md", body="```inner```"),
    ]


def test_an_unclosed_fence_is_no_block() -> None:
    assert fenced_blocks("```json\n{}") == []


def test_without_fences_keeps_the_prose() -> None:
    assert without_fences(MARKDOWN).split() == ["Intro", "middle"]


def test_clip_and_quote() -> None:
    assert clip("short") == "short"
    assert clip("abcdefghij", 8) == "abcde..."
    assert quote("it's\n" * 40) == repr(("it's\n" * 40)[:77] + "...")
