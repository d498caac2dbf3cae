"""The prompts `benchyard speed` sends: plain prose of an exact number of words, each opening with
a nonce so that no two measured calls share a prefix a prompt cache could serve (unless the
run asks for `same_prompt`), and asking for a reply long enough to time its decoding."""

from __future__ import annotations

import hashlib
import random
import re

_VOCABULARY = (
    "the river morning harbour lantern quiet market garden winter summer bridge village road "
    "north south east west old new small large bright dark silver copper stone timber rope sail "
    "ship crew captain keeper baker weaver miller farmer teacher doctor child traveller letter "
    "window door table chair candle bread salt apple orchard field meadow forest hill valley "
    "tower clock bell song story map compass island coast storm rain wind snow fog light shadow "
    "walked carried opened closed found lost counted painted mended watched remembered waited "
    "slowly quickly carefully again later before after under over across beside toward through "
    "and but because while when where every some many few each other another many"
)
_WORDS = _VOCABULARY.split()

HEAD = "Session {nonce}. Read these notes from a travel journal, then continue the journal."
TAIL = "Continue the journal in plain prose, as long as you can, without lists or headings."


def prompt_text(words: int, nonce: str) -> str:
    """A prompt of exactly `words` words (at least the head and tail), seeded by `words` so that
    the text is the same for a length in every run but for its nonce."""
    head, tail = HEAD.format(nonce=nonce).split(), TAIL.split()
    body_words = max(0, words - len(head) - len(tail))
    chooser = random.Random(words)
    sentences: list[str] = []
    remaining = body_words
    while remaining > 0:
        size = min(remaining, chooser.randint(7, 14))
        picked = [chooser.choice(_WORDS) for _ in range(size)]
        sentences.append(" ".join(picked).capitalize() + ".")
        remaining -= size
    return " ".join([*head, *sentences, *tail])


def prompt_key(text: str) -> str:
    """A short key of a prompt's text: equal keys, the same prompt."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# Words a reply on topic uses: the prompts' vocabulary and English's commonest words. A reply
# continuing a travel journal in prose has many of them (a third of its words or more: "the",
# "and", "we", "was" alone make up a fifth of English prose); garbage has next to none.
_COMMON = (
    "a an the and or but if then so as at by for from in into of off on onto out to up with "
    "without about above after again against all am any are be been before being below between "
    "both can could did do does down during each few had has have having he her here hers him "
    "his how i is it its just me more most my no nor not now once only other our ours over own "
    "same she should some such than that their them there these they this those through too "
    "under until very was we were what when where which while who whom why will would you your "
    "day days night one two three first last long little way back still went came saw said "
    "made through morning evening"
)
EXPECTED_WORDS = frozenset(_WORDS) | frozenset(_COMMON.split())
ON_TOPIC_SHARE = 0.15  # a reply on topic: at least this share of its words expected
ON_TOPIC_MIN_WORDS = 8  # replies shorter than this are not judged


def expected_words(reply: str) -> int:
    """How many of the reply's words (letters only, any case) an answer to the prompts uses."""
    words = (re.sub(r"[^a-z']", "", word.casefold()) for word in reply.split())
    return sum(1 for word in words if word in EXPECTED_WORDS)
