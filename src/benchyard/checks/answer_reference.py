"""The scenario's reference for the answer a check grades (the graded turn's, in a conversation)."""

from __future__ import annotations

from benchyard.checks.base import Evidence


def graded_turn(evidence: Evidence) -> int:
    """The index of the graded answer among the attempt's answers (the last when it repeats)."""
    for index in range(len(evidence.answers) - 1, -1, -1):
        if evidence.answers[index] == evidence.answer:
            return index
    return max(len(evidence.answers) - 1, 0)


def graded_reference(evidence: Evidence) -> str | None:
    """The scenario's reference answer for the graded turn; None when the scenario has none (a
    conversation whose reference gives only the last answer falls back to that one)."""
    answers = evidence.scenario.reference_answers()
    if not answers:
        return None
    turn = graded_turn(evidence)
    return answers[turn] if turn < len(answers) and answers[turn] else answers[-1]
