"""Reading an agent's root-cause answer: JSON naming Kubernetes entities.

The documented form is

    {"root_causes": [{"kind": "ConfigMap", "name": "flagd-config", "namespace": "otel-demo"}],
     "confidence": 0.8, "explanation": "..."}

and, leniently, what agents and ITBench's own outputs also write: a bare list of entities;
`entities` instead of `root_causes` (entries with `root_cause: false` are skipped); `root_cause`
holding one entity; an entity as a Kubernetes object (`kind` and `metadata.name`/`namespace`),
or as text `Kind/name` or `Kind/namespace/name`. A ```json block in a longer answer is read too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchyard.checks.answer_json import NotJson, is_number, parse_answer_json
from benchyard.sre.entities import Entity

LIST_KEYS = ("root_causes", "rootCauses", "root_cause_entities", "entities", "root_cause")


class AnswerShapeError(ValueError):
    """The answer is JSON but names no entities in a form this reader knows."""


@dataclass(frozen=True)
class RootCauseAnswer:
    entities: list[Entity]
    confidence: float | None = None
    skipped: list[str] = field(default_factory=list)  # entries that could not be read, and why


def parse_root_causes(answer: str) -> RootCauseAnswer:
    """The entities an answer names; raises NotJson or AnswerShapeError when it names none in a
    readable form (an empty list is a valid answer: no root cause)."""
    value = parse_answer_json(answer)
    confidence = None
    items: Any
    if isinstance(value, list):
        items = value
    elif isinstance(value, dict):
        confidence = _confidence(value.get("confidence"))
        key = next((k for k in LIST_KEYS if k in value), None)
        if key is None:
            if "kind" in value and ("name" in value or "metadata" in value):
                items = [value]
            else:
                raise AnswerShapeError(
                    f"expected a 'root_causes' list of {{kind, name, namespace}} entities, "
                    f"found keys {', '.join(map(repr, list(value)[:6])) or 'none'}"
                )
        else:
            items = value[key]
            if isinstance(items, dict | str):
                items = [items]
    else:
        raise AnswerShapeError("expected a JSON object with 'root_causes' (or a list of entities)")
    if items is None:
        items = []
    if not isinstance(items, list):
        raise AnswerShapeError("'root_causes' must be a list")
    entities: list[Entity] = []
    skipped: list[str] = []
    item_confidences = []
    for index, item in enumerate(items):
        try:
            entity, item_confidence = _entity(item)
        except AnswerShapeError as error:
            skipped.append(f"[{index}]: {error}")
            continue
        if entity is not None:
            entities.append(entity)
            if item_confidence is not None:
                item_confidences.append(item_confidence)
    if items and not entities and skipped:
        raise AnswerShapeError(f"no readable entity: {'; '.join(skipped[:3])}")
    if confidence is None and item_confidences:
        confidence = max(item_confidences)
    return RootCauseAnswer(entities, confidence, skipped)


def _entity(item: Any) -> tuple[Entity | None, float | None]:
    if isinstance(item, str):
        parts = [part.strip() for part in item.strip().split("/") if part.strip()]
        if len(parts) == 2:
            return Entity.of(parts[0], parts[1]), None
        if len(parts) == 3:
            return Entity.of(parts[0], parts[2], parts[1]), None
        raise AnswerShapeError(f"{item[:60]!r} is not Kind/name or Kind/namespace/name")
    if not isinstance(item, dict):
        raise AnswerShapeError("an entity must be an object or 'Kind/namespace/name'")
    if item.get("root_cause") is False:
        return None, None
    raw_metadata = item.get("metadata")
    metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
    kind = item.get("kind")
    name = item.get("name", metadata.get("name"))
    namespace = item.get("namespace", metadata.get("namespace"))
    if not isinstance(kind, str) or not kind.strip():
        raise AnswerShapeError("missing 'kind'")
    if not isinstance(name, str) or not name.strip():
        raise AnswerShapeError("missing 'name'")
    if namespace is not None and not isinstance(namespace, str):
        raise AnswerShapeError("'namespace' must be text")
    return Entity.of(kind, name, namespace), _confidence(item.get("confidence"))


def _confidence(value: Any) -> float | None:
    if not is_number(value):
        return None
    number = float(value)
    if number > 1 and number <= 100:
        number /= 100  # a percentage
    return min(1.0, max(0.0, number))


__all__ = ["AnswerShapeError", "NotJson", "RootCauseAnswer", "parse_root_causes"]
