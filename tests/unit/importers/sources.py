"""Small sources in each published format, written by the tests (never the real datasets)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any


def write_jsonl(path: Path, records: list[dict[str, Any]], *, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(record) + "\n" for record in records)
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def direct_benchmark(root: Path, format_name: str, source: Path, **options: Any) -> Path:
    """A benchmark.yaml that reads `source` in `format_name` (no imported copy)."""
    root.mkdir(parents=True, exist_ok=True)
    text = f"name: {format_name}-direct\nversion: '1'\nformat: {format_name}\nsource: {source}\n"
    if options:
        text += f"options: {json.dumps(options)}\n"
    (root / "benchmark.yaml").write_text(text, encoding="utf-8")
    return root


HUMANEVAL = [
    {
        # A completion that relies on a helper of the prompt, and a test that calls it too.
        "task_id": "Toy/0",
        "prompt": 'def double(x):\n    return 2 * x\n\n\ndef quadruple(x):\n    """Four times x."""\n',
        "canonical_solution": "    return double(double(x))\n",
        "test": "def check(candidate):\n    assert candidate(3) == 12\n    assert double(5) == 10\n",
        "entry_point": "quadruple",
    },
    {
        # An entry point named like the module the solution is written to.
        "task_id": "Toy/1",
        "prompt": 'def solution(items):\n    """The sorted items, as a list."""\n',
        "canonical_solution": "    return sorted(items)\n",
        "test": "def check(candidate):\n    assert candidate([3, 1, 2]) == [1, 2, 3]\n",
        "entry_point": "solution",
    },
    {
        # An entry point named like a standard-library module.
        "task_id": "Toy/2",
        "prompt": 'import math\n\n\ndef string(n):\n    """n as text, with math in scope."""\n',
        "canonical_solution": "    return str(n) if math.isfinite(n) else 'inf'\n",
        "test": "def check(candidate):\n    assert candidate(7) == '7'\n",
        "entry_point": "string",
    },
]

MBPP = [
    {
        "task_id": 11,
        "text": "Write a function to count the nodes of a linked list.",
        "code": (
            "def count_nodes(head):\n    n = 0\n    while head is not None:\n"
            "        n += 1\n        head = head.next\n    return n\n"
        ),
        "test_setup_code": (
            "class Node:\n    def __init__(self, value, next=None):\n"
            "        self.value = value\n        self.next = next\n"
        ),
        "test_list": [
            "assert count_nodes(Node(1, Node(2, Node(3)))) == 3",
            "assert count_nodes(None) == 0",
            "assert count_nodes(Node(9)) == 1",
        ],
        "challenge_test_list": [],
    },
    {
        "task_id": 12,
        "text": "Write a function for the volume of a sphere.",
        "code": "import math\ndef volume_sphere(r):\n    return 4 / 3 * math.pi * r ** 3\n",
        "test_imports": ["import math"],
        "test_list": [
            "assert math.isclose(volume_sphere(10), 4188.790204786391, rel_tol=0.001)",
            "assert math.isclose(volume_sphere(1), 4.1887902047863905, rel_tol=0.001)",
        ],
    },
]

GSM8K = [
    {
        "question": "A farm has 1,200 hens and buys 34 more. How many hens?",
        "answer": "1200 + 34 = <<1200+34=1234>>1234\n#### 1,234",
    },
    {
        "question": "Tom has 3 apples and eats 1. How many are left?",
        "answer": "3 - 1 = <<3-1=2>>2\n#### 2",
    },
]

IFEVAL = [
    {
        "key": 1,
        "prompt": "Describe a cat without commas.",
        "instruction_id_list": ["punctuation:no_comma"],
        "kwargs": [{}],
    },
    {
        "key": 2,
        "prompt": "Write two sentences, in lowercase, and end with 'any other questions?'.",
        "instruction_id_list": [
            "change_case:english_lowercase",
            "startend:end_checker",
            "length_constraints:number_sentences",
        ],
        "kwargs": [
            {},
            {"end_phrase": "Any other questions?"},
            {"num_sentences": 3, "relation": "less than"},
        ],
    },
]

BFCL_FUNCTIONS = [
    {
        "name": "geo.distance",
        "description": "Distance between two cities.",
        "parameters": {
            "type": "dict",
            "properties": {
                "origin": {"type": "string", "description": "From."},
                "destination": {"type": "string", "description": "To."},
                "unit": {"type": "string", "description": "km or mi; default km."},
                "precision": {"type": "float", "description": "Rounding."},
            },
            "required": ["origin", "destination"],
        },
    }
]
BFCL_QUESTIONS = {
    "simple_python": [
        {
            "id": "simple_python_0",
            "question": [[{"role": "user", "content": "How far is Paris from Lyon?"}]],
            "function": BFCL_FUNCTIONS,
        }
    ],
    "parallel": [
        {
            "id": "parallel_0",
            "question": [[{"role": "user", "content": "Paris-Lyon and Oslo-Bergen?"}]],
            "function": BFCL_FUNCTIONS,
        }
    ],
    "irrelevance": [
        {
            "id": "irrelevance_0",
            "question": [[{"role": "user", "content": "Bake me a cake."}]],
            "function": BFCL_FUNCTIONS,
        }
    ],
}
BFCL_ANSWERS = {
    "simple_python": [
        {
            "id": "simple_python_0",
            "ground_truth": [
                {
                    "geo.distance": {
                        "origin": ["Paris"],
                        "destination": ["Lyon"],
                        "unit": ["km", ""],
                        "precision": ["", 1.0],
                    }
                }
            ],
        }
    ],
    "parallel": [
        {
            "id": "parallel_0",
            "ground_truth": [
                {
                    "geo.distance": {
                        "origin": ["Paris"],
                        "destination": ["Lyon"],
                        "unit": ["", "km"],
                    }
                },
                {
                    "geo.distance": {
                        "origin": ["Oslo"],
                        "destination": ["Bergen"],
                        "unit": ["", "km"],
                    }
                },
            ],
        }
    ],
}


def write_bfcl(root: Path) -> Path:
    for category, rows in BFCL_QUESTIONS.items():
        write_jsonl(root / f"BFCL_v4_{category}.json", rows)
    for category, rows in BFCL_ANSWERS.items():
        write_jsonl(root / "possible_answer" / f"BFCL_v4_{category}.json", rows)
    return root
