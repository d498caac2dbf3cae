"""Writes the generated parts of the built-in `hard` benchmark (src/benchyard/library/hard/):
competition-style math (each answer computed by the brute-force program the scenario carries as
`derive`), logic grids with a unique solution (found by a generated clue set, checked unique by
brute force), and long-context retrieval (haystacks regenerated from their seeds at load; only
the spec and its sha256 are written). Coding, tools and instructions are written by hand.

Run from the repository root: .venv/bin/python scripts/make-hard-benchmark.py
The output is deterministic: running it again rewrites the same files."""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent / "src" / "benchyard" / "library" / "hard"
SCENARIOS = ROOT / "scenarios"


class Literal(str):
    """A string written as a YAML block scalar."""


def _literal(dumper: yaml.SafeDumper, value: Literal) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")


yaml.SafeDumper.add_representer(Literal, _literal)


def block(text: str) -> Literal:
    return Literal(textwrap.dedent(text).strip("\n") + "\n")


def run_python(source: str, stimulus: dict[str, Any] | None = None) -> str:
    """Run a derive program the way `verify` does (stimulus.json in its cwd); its last line."""
    import tempfile

    with tempfile.TemporaryDirectory() as work:
        Path(work, "stimulus.json").write_text(json.dumps(stimulus or {"turns": [""]}))
        Path(work, "derive.py").write_text(source)
        done = subprocess.run(
            [sys.executable, "-I", "derive.py"],
            cwd=work,
            capture_output=True,
            text=True,
            check=True,
        )
    return [line for line in done.stdout.splitlines() if line.strip()][-1].strip()


def write(name: str, header: str, scenarios: list[dict[str, Any]]) -> None:
    text = yaml.safe_dump(scenarios, sort_keys=False, allow_unicode=True, width=100)
    comment = "".join(f"# {line}\n" if line else "#\n" for line in header.strip().splitlines())
    (SCENARIOS / name).write_text(comment + "\n" + text, encoding="utf-8")
    print(f"wrote {len(scenarios)} scenarios to {SCENARIOS / name}")


# ---- math -----------------------------------------------------------------------------------

MATH: list[tuple[str, str, str]] = [
    (
        "How many ordered pairs (a, b) of positive integers with a <= b satisfy 1/a + 1/b = 1/12?",
        "easy",
        """
        from fractions import Fraction
        count = 0
        for a in range(1, 200):
            for b in range(a, 20000):
                if Fraction(1, a) + Fraction(1, b) == Fraction(1, 12):
                    count += 1
        print(count)
        """,
    ),
    (
        "A positive integer n is automorphic when n squared ends in the digits of n (for example "
        "25 * 25 = 625). What is the sum of all automorphic numbers below 1000?",
        "medium",
        """
        print(sum(n for n in range(1, 1000) if str(n * n).endswith(str(n))))
        """,
    ),
    (
        "How many integers from 1 to 1,000,000 inclusive have digits that sum to 27?",
        "medium",
        """
        print(sum(1 for n in range(1, 1_000_001) if sum(map(int, str(n))) == 27))
        """,
    ),
    (
        "What is the remainder when 2^2025 + 3^2025 is divided by 1000?",
        "medium",
        """
        print((2 ** 2025 + 3 ** 2025) % 1000)
        """,
    ),
    (
        "How many points (x, y) with integer coordinates satisfy x^2 + y^2 <= 2025?",
        "medium",
        """
        print(sum(1 for x in range(-45, 46) for y in range(-45, 46) if x * x + y * y <= 2025))
        """,
    ),
    (
        "In how many ways can a 2 x 12 board be tiled completely with 1 x 2 dominoes (placed "
        "either way) and 2 x 2 squares?",
        "hard",
        """
        import sys
        sys.setrecursionlimit(10000)
        WIDTH = 12

        def count(filled):
            # the first empty cell, column by column, top row first
            for column in range(WIDTH):
                for row in range(2):
                    if (row, column) not in filled:
                        return place(filled, row, column)
            return 1

        def place(filled, row, column):
            total = 0
            shapes = [
                [(row, column), (row, column + 1)],          # a horizontal domino
                [(row, column), (row + 1, column)],          # a vertical domino
                [(row, column), (row, column + 1), (row + 1, column), (row + 1, column + 1)],
            ]
            for cells in shapes:
                if all(0 <= r < 2 and 0 <= c < WIDTH and (r, c) not in filled for r, c in cells):
                    total += count(filled | set(cells))
            return total

        print(count(frozenset()))
        """,
    ),
    (
        "What is the smallest positive integer that has exactly 30 positive divisors?",
        "medium",
        """
        n = 1
        while sum(1 for d in range(1, n + 1) if n % d == 0) != 30:
            n += 1
        print(n)
        """,
    ),
    (
        "How many permutations of 1, 2, ..., 8 have no number in its own position (no i in "
        "position i) and never have a number i immediately followed by i + 1?",
        "hard",
        """
        from itertools import permutations
        count = 0
        for p in permutations(range(1, 9)):
            if any(p[i] == i + 1 for i in range(8)):
                continue
            if any(p[i + 1] == p[i] + 1 for i in range(7)):
                continue
            count += 1
        print(count)
        """,
    ),
    (
        "How many subsets of {1, 2, ..., 15}, the empty set included, have a sum divisible by 7?",
        "medium",
        """
        from itertools import combinations
        numbers = range(1, 16)
        print(sum(1 for k in range(16) for s in combinations(numbers, k) if sum(s) % 7 == 0))
        """,
    ),
    (
        "How many integers from 1 to 2025 inclusive are neither a perfect square, nor a perfect "
        "cube, nor a perfect fifth power? (1 counts as all three.)",
        "medium",
        """
        powers = {b ** e for e in (2, 3, 5) for b in range(1, 100) if b ** e <= 2025}
        print(sum(1 for n in range(1, 2026) if n not in powers))
        """,
    ),
    (
        "With F(1) = F(2) = 1 and F(n) = F(n-1) + F(n-2), what are the last three digits of "
        "F(2025)? Reply with them as a number (leading zeros dropped).",
        "medium",
        """
        a, b = 1, 1
        for _ in range(2025 - 2):
            a, b = b, a + b
        print(b % 1000)
        """,
    ),
    (
        "How many triangles with integer side lengths and perimeter 60 are there, counting "
        "triangles with the same side lengths once (degenerate triangles do not count)?",
        "medium",
        """
        print(sum(1 for a in range(1, 61) for b in range(a, 61) for c in [60 - a - b]
                  if c >= b and a + b > c))
        """,
    ),
    (
        "From a standard 52-card deck (13 ranks in 4 suits), how many 4-card hands have four "
        "different suits and four different ranks?",
        "medium",
        """
        from itertools import combinations
        deck = [(rank, suit) for rank in range(13) for suit in range(4)]
        print(sum(1 for hand in combinations(deck, 4)
                  if len({r for r, _ in hand}) == 4 and len({s for _, s in hand}) == 4))
        """,
    ),
    (
        "What is the sum of all primes p below 10,000 such that p + 2 is also prime?",
        "medium",
        """
        limit = 10_002
        sieve = [True] * (limit + 1)
        sieve[0] = sieve[1] = False
        for i in range(2, int(limit ** 0.5) + 1):
            if sieve[i]:
                for j in range(i * i, limit + 1, i):
                    sieve[j] = False
        print(sum(p for p in range(2, 10_000) if sieve[p] and sieve[p + 2]))
        """,
    ),
    (
        "In how many ways can 100 cents be paid with coins of 1, 2, 5 and 10 cents (the order "
        "of the coins does not matter)?",
        "medium",
        """
        print(sum(1 for d in range(11) for c in range(21) for b in range(51)
                  if 10 * d + 5 * c + 2 * b <= 100))
        """,
    ),
    (
        "How many integers from 1 to 100,000 inclusive have a binary representation with no two "
        "adjacent 1s?",
        "medium",
        """
        print(sum(1 for n in range(1, 100_001) if "11" not in bin(n)))
        """,
    ),
    (
        "How many six-digit palindromes (such as 123321; the first digit is not 0) are "
        "divisible by 11?",
        "easy",
        """
        print(sum(1 for n in range(100_000, 1_000_000) if str(n) == str(n)[::-1] and n % 11 == 0))
        """,
    ),
    (
        "How many positive divisors of 10! (3,628,800) are perfect squares?",
        "medium",
        """
        import math
        n = math.factorial(10)
        print(sum(1 for d in range(1, n + 1) if n % d == 0 and math.isqrt(d) ** 2 == d))
        """,
    ),
]


def math_scenarios() -> list[dict[str, Any]]:
    scenarios = []
    for index, (question, difficulty, program) in enumerate(MATH, start=1):
        source = textwrap.dedent(program).strip() + "\n"
        answer = run_python(source)
        scenarios.append(
            {
                "id": f"math-{index:03d}",
                "category": "math",
                "difficulty": difficulty,
                "tags": ["competition", "integer-answer"],
                "stimulus": f"{question} Work it out, then give the integer alone on the last line.",
                "reference": answer,
                "checks": [{"type": "numeric", "value": int(answer)}],
                "derive": {"python": block(source), "timeout_sec": 120},
            }
        )
    return scenarios


# ---- logic grids ------------------------------------------------------------------------------

VALUES = {
    "name": ["Ada", "Bram", "Cleo", "Dev", "Esme"],
    "color": ["red", "green", "blue", "yellow", "white"],
    "pet": ["cat", "dog", "fish", "parrot", "hamster"],
    "drink": ["tea", "coffee", "milk", "juice", "water"],
}
DESCRIBE = {
    "name": "{}",
    "color": "the person in the {} house",
    "pet": "the owner of the {}",
    "drink": "the {} drinker",
}
SOLVER = """
import itertools, json
HOUSES = {houses}
VALUES = {values}
CLUES = {clues}

def position(assignment, attribute, value):
    return assignment[attribute].index(value) + 1

def holds(clue, a):
    kind = clue[0]
    if kind == "at":
        return position(a, clue[1], clue[2]) == clue[3]
    if kind == "not_at":
        return position(a, clue[1], clue[2]) != clue[3]
    x, y = position(a, clue[1], clue[2]), position(a, clue[3], clue[4])
    return {{"same": x == y, "differ": x != y, "left_of": x + 1 == y, "next_to": abs(x - y) == 1,
             "before": x < y}}[kind]

def attributes(clue):
    return {{clue[1]}} if clue[0] in ("at", "not_at") else {{clue[1], clue[3]}}

order = list(VALUES)
solutions = []
def search(depth, assignment):
    if depth == len(order):
        solutions.append(dict(assignment))
        return
    attribute = order[depth]
    known = set(order[: depth + 1])
    checks = [c for c in CLUES if attributes(c) <= known and attribute in attributes(c)]
    for perm in itertools.permutations(VALUES[attribute]):
        assignment[attribute] = perm
        if all(holds(c, assignment) for c in checks):
            search(depth + 1, assignment)
        del assignment[attribute]

search(0, {{}})
if len(solutions) != 1:
    print(f"NOT UNIQUE: {{len(solutions)}} solutions")
else:
    s = solutions[0]
    print(json.dumps({{str(h): {{k: s[k][h - 1] for k in order}} for h in range(1, HOUSES + 1)}},
                     sort_keys=True))
"""


def _describe(attribute: str, value: str) -> str:
    return DESCRIBE[attribute].format(value)


def clue_text(clue: tuple[Any, ...]) -> str:
    kind = clue[0]
    if kind in ("at", "not_at"):
        who = _describe(clue[1], clue[2])
        return (
            f"{who} lives in house {clue[3]}."
            if kind == "at"
            else (f"{who} does not live in house {clue[3]}.")
        )
    x, y = _describe(clue[1], clue[2]), _describe(clue[3], clue[4])
    return {
        "same": f"{x} and {y} are the same person.",
        "differ": f"{x} and {y} are different people.",
        "left_of": f"{x} lives directly to the left of {y}.",
        "next_to": f"{x} lives next to {y}.",
        "before": f"{x} lives somewhere to the left of {y}.",
    }[kind]


def _holds(clue: tuple[Any, ...], solution: dict[str, list[str]]) -> bool:
    def pos(attribute: str, value: str) -> int:
        return solution[attribute].index(value) + 1

    kind = clue[0]
    if kind == "at":
        return pos(clue[1], clue[2]) == clue[3]
    if kind == "not_at":
        return pos(clue[1], clue[2]) != clue[3]
    x, y = pos(clue[1], clue[2]), pos(clue[3], clue[4])
    return {
        "same": x == y,
        "differ": x != y,
        "left_of": x + 1 == y,
        "next_to": abs(x - y) == 1,
        "before": x < y,
    }[kind]


def _count(values: dict[str, list[str]], clues: list[tuple[Any, ...]]) -> int:
    """Solutions, counted in-process (the generator's own search; the scenario's derive program
    checks again)."""
    order = list(values)
    found = 0

    def attributes(clue: tuple[Any, ...]) -> set[str]:
        return {clue[1]} if clue[0] in ("at", "not_at") else {clue[1], clue[3]}

    def search(depth: int, assignment: dict[str, list[str]]) -> None:
        nonlocal found
        if found > 1:
            return
        if depth == len(order):
            found += 1
            return
        attribute = order[depth]
        known = set(order[: depth + 1])
        checks = [c for c in clues if attributes(c) <= known and attribute in attributes(c)]
        for perm in itertools.permutations(values[attribute]):
            assignment[attribute] = list(perm)
            if all(_holds(c, assignment) for c in checks):
                search(depth + 1, assignment)
            del assignment[attribute]

    search(0, {})
    return found


def make_grid(seed: int, houses: int, attributes: list[str]) -> tuple[dict[str, Any], list[Any]]:
    chooser = random.Random(seed)
    values = {a: VALUES[a][:houses] for a in attributes}
    solution = {a: chooser.sample(values[a], houses) for a in attributes}
    candidates: list[tuple[Any, ...]] = []
    for _ in range(4000):
        kind = chooser.choice(
            [
                "same",
                "same",
                "differ",
                "left_of",
                "next_to",
                "before",
                "at",
                "not_at",
                "next_to",
                "left_of",
            ]
        )
        a, b = chooser.sample(attributes, 2)
        va, vb = chooser.choice(values[a]), chooser.choice(values[b])
        clue: tuple[Any, ...]
        clue = (
            (kind, a, va, chooser.randint(1, houses))
            if kind in ("at", "not_at")
            else (kind, a, va, b, vb)
        )
        if _holds(clue, solution) and clue not in candidates:
            candidates.append(clue)
    clues: list[tuple[Any, ...]] = []
    for clue in candidates:
        clues.append(clue)
        if _count(values, clues) == 1:
            break
    for clue in list(clues):  # drop clues the others imply: fewer, harder clues
        trial = [c for c in clues if c != clue]
        if _count(values, trial) == 1:
            clues = trial
    return {a: solution[a] for a in attributes}, clues


def logic_scenarios() -> list[dict[str, Any]]:
    shapes = [
        (101, 4, ["name", "color", "pet"]),
        (102, 4, ["name", "color", "pet", "drink"]),
        (103, 5, ["name", "color", "pet"]),
        (104, 4, ["name", "color", "pet", "drink"]),
        (105, 5, ["name", "color", "drink"]),
        (106, 5, ["name", "pet", "drink"]),
        (107, 4, ["name", "color", "pet", "drink"]),
        (108, 5, ["name", "color", "pet"]),
    ]
    scenarios = []
    for index, (seed, houses, attributes) in enumerate(shapes, start=1):
        solution, clues = make_grid(seed, houses, attributes)
        values = {a: VALUES[a][:houses] for a in attributes}
        answer = {str(h): {a: solution[a][h - 1] for a in attributes} for h in range(1, houses + 1)}
        listing = "; ".join(f"{a}s: {', '.join(values[a])}" for a in attributes)
        numbered = "\n".join(
            f"{i}. {clue_text(c)[0].upper() + clue_text(c)[1:]}" for i, c in enumerate(clues, 1)
        )
        shape = "{" + ", ".join(f'"{a}": ...' for a in attributes) + "}"
        stimulus = (
            f"{houses} houses stand in a row, numbered 1 to {houses} from left to right. Each "
            f"house has one person, and every attribute value below belongs to exactly one "
            f"house ({listing}).\n\nClues:\n{numbered}\n\nWork out the whole arrangement. "
            f"Reply with JSON only, mapping each house number to its attributes: "
            f'{{"1": {shape}, ...}}.'
        )
        source = SOLVER.format(houses=houses, values=values, clues=clues).strip() + "\n"
        derived = run_python(source)
        assert json.loads(derived) == answer, (derived, answer)
        scenarios.append(
            {
                "id": f"logic-{index:03d}",
                "category": "logic",
                "difficulty": "hard",
                "tags": ["logic-grid", f"{houses}x{len(attributes)}", "json"],
                "description": f"A {houses}-house grid puzzle with {len(clues)} clues and one solution.",
                "stimulus": block(stimulus),
                "reference": json.dumps(answer, sort_keys=True),
                "checks": [
                    {"type": "json_valid", "allow_fence": True},
                    {
                        "type": "output_match",
                        "path": "$",
                        "op": "eq",
                        "value": answer,
                        "allow_fence": True,
                    },
                ],
                "derive": {"python": block(source), "timeout_sec": 120},
            }
        )
    return scenarios


# ---- long context --------------------------------------------------------------------------

FIND_ONE = """
import json, re
text = "\\n".join(json.load(open("stimulus.json"))["turns"])
found = re.findall(r"{pattern}", text)
assert len(found) == 1, f"{{len(found)}} matches of the needle"
print(found[0])
"""
FIND_ALL_SUM = """
import json, re
text = "\\n".join(json.load(open("stimulus.json"))["turns"])
found = [int(n) for n in re.findall(r"{pattern}", text)]
assert len(found) == {count}, f"{{len(found)}} matches"
print(sum(found))
"""
COUNT = """
import json, re
text = "\\n".join(json.load(open("stimulus.json"))["turns"])
print(len(re.findall(r"{pattern}", text)))
"""
LAST = """
import json, re
text = "\\n".join(json.load(open("stimulus.json"))["turns"])
found = re.findall(r"{pattern}", text)
assert len(found) == {count}, f"{{len(found)}} matches"
print(found[-1])
"""
HOPS = """
import json, re
text = "\\n".join(json.load(open("stimulus.json"))["turns"])
badges = re.findall(r"Tamsin Orrow was assigned badge number (\\d+)\\.", text)
assert len(badges) == 1
doors = re.findall(r"Badge " + badges[0] + r" opens door ([A-Z]-\\d+)\\.", text)
assert len(doors) == 1
print(doors[0])
"""

LONG: list[dict[str, Any]] = [
    {
        "question": "What is the access code for vault KESTREL? Reply with the number only.",
        "seed": 4101,
        "words": 9500,
        "needles": [(0.37, "The access code for vault KESTREL is 4417.")],
        "program": FIND_ONE.format(pattern=r"vault KESTREL is (\d+)\."),
        "numeric": True,
        "tags": ["single-needle"],
    },
    {
        "question": "On which day did the ship Merrow dock at Vey Harbour? Reply with the day number only.",
        "seed": 4102,
        "words": 15500,
        "needles": [(0.91, "The ship Merrow docked at Vey Harbour on day 288.")],
        "program": FIND_ONE.format(pattern=r"The ship Merrow docked at Vey Harbour on day (\d+)\."),
        "numeric": True,
        "tags": ["single-needle", "deep"],
    },
    {
        "question": "How many crates did Orla Brandt move in total, over all her entries in the log? "
        "Reply with the number only.",
        "seed": 4103,
        "words": 12500,
        "needles": [
            (0.12, "Orla Brandt moved 37 crates of saffron from Vey Harbour to Carrow."),
            (0.55, "Orla Brandt moved 112 crates of indigo from Kelso to Vey Harbour."),
            (0.83, "Orla Brandt moved 9 crates of saffron from Carrow to Islay."),
        ],
        "program": FIND_ALL_SUM.format(pattern=r"Orla Brandt moved (\d+) crates", count=3),
        "numeric": True,
        "tags": ["multi-needle", "aggregation"],
    },
    {
        "question": "The quarterly review's room was changed several times. In which room is it "
        "finally held? Reply with the room's code only (such as R-101).",
        "seed": 4104,
        "words": 13500,
        "needles": [
            (0.2, "Notice: the quarterly review will be held in room R-214."),
            (0.47, "Notice: the quarterly review moves to room R-031."),
            (0.78, "Notice: the quarterly review moves to room R-377, its final room."),
        ],
        "program": LAST.format(
            pattern=r"quarterly review (?:will be held in|moves to) room (R-\d+)", count=3
        ),
        "numeric": False,
        "tags": ["multi-needle", "latest-value"],
    },
    {
        "question": "How many times does the log record the barge Sallow Quince docking? Reply "
        "with the number only.",
        "seed": 4105,
        "words": 14500,
        "needles": [
            (0.07, "The barge Sallow Quince docked at Vey Harbour on day 12."),
            (0.33, "The barge Sallow Quince docked at Kelso on day 97."),
            (0.64, "The barge Sallow Quince docked at Vey Harbour on day 201."),
            (0.95, "The barge Sallow Quince docked at Islay on day 340."),
        ],
        "program": COUNT.format(pattern=r"The barge Sallow Quince docked at"),
        "numeric": True,
        "tags": ["multi-needle", "counting"],
    },
    {
        "question": "Which door can Tamsin Orrow open with her badge? Reply with the door's code "
        "only (such as D-1).",
        "seed": 4106,
        "words": 16500,
        "needles": [
            (0.28, "Tamsin Orrow was assigned badge number 7731."),
            (0.71, "Badge 7731 opens door Q-19."),
            (0.5, "Badge 7713 opens door Q-91."),
        ],
        "program": HOPS,
        "numeric": False,
        "tags": ["multi-hop"],
    },
    {
        "question": "What is the access code for vault KESTRAL (spelled exactly so)? Reply with "
        "the number only.",
        "seed": 4107,
        "words": 16800,
        "needles": [
            (0.3, "The access code for vault KESTREL is 5120."),
            (0.6, "The access code for vault KESTRAL is 8093."),
            (0.8, "The access code for vault KESTERAL is 6644."),
        ],
        "program": FIND_ONE.format(pattern=r"vault KESTRAL is (\d+)\."),
        "numeric": True,
        "tags": ["near-miss", "distractors"],
    },
    {
        "question": "Station Quarry reported rain on three days. What was its total rainfall over "
        "those days, in millimetres? Reply with the number only.",
        "seed": 4108,
        "words": 17200,
        "needles": [
            (0.15, "Quarry station reported 41 millimetres of rain on day 73."),
            (0.5, "Quarry station reported 17 millimetres of rain on day 150."),
            (0.88, "Quarry station reported 66 millimetres of rain on day 301."),
        ],
        "program": FIND_ALL_SUM.format(
            pattern=r"Quarry station reported (\d+) millimetres", count=3
        ),
        "numeric": True,
        "tags": ["multi-needle", "aggregation", "deep"],
    },
]


def long_scenarios() -> list[dict[str, Any]]:
    sys.path.insert(0, str(ROOT.parent.parent.parent))
    from benchyard.spec.haystack import HaystackSpec, Needle, generate, text_sha256

    scenarios = []
    for index, case in enumerate(LONG, start=1):
        spec = HaystackSpec(
            seed=case["seed"],
            words=case["words"],
            needles=[Needle(at=at, text=text) for at, text in case["needles"]],
        )
        message = (
            "Below is a log of a trading company's year, one record per line. Read it, then "
            "answer the question after it.\n\n{{haystack}}\n\n" + case["question"]
        )
        text = message.replace("{{haystack}}", generate(spec))
        source = textwrap.dedent(case["program"]).strip() + "\n"
        answer = run_python(source, {"turns": [text], "system": None})
        tokens = len(text) // 4
        assert 12_000 <= tokens <= 24_000, (case["seed"], tokens)
        check: dict[str, Any] = (
            {"type": "numeric", "value": int(answer)}
            if case["numeric"]
            else {"type": "regex", "pattern": rf"\W*{answer}\W*", "full_match": True}
        )
        scenarios.append(
            {
                "id": f"long-{index:03d}",
                "category": "long_context",
                "difficulty": "hard",
                "tags": ["retrieval", *case["tags"], f"~{tokens // 1000}k-tokens"],
                "description": f"About {tokens:,} tokens (characters / 4) of generated log.",
                "stimulus": {
                    "message": block(message),
                    "haystack": {
                        "seed": spec.seed,
                        "words": spec.words,
                        "needles": [{"at": n.at, "text": n.text} for n in spec.needles],
                        "sha256": text_sha256(spec),
                    },
                },
                "reference": answer,
                "checks": [check],
                "derive": {"python": block(source)},
                "limits": {"timeout_sec": 300},
            }
        )
    return scenarios


def main() -> None:
    """All three files, or only those named: math, logic, long."""
    wanted = set(sys.argv[1:]) or {"math", "logic", "long"}
    SCENARIOS.mkdir(parents=True, exist_ok=True)
    if "math" in wanted:
        _write_math()
    if "logic" in wanted:
        _write_logic()
    if "long" in wanted:
        _write_long()


def _write_math() -> None:
    write(
        "math.yaml",
        "Competition-style problems with integer answers. Each answer was computed by the\n"
        "brute-force program under `derive`, which `benchyard verify hard` runs again in the\n"
        "sandbox. Generated by scripts/make-hard-benchmark.py.",
        math_scenarios(),
    )


def _write_logic() -> None:
    write(
        "logic.yaml",
        "Logic grids with exactly one solution: a random arrangement, random true clues added\n"
        "until one arrangement fits, then every clue the others imply dropped. `derive` solves\n"
        "each by brute force and checks that the solution is unique. Generated by\n"
        "scripts/make-hard-benchmark.py.",
        logic_scenarios(),
    )


def _write_long() -> None:
    write(
        "long_context.yaml",
        "Long-context retrieval: 12k to 24k tokens of generated log (regenerated from each\n"
        "`haystack` seed at load; its sha256 is checked), with facts to find, add up, count or\n"
        "follow. `derive` finds each answer in the generated text. Generated by\n"
        "scripts/make-hard-benchmark.py.",
        long_scenarios(),
    )


if __name__ == "__main__":
    main()
