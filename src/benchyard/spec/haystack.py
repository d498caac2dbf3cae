"""Generated long-context text: a `haystack` in a scenario's stimulus, regenerated from its seed
every time the benchmark is loaded, so that tens of thousands of words never sit in the files.

```yaml
stimulus:
  message: |-
    Read the log below, then answer. {{haystack}}
    What is the access code for vault KESTREL? Reply with the number only.
  haystack:
    seed: 4101
    words: 11000                  # filler length
    needles:                      # lines put in the text, at a share of its length
      - {at: 0.37, text: "The access code for vault KESTREL is 4417."}
    sha256: 9c0f...               # of the generated text; optional, checked at load
```

The filler is a log of plausible, repetitive records (shipments, vault codes, dockings, rain
gauges, meetings) drawn from fixed word lists with `random.Random(seed)`: records of the same
shape as the needles, so that finding a needle takes reading, not a keyword. Needles should use
names outside those lists (the lists are below) so that each is the only record of its kind;
`benchyard verify` re-derives each answer from the generated text (a scenario's `derive`).

The text is a pure function of the spec and of GENERATOR_VERSION: a change to the generator
changes every haystack's sha256, which the loader then reports."""

from __future__ import annotations

import functools
import hashlib
import random

from pydantic import BaseModel, ConfigDict, Field, model_validator

GENERATOR_VERSION = "1"
PLACEHOLDER = "{{haystack}}"

PEOPLE = (
    "Ada Hale", "Bram Lowe", "Cora Vint", "Dale Moss", "Edda Pike", "Finn Roe", "Gwen Tarr",
    "Hugo Sand", "Ines Falk", "Jory Quill", "Kaya Bell", "Lars Wren", "Mira Cole", "Nils Dorn",
    "Oona Fitch", "Pavel Stroud", "Rhea Blum", "Sven Harte", "Tilde Voss", "Ulla Crane",
)  # fmt: skip
PLACES = (
    "Ashford", "Brindle", "Carrow", "Dunmere", "Eskholt", "Fernby", "Galloway", "Harrowgate",
    "Islay", "Juniper Point", "Kelso", "Lindqvist", "Marrow Bay", "Northwick", "Oakhaven",
)  # fmt: skip
SHIPS = (
    "Albatross", "Bluefin", "Cormorant", "Dawn Treader", "Egret", "Fairwind", "Gannet",
    "Halcyon", "Ibis", "Jade Star", "Kittiwake", "Lodestar",
)  # fmt: skip
VAULTS = (
    "ORCHID", "MAPLE", "CEDAR", "LINDEN", "ASPEN", "BIRCH", "HAZEL", "ROWAN", "WILLOW", "ALDER",
    "LARCH", "SPRUCE", "POPLAR", "YEW",
)  # fmt: skip
GOODS = (
    "salt", "tin", "wool", "flax", "rope", "lamp oil", "barley", "copper wire", "tea", "slate",
    "timber", "cloth", "glass", "nails",
)  # fmt: skip
STATIONS = ("North", "South", "East", "West", "Upper", "Lower", "Ridge", "Harbour", "Mill")
TOPICS = (
    "the harbour fees", "the late shipment", "the broken crane", "the new rota", "the winter stock",
    "the leaking roof", "the ferry timetable", "the audit", "the pump house", "the market stall",
)  # fmt: skip

_TEMPLATES = (
    "Day {day}: the crew of the {ship} loaded {count} crates of {goods} at {place}.",
    "{person} moved {count} crates of {goods} from {place} to {place2}.",
    "The access code for vault {vault} is {code}.",
    "The ship {ship} docked at {place} on day {day}.",
    "{station} station reported {count} millimetres of rain on day {day}.",
    "At the meeting on day {day}, {person} raised {topic}; {person2} promised an answer.",
    "Inventory at {place}: {count} crates of {goods}, {count2} crates of {goods2}.",
    "{person} was assigned badge number {code} on day {day}.",
    "The night watch at {place} logged nothing unusual.",
    "Weather at {place}: {weather}, wind from the {direction}.",
)
_WEATHER = ("fog", "light rain", "clear skies", "squalls", "drizzle", "overcast", "hail")
_DIRECTIONS = ("north", "south", "east", "west", "north-east", "south-west")


class Needle(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    at: float = Field(ge=0, le=1, description="Where, as a share of the text (0 start, 1 end).")
    text: str = Field(min_length=1, description="The line put into the text.")


class HaystackSpec(BaseModel):
    """Generated filler text with needles, put where the stimulus says {{haystack}}."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int
    words: int = Field(ge=100, le=60_000, description="About this many words of filler.")
    needles: list[Needle] = Field(default_factory=list)
    sha256: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{64}$",
        description="The generated text's sha256; the loader refuses a text that differs.",
    )

    @model_validator(mode="after")
    def _same_text(self) -> HaystackSpec:
        if self.sha256 is not None:
            found = text_sha256(self)
            if found != self.sha256:
                raise ValueError(
                    f"sha256: the text generated from this seed has sha256 {found}, not "
                    f"{self.sha256} (haystack generator version {GENERATOR_VERSION} differs from "
                    "the one that wrote it): the scenario would not be what its author verified"
                )
        return self


def generate(spec: HaystackSpec) -> str:
    """The haystack of `spec`: filler lines, with each needle's line at its place."""
    return _generate(spec.seed, spec.words, tuple((n.at, n.text) for n in spec.needles))


def text_sha256(spec: HaystackSpec) -> str:
    return hashlib.sha256(generate(spec).encode()).hexdigest()


@functools.lru_cache(maxsize=64)
def _generate(seed: int, words: int, needles: tuple[tuple[float, str], ...]) -> str:
    chooser = random.Random(f"benchyard-haystack-{GENERATOR_VERSION}-{seed}")
    lines: list[str] = []
    written = 0
    while written < words:
        line = _record(chooser)
        lines.append(line)
        written += len(line.split())
    for at, text in sorted(needles, key=lambda needle: needle[0], reverse=True):
        lines.insert(round(at * len(lines)), text)
    return "\n".join(lines)


def _record(chooser: random.Random) -> str:
    template = chooser.choice(_TEMPLATES)
    people = chooser.sample(PEOPLE, 2)
    places = chooser.sample(PLACES, 2)
    goods = chooser.sample(GOODS, 2)
    return template.format(
        day=chooser.randint(1, 365),
        ship=chooser.choice(SHIPS),
        count=chooser.randint(2, 480),
        count2=chooser.randint(2, 480),
        goods=goods[0],
        goods2=goods[1],
        place=places[0],
        place2=places[1],
        person=people[0],
        person2=people[1],
        vault=chooser.choice(VAULTS),
        code=chooser.randint(1000, 9999),
        station=chooser.choice(STATIONS),
        topic=chooser.choice(TOPICS),
        weather=chooser.choice(_WEATHER),
        direction=chooser.choice(_DIRECTIONS),
    )


def expand(turns: list[str], spec: HaystackSpec) -> list[str]:
    """The turns with {{haystack}} replaced by the generated text; ValueError when no turn has
    the placeholder (and none holds the text already: a stimulus expanded once stays as it is)."""
    text = generate(spec)
    if not any(PLACEHOLDER in turn for turn in turns):
        if any(text in turn for turn in turns):
            return turns
        raise ValueError(f"a haystack is given but no turn says where it goes: write {PLACEHOLDER}")
    return [turn.replace(PLACEHOLDER, text) for turn in turns]
