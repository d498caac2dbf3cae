"""The text tools IFEval's rules use, as the official code uses them, with nothing fetched at run
time:

- sentences: NLTK's Punkt tokenizer with its English model (the `punkt_tab` parameters, shipped
  in `punkt_english/`: the official code loads `tokenizers/punkt/english.pickle`, which NLTK 3.9+
  reads from those same parameters);
- words for `capital_word_frequency`: `nltk.word_tokenize`, i.e. those sentences, each split by
  NLTK's Treebank word tokenizer;
- words for `number_words`: every run of `\\w+` (NLTK's `RegexpTokenizer(r"\\w+")`);
- language: langdetect, seeded (`DetectorFactory.seed = 0`) so that a verdict never changes from
  one run to the next (the official code leaves it unseeded).
"""

from __future__ import annotations

import functools
import gzip
import re
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

PUNKT_DIR = Path(__file__).parent / "punkt_english"
LANGDETECT_SEED = 0
_lock = threading.Lock()


def _lines(name: str) -> list[str]:
    path = PUNKT_DIR / name
    if name.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            text = handle.read()
    else:
        text = path.read_text(encoding="utf-8")
    return text.splitlines()


@functools.cache
def _sentence_tokenizer() -> Any:
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    params = PunktParameters()
    params.collocations = {tuple(line.split("\t")) for line in _lines("collocations.tab")}
    params.sent_starters = set(_lines("sent_starters.txt"))
    params.abbrev_types = set(_lines("abbrev_types.txt"))
    params.ortho_context = defaultdict(
        int,
        {
            word: int(flags)
            for word, flags in (ln.split("\t") for ln in _lines("ortho_context.tab.gz"))
        },
    )
    return PunktSentenceTokenizer(params)


def sentences(text: str) -> list[str]:
    """Punkt's English sentences."""
    return list(_sentence_tokenizer().tokenize(text))


def count_sentences(text: str) -> int:
    return len(sentences(text))


@functools.cache
def _word_tokenizer() -> Any:
    from nltk.tokenize.destructive import NLTKWordTokenizer

    return NLTKWordTokenizer()


def word_tokens(text: str) -> list[str]:
    """`nltk.word_tokenize(text)`: Punkt's sentences, each split into Treebank tokens."""
    tokenizer = _word_tokenizer()
    return [token for sentence in sentences(text) for token in tokenizer.tokenize(sentence)]


_WORD = re.compile(r"\w+", re.UNICODE | re.MULTILINE | re.DOTALL)


def count_words(text: str) -> int:
    return len(_WORD.findall(text))


class LanguageUnknown(Exception):
    """langdetect could not tell (no features in the text): the official rules count it as followed."""


def detect_language(text: str) -> str:
    """langdetect's best language code, seeded."""
    from langdetect import DetectorFactory, detect
    from langdetect.lang_detect_exception import LangDetectException

    with _lock:  # the seed and the factory are global
        DetectorFactory.seed = LANGDETECT_SEED
        try:
            return str(detect(text))
        except LangDetectException as error:
            raise LanguageUnknown(str(error)) from None
