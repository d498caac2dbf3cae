"""Root-cause matching on hand-written cases: exact entities, v1 group filters, aliases,
precision, recall, F1 and false positives."""

from __future__ import annotations

import pytest

from benchyard.sre.entities import Entity, canonical_kind, kind_key
from benchyard.sre.matching import RootCauseTruth, match


def truth(**data: object) -> RootCauseTruth:
    return RootCauseTruth.model_validate(data)


FLAGD = {"kind": "ConfigMap", "name": "flagd-config", "namespace": "otel-demo"}


@pytest.mark.parametrize(
    ("written", "key"),
    [
        ("Deployment", "deployment"),
        ("deployments", "deployment"),
        ("deploy", "deployment"),
        ("apps/v1 Deployment", "deployment"),
        ("svc", "service"),
        ("hpa", "horizontalpodautoscaler"),
        ("NetworkPolicies", "networkpolicy"),
        ("Endpoints", "endpoints"),
        ("ResourceQuotas", "resourcequota"),
    ],
)
def test_kinds_compare_as_people_write_them(written: str, key: str) -> None:
    assert kind_key(written) == key


def test_canonical_kind_and_cluster_scoped_namespace() -> None:
    assert canonical_kind("configmaps") == "ConfigMap"
    assert Entity.of("ns", "book-info", "book-info") == Entity("Namespace", "book-info", None)
    assert Entity.of("Deployment", " cart ", "otel-demo").same_as(
        Entity.of("deploy", "CART", "OTEL-DEMO")
    )


def test_exact_match_is_precision_and_recall_one() -> None:
    result = match([Entity.of("ConfigMap", "flagd-config", "otel-demo")], truth(entities=[FLAGD]))
    assert (result.precision, result.recall, result.f1, result.false_positives) == (
        1.0,
        1.0,
        1.0,
        0,
    )
    assert result.predictions[0].via == "exact"


def test_a_wrong_namespace_or_kind_is_a_false_positive() -> None:
    predicted = [
        Entity.of("ConfigMap", "flagd-config", "default"),
        Entity.of("Deployment", "flagd-config", "otel-demo"),
        Entity.of("ConfigMap", "flagd-config"),  # namespace left out: not exact
    ]
    result = match(predicted, truth(entities=[FLAGD]))
    assert result.correct == 0
    assert result.false_positives == 3
    assert (result.precision, result.recall, result.f1) == (0.0, 0.0, 0.0)


def test_one_right_one_wrong_halves_precision() -> None:
    predicted = [
        Entity.of("ConfigMap", "flagd-config", "otel-demo"),
        Entity.of("Service", "cart", "otel-demo"),
    ]
    result = match(predicted, truth(entities=[FLAGD]))
    assert (result.precision, result.recall) == (0.5, 1.0)
    assert result.f1 == pytest.approx(2 / 3)
    assert [str(v.entity) for v in result.predictions if not v.correct] == [
        "Service/otel-demo/cart"
    ]


def test_duplicates_count_once() -> None:
    same = Entity.of("ConfigMap", "flagd-config", "otel-demo")
    result = match(
        [same, same, Entity.of("configmaps", "FLAGD-CONFIG", "otel-demo")], truth(entities=[FLAGD])
    )
    assert (result.predicted, result.correct) == (1, 1)


def test_group_filter_matches_the_whole_name() -> None:
    groups = [
        {
            "id": "lg-pods",
            "kind": "Pod",
            "namespace": "otel-demo",
            "filter": ["load-generator-.*"],
            "root_cause": True,
        }
    ]
    right = match(
        [Entity.of("Pod", "load-generator-7c9f6-x2x9z", "otel-demo")], truth(groups=groups)
    )
    assert right.correct == 1 and right.predictions[0].via == "group lg-pods"
    prefix_only = match(
        [Entity.of("Pod", "the-load-generator-1", "otel-demo")], truth(groups=groups)
    )
    assert prefix_only.correct == 0
    other_namespace = match([Entity.of("Pod", "load-generator-1", "default")], truth(groups=groups))
    assert other_namespace.correct == 0


def test_alias_of_the_root_cause_group_is_accepted() -> None:
    """ITBench scenario 1's shape: v2 names the ConfigMap, v1 the load generator pod, and an alias
    set puts the frontend-proxy service with it."""
    data = truth(
        entities=[FLAGD],
        groups=[
            {
                "id": "lg-pod",
                "kind": "Pod",
                "namespace": "otel-demo",
                "filter": ["load-generator-.*"],
                "root_cause": True,
            },
            {
                "id": "fp-svc",
                "kind": "Service",
                "namespace": "otel-demo",
                "filter": ["frontend-proxy\\b"],
            },
            {
                "id": "acct",
                "kind": "Service",
                "namespace": "otel-demo",
                "filter": ["accounting\\b"],
            },
        ],
        aliases=[["lg-pod", "fp-svc"]],
    )
    assert (
        match([Entity.of("Service", "frontend-proxy", "otel-demo")], data).predictions[0].via
        == "alias fp-svc"
    )
    assert match([Entity.of("Service", "accounting", "otel-demo")], data).false_positives == 1
    # The ConfigMap and an alias of it find one root cause, not two; neither is a false positive.
    both = match(
        [
            Entity.of("ConfigMap", "flagd-config", "otel-demo"),
            Entity.of("Service", "frontend-proxy", "otel-demo"),
        ],
        data,
    )
    assert (both.correct, both.slots_found, both.precision, both.recall) == (2, 1, 1.0, 1.0)


def test_one_entity_finds_one_root_cause_of_two() -> None:
    data = truth(
        entities=[
            {"kind": "Deployment", "name": "ad", "namespace": "otel-demo"},
            {"kind": "Deployment", "name": "cart", "namespace": "otel-demo"},
        ],
        groups=[
            {
                "id": "ad-pod",
                "kind": "Pod",
                "namespace": "otel-demo",
                "filter": ["ad-.*"],
                "root_cause": True,
            }
        ],
    )
    # The group matches neither Deployment, so it is attached to both; a pod still finds only one.
    one = match([Entity.of("Pod", "ad-5d8f-x2x9z", "otel-demo")], data)
    assert (one.precision, one.recall) == (1.0, 0.5)
    two = match(
        [
            Entity.of("Pod", "ad-5d8f-x2x9z", "otel-demo"),
            Entity.of("Deployment", "cart", "otel-demo"),
        ],
        data,
    )
    assert (two.recall, two.f1) == (1.0, 1.0)


def test_a_group_that_matches_one_entity_is_attached_to_it_only() -> None:
    data = truth(
        entities=[
            {"kind": "Deployment", "name": "checkout", "namespace": "otel-demo"},
            {"kind": "ResourceQuota", "name": "strict", "namespace": "otel-demo"},
        ],
        groups=[
            {
                "id": "quota",
                "kind": "ResourceQuota",
                "namespace": "otel-demo",
                "filter": ["strict\\b"],
                "root_cause": True,
            },
            {"id": "ns", "kind": "Namespace", "name": "otel-demo"},
        ],
        aliases=[["quota", "ns"]],
    )
    namespace = match([Entity.of("Namespace", "otel-demo")], data)
    assert namespace.correct == 1
    assert namespace.slots == ["Deployment/otel-demo/checkout", "ResourceQuota/otel-demo/strict"]
    assert namespace.found == [False, True]


def test_no_root_cause_means_naming_nothing_is_right() -> None:
    empty = truth(entities=[])
    nothing = match([], empty)
    assert (nothing.precision, nothing.recall, nothing.f1, nothing.false_positives) == (
        1.0,
        1.0,
        1.0,
        0,
    )
    named = match([Entity.of("Service", "email", "otel-demo")], empty)
    assert (named.precision, named.f1, named.false_positives) == (0.0, 0.0, 1)


def test_naming_nothing_when_there_is_a_root_cause() -> None:
    result = match([], truth(entities=[FLAGD]))
    assert (result.precision, result.recall, result.f1, result.false_negatives) == (
        0.0,
        0.0,
        0.0,
        1,
    )


def test_groups_alone_make_the_slots() -> None:
    data = truth(
        groups=[
            {
                "id": "g",
                "kind": "Schedule",
                "namespace": "chaos-mesh",
                "name": "delay",
                "root_cause": True,
            }
        ]
    )
    assert match([Entity.of("Schedule", "delay", "chaos-mesh")], data).recall == 1.0


def test_bad_aliases_and_filters_are_refused() -> None:
    with pytest.raises(ValueError, match="not among the group ids"):
        truth(groups=[{"id": "a", "kind": "Pod"}], aliases=[["a", "b"]])
    with pytest.raises(ValueError, match="not a valid regular expression"):
        truth(groups=[{"id": "a", "kind": "Pod", "filter": ["*.*"]}])
