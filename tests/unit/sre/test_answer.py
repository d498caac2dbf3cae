"""Reading root-cause answers in the shapes agents write."""

from __future__ import annotations

import pytest

from benchyard.sre.answer import AnswerShapeError, NotJson, parse_root_causes
from benchyard.sre.entities import Entity

CART = Entity("Deployment", "cart", "otel-demo")


@pytest.mark.parametrize(
    "answer",
    [
        '{"root_causes": [{"kind": "Deployment", "name": "cart", "namespace": "otel-demo"}]}',
        '[{"kind": "deployment", "name": "cart", "namespace": "otel-demo"}]',
        '{"entities": [{"kind": "Deployment", "root_cause": true,'
        ' "metadata": {"name": "cart", "namespace": "otel-demo"}},'
        ' {"kind": "Service", "name": "frontend", "namespace": "otel-demo", "root_cause": false}]}',
        '{"root_cause": "Deployment/otel-demo/cart"}',
        'I looked at everything.\n```json\n{"root_causes": ["deploy/otel-demo/cart"]}\n```',
    ],
)
def test_shapes(answer: str) -> None:
    assert parse_root_causes(answer).entities == [CART]


def test_confidence_top_level_else_the_highest_entity() -> None:
    assert parse_root_causes('{"root_causes": [], "confidence": 0.3}').confidence == 0.3
    two = (
        '{"root_causes": [{"kind": "Pod", "name": "a", "confidence": 0.2},'
        ' {"kind": "Pod", "name": "b", "confidence": 70}]}'
    )
    assert parse_root_causes(two).confidence == 0.7


def test_an_empty_list_is_an_answer() -> None:
    assert parse_root_causes('{"root_causes": []}').entities == []


def test_unreadable_entries_are_skipped_and_said() -> None:
    parsed = parse_root_causes('{"root_causes": [{"kind": "Pod"}, "Deployment/otel-demo/cart"]}')
    assert parsed.entities == [CART]
    assert parsed.skipped == ["[0]: missing 'name'"]


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ("the cart deployment", NotJson),
        ('{"cause": "cart"}', AnswerShapeError),
        ('{"root_causes": [{"name": "cart"}]}', AnswerShapeError),
        ('{"root_causes": "cart"}', AnswerShapeError),
        ("42", AnswerShapeError),
    ],
)
def test_unreadable_answers(answer: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        parse_root_causes(answer)
