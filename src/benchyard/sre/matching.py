"""Matching predicted root causes against ground truth: exact entities, ITBench v1 groups (a kind,
a namespace and name filters) and their aliases; precision, recall, F1 and false positives.

The ground truth holds **slots**, one per root cause to find: each of its `entities` (ITBench's
v2 `spec.entities`), or, when it lists none, each group marked `root_cause` (ITBench v1). A slot
accepts its entity exactly, and every group attached to it: a root-cause group, and the groups
that share an alias set with it, are attached to the slots whose entity they match, or to every
slot when they match none (they describe the same fault in other words, as v1 files often do).

- A predicted entity is **correct** when some slot accepts it, else it is a **false positive**.
- **precision** = correct predictions / predictions (duplicates counted once);
  **recall** = slots found / slots, where each prediction finds at most one slot (a maximum
  matching, so one pod cannot stand for two root causes); **F1** their harmonic mean.
- No slots means the incident has no root cause (a false alarm): naming nothing is right
  (precision and recall 1) and every prediction is a false positive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchyard.sre.entities import CLUSTER_SCOPED, Entity, kind_key


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EntitySpec(_Model):
    """A ground-truth entity as written in a check: kind, name and namespace."""

    kind: str = Field(min_length=1)
    name: str = Field(min_length=1)
    namespace: str | None = None

    def entity(self) -> Entity:
        return Entity.of(self.kind, self.name, self.namespace)


class GroupSpec(_Model):
    """An ITBench v1 group: objects of `kind` in `namespace` whose whole name is `name` or
    matches one of the `filter` regular expressions (case ignored)."""

    id: str = Field(min_length=1)
    kind: str = Field(min_length=1)
    namespace: str | None = None
    name: str | None = None
    filter: list[str] = Field(default_factory=list)
    root_cause: bool = False

    @field_validator("filter")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(
                    f"{pattern!r} is not a valid regular expression: {error}"
                ) from None
        return patterns

    @cached_property
    def _patterns(self) -> list[re.Pattern[str]]:
        return [re.compile(pattern, re.IGNORECASE) for pattern in self.filter]

    def accepts(self, entity: Entity) -> bool:
        if kind_key(self.kind) != kind_key(entity.kind):
            return False
        scoped = self.namespace and kind_key(self.kind) not in CLUSTER_SCOPED
        if scoped and (entity.namespace or "").lower() != (self.namespace or "").lower():
            return False
        if self.name is not None and self.name.lower() == entity.name.lower():
            return True
        return any(pattern.fullmatch(entity.name) for pattern in self._patterns)

    def __str__(self) -> str:
        shown = self.name or "|".join(self.filter) or "(nothing)"
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{where}{shown} (group {self.id})"


class RootCauseTruth(_Model):
    """The ground truth of one incident."""

    entities: list[EntitySpec] = Field(
        default_factory=list, description="The root-cause objects; empty for a false alarm."
    )
    groups: list[GroupSpec] = Field(
        default_factory=list,
        description="ITBench v1 groups (only root-cause ones and aliases count).",
    )
    aliases: list[list[str]] = Field(
        default_factory=list, description="Sets of group ids that name the same thing."
    )

    @model_validator(mode="after")
    def _aliases_known(self) -> RootCauseTruth:
        known = {group.id for group in self.groups}
        for index, members in enumerate(self.aliases):
            unknown = [member for member in members if member not in known]
            if unknown:
                raise ValueError(
                    f"aliases[{index}]: {', '.join(map(repr, unknown))} not among the group ids"
                )
        return self

    def slots(self) -> list[Slot]:
        return build_slots(self)


@dataclass
class Slot:
    """One root cause to find: its entity (None for a v1 group slot) and the groups it accepts."""

    label: str
    entity: Entity | None
    groups: list[GroupSpec] = field(default_factory=list)

    def accepts(self, predicted: Entity) -> str | None:
        """How this slot accepts `predicted` ("exact", "group ID", "alias ID"), or None."""
        if self.entity is not None and self.entity.same_as(predicted):
            return "exact"
        for group in self.groups:
            if group.accepts(predicted):
                return f"{'group' if group.root_cause else 'alias'} {group.id}"
        return None


def build_slots(truth: RootCauseTruth) -> list[Slot]:
    unique: list[Entity] = []
    for entity in (spec.entity() for spec in truth.entities):
        if not any(entity.same_as(seen) for seen in unique):
            unique.append(entity)
    by_id = {group.id: group for group in truth.groups}
    root_groups = [group for group in truth.groups if group.root_cause]
    if not unique:
        return [
            Slot(str(group), None, _family(group, truth.aliases, by_id)) for group in root_groups
        ]
    slots = [Slot(str(entity), entity) for entity in unique]
    for group in root_groups:
        family = _family(group, truth.aliases, by_id)
        attached = [
            slot
            for slot in slots
            if slot.entity is not None and any(member.accepts(slot.entity) for member in family)
        ]
        for slot in attached or slots:
            slot.groups.extend(member for member in family if member not in slot.groups)
    return slots


def _family(
    group: GroupSpec, aliases: list[list[str]], by_id: dict[str, GroupSpec]
) -> list[GroupSpec]:
    """The group and every group sharing an alias set with it."""
    members = [group]
    for alias_set in aliases:
        if group.id in alias_set:
            members += [by_id[i] for i in alias_set if i in by_id and by_id[i] not in members]
    return members


@dataclass(frozen=True)
class PredictionVerdict:
    entity: Entity
    correct: bool
    via: str | None  # "exact", "group ID", "alias ID"; None for a false positive
    slot: str | None  # the slot it found in the maximum matching, if any


@dataclass(frozen=True)
class MatchResult:
    predictions: list[PredictionVerdict]
    slots: list[str]
    found: list[bool]

    @property
    def predicted(self) -> int:
        return len(self.predictions)

    @property
    def correct(self) -> int:
        return sum(1 for verdict in self.predictions if verdict.correct)

    @property
    def false_positives(self) -> int:
        return self.predicted - self.correct

    @property
    def slots_found(self) -> int:
        return sum(self.found)

    @property
    def false_negatives(self) -> int:
        return len(self.slots) - self.slots_found

    @property
    def precision(self) -> float:
        if not self.predictions:
            return 0.0 if self.slots else 1.0
        return self.correct / self.predicted

    @property
    def recall(self) -> float:
        return self.slots_found / len(self.slots) if self.slots else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def match(predicted: list[Entity], truth: RootCauseTruth) -> MatchResult:
    """Grade predicted root causes against the truth (duplicates of one entity count once)."""
    unique: list[Entity] = []
    for entity in predicted:
        if not any(entity.same_as(seen) for seen in unique):
            unique.append(entity)
    slots = truth.slots()
    accepted = [[slot.accepts(entity) for slot in slots] for entity in unique]
    assignment = _maximum_matching([[i for i, via in enumerate(row) if via] for row in accepted])
    verdicts = []
    for index, entity in enumerate(unique):
        vias = [via for via in accepted[index] if via]
        slot = assignment.get(index)
        verdicts.append(
            PredictionVerdict(
                entity,
                bool(vias),
                accepted[index][slot] if slot is not None else (vias[0] if vias else None),
                slots[slot].label if slot is not None else None,
            )
        )
    found = [slot_index in assignment.values() for slot_index in range(len(slots))]
    return MatchResult(verdicts, [slot.label for slot in slots], found)


def _maximum_matching(edges: list[list[int]]) -> dict[int, int]:
    """Left index -> right index of a maximum bipartite matching (augmenting paths; sizes are
    small: predictions against root causes)."""
    owner: dict[int, int] = {}

    def augment(left: int, seen: set[int]) -> bool:
        for right in edges[left]:
            if right in seen:
                continue
            seen.add(right)
            if right not in owner or augment(owner[right], seen):
                owner[right] = left
                return True
        return False

    for left in range(len(edges)):
        augment(left, set())
    return {left: right for right, left in owner.items()}
