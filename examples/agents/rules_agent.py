#!/usr/bin/env python3
"""A small rule-based agent for benchyard's command-agent protocol (see docs/agent-protocol.md).

It has no model behind it: it applies a handful of general rules to the current user turn and
answers when one fits, otherwise it says it does not know. It exists to show the protocol and to
give a baseline that passes the easy scenarios of the starter benchmark and fails most others.

Rules, tried in order:
  recall      "What word did I ask you to remember?" -> the value from an earlier
              "Remember the code word X" in the conversation
  one word    "Reply with only the word X" -> X
  repeat      "Repeat the following sentence exactly[, in upper/lowercase]: TEXT" -> TEXT
  json        a JSON literal in the question: filled in when its values are placeholders ("...")
              and its keys name something we can find (email, url, date, phone), else echoed
  json keys   'key "k" set to VALUE' (one or more) -> {"k": VALUE, ...}
  summarise   "Summarise ... in N sentence(s)" -> the first N sentences of the passage (the
              file named in the question, or the text after the first blank line)
  arithmetic  an expression such as "(125 - 47) * 3" -> its value
Only the Python standard library is used.

Try it:  benchyard run starter --agent-cmd 'python3 examples/agents/rules_agent.py' \
             --filter difficulty:easy
"""

from __future__ import annotations

import ast
import json
import operator
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

PLACEHOLDERS = {"...", "", "?", None}
WORD_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
EXTRACTORS = {
    "email": re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"),
    "url": re.compile(r"https?://[^\s\"'<>)]+[^\s\"'<>).,;]"),
    "date": re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),
    "phone": re.compile(r"\+?\d[\d ()-]{6,}\d"),
}
# The multiplication sign, the division sign and the minus sign, as plain ASCII operators.
UNICODE_OPERATORS = str.maketrans({"\u00d7": "*", "\u00f7": "/", "\u2212": "-"})
OPERATORS: dict[type[ast.AST], Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


# --- the rules: each returns an answer, or None when it does not apply --------------------------


def recall(question: str, history: list[dict[str, str]]) -> str | None:
    """Answer "what ... did I ask you to remember?" from an earlier "remember the ... X"."""
    if not re.search(r"\bwhat\b.*\bremember\b", question, re.I):
        return None
    remembered = None
    for message in history:
        if message.get("role") == "user":
            pattern = r"\b[Rr]emember the (?:[a-z]+ ){0,2}([A-Z0-9][\w-]*)"
            for match in re.finditer(pattern, message["content"]):
                remembered = match.group(1)
    return remembered


def one_word(question: str) -> str | None:
    match = re.search(r"\breply with only the word [\"']?([\w-]+)", question, re.I)
    return match.group(1) if match else None


def repeat(question: str) -> str | None:
    match = re.search(
        r"\brepeat (?:the following|this)(?: \w+)?(?: exactly)?(?:,? in (upper|lower) ?case)?:\s*(.+)",
        question,
        re.I | re.S,
    )
    if not match:
        return None
    text = match.group(2).strip()
    case = (match.group(1) or "").lower()
    return text.upper() if case == "upper" else text.lower() if case == "lower" else text


def json_literal(question: str) -> str | None:
    """Echo a JSON object given in the question, or fill in a template of placeholders."""
    if "json" not in question.lower():
        return None
    decoder = json.JSONDecoder()
    for start in (i for i, char in enumerate(question) if char == "{"):
        try:
            value, end = decoder.raw_decode(question, start)
        except json.JSONDecodeError:
            continue
        if not isinstance(value, dict) or not value:
            continue
        if all(v in PLACEHOLDERS for v in value.values()):
            rest = question[:start] + question[end:]
            if not all(key in EXTRACTORS for key in value):
                return None
            filled = {}
            for key in value:
                found = EXTRACTORS[key].search(rest)
                filled[key] = found.group(0) if found else None
            return json.dumps(filled)
        return json.dumps(value)
    return None


def json_keys(question: str) -> str | None:
    value = r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null'
    pairs = re.findall(rf'\bkey "([^"]+)" (?:set to|with the value|equal to) ({value})', question)
    if not pairs or "json" not in question.lower():
        return None
    return json.dumps({key: json.loads(raw) for key, raw in pairs})


def summarise(question: str, workdir: Path) -> str | None:
    match = re.search(r"\bsummari[sz]e\b", question, re.I)
    if not match:
        return None
    passage = None
    for name in re.findall(r"[\w.-]+\.(?:txt|md)\b", question):
        if (workdir / name).is_file():
            passage = (workdir / name).read_text(encoding="utf-8", errors="replace")
            break
    if passage is None:
        parts = re.split(r"\n\s*\n", question, maxsplit=1)
        passage = parts[1] if len(parts) == 2 else question[match.end() :]
    count = re.search(r"\bin (\d+|one|two|three|four|five) sentences?\b", question, re.I)
    wanted = 1
    if count:
        word = count.group(1).lower()
        wanted = int(word) if word.isdigit() else WORD_NUMBERS[word]
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(passage.split()))
    return " ".join(sentences[:wanted]).strip() or None


def arithmetic(question: str) -> str | None:
    """Evaluate the longest arithmetic expression (digits, + - * / and parentheses)."""
    text = question.translate(UNICODE_OPERATORS)
    candidates = re.findall(r"[\d(][\d\s()+\-*/.]*[\d)]", text)
    candidates = [c for c in candidates if re.search(r"[\d)]\s*[-+*/]\s*[\d(]", c)]
    for candidate in sorted(candidates, key=len, reverse=True):
        try:
            value = _evaluate(ast.parse(candidate.strip(), mode="eval").body)
        except (SyntaxError, ValueError, ZeroDivisionError):
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return str(value)
    return None


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](_evaluate(node.operand))
    raise ValueError("not plain arithmetic")


def respond(question: str, history: list[dict[str, str]], workdir: Path) -> tuple[str, str]:
    """The answer and the name of the rule that produced it."""
    rules: tuple[tuple[str, Callable[[], str | None]], ...] = (
        ("recall", lambda: recall(question, history)),
        ("one word", lambda: one_word(question)),
        ("repeat", lambda: repeat(question)),
        ("json", lambda: json_literal(question)),
        ("json keys", lambda: json_keys(question)),
        ("summarise", lambda: summarise(question, workdir)),
        ("arithmetic", lambda: arithmetic(question)),
    )
    for name, rule in rules:
        answer = rule()
        if answer is not None:
            return answer, name
    return "I don't know.", "none"


# --- the protocol -------------------------------------------------------------------------------


def log_event(kind: str, content: str, **extra: Any) -> None:
    """Append one trajectory event, if benchyard gave us a trajectory file."""
    path = os.environ.get("BENCHYARD_TRAJECTORY_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as trajectory:
            trajectory.write(json.dumps({"kind": kind, "content": content, **extra}) + "\n")


def main() -> int:
    question = Path(os.environ["BENCHYARD_INSTRUCTION_FILE"]).read_text(encoding="utf-8")
    messages_file = os.environ.get("BENCHYARD_MESSAGES_FILE")
    history = json.loads(Path(messages_file).read_text(encoding="utf-8")) if messages_file else []
    workdir = Path(os.environ.get("BENCHYARD_WORKDIR", "."))

    answer, rule = respond(question, history, workdir)
    log_event("log", f"rule: {rule}", role="agent")
    log_event("message", answer, role="assistant", tokens_in=0, tokens_out=0, cost_usd=0.0)

    output = os.environ.get("BENCHYARD_OUTPUT_FILE")
    if output:
        Path(output).write_text(answer, encoding="utf-8")
    else:
        print(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
