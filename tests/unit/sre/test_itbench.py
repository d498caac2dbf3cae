"""ITBench scenarios as benchyard scenarios, on directories the tests write themselves; a
malformed directory is refused with every problem at its file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from benchyard.formats.itbench.importer import ItbenchOptions, convert
from benchyard.importers.base import SourceInvalid
from tests.unit.sre.itbench_dirs import FLAGD, flag_injection, k8s, small_itbench, write_scenario


def converted(root: Path, **options: object) -> dict[str, dict[str, object]]:
    scenarios, _ = convert(root, ItbenchOptions.model_validate(options))
    return {s.data["id"]: s.data for s in scenarios}  # type: ignore[misc]


def test_scenarios_become_incidents_with_their_ground_truth(tmp_path: Path) -> None:
    data = converted(small_itbench(tmp_path / "sre"))
    assert sorted(data) == ["scenario-1", "scenario-17", "scenario-20", "scenario-37"]
    flag = data["scenario-1"]
    environment = flag["environment"]
    assert environment["app"] == "otel-demo" and environment["seed"] == 1  # type: ignore[index]
    assert environment["faults"] == [  # type: ignore[index]
        {
            "mechanism": "feature-flag",
            "target": FLAGD,
            "params": {"flag": "loadGeneratorFloodHomepage", "variant": "on", "restart": ["flagd"]},
        }
    ]
    assert environment["alerts"] == [{"alert": "HighRequestErrorRate", "service": "frontend-proxy"}]  # type: ignore[index]
    check = flag["checks"][0]  # type: ignore[index]
    assert check["entities"] == [FLAGD]
    assert [g["id"] for g in check["groups"]] == [
        "load-generator-pod-1",
        "frontend-proxy-service-1",
        "junk",
    ]
    assert "filter" not in check["groups"][2]  # '*.*' is no regular expression: dropped
    assert check["aliases"] == [["load-generator-pod-1", "frontend-proxy-service-1"]]
    assert json.loads(flag["reference"]) == {"root_causes": [FLAGD]}  # type: ignore[arg-type]
    chaos = data["scenario-17"]["environment"]["faults"][0]  # type: ignore[index]
    assert chaos["mechanism"] == "chaos" and chaos["service"] == "product-catalog"
    assert chaos["params"]["latency_ms"] == 20000


def test_no_v2_entity_is_a_negative_scenario(tmp_path: Path) -> None:
    alarm = converted(small_itbench(tmp_path / "sre"))["scenario-37"]
    assert alarm["negative"] is True
    check = alarm["checks"][0]  # type: ignore[index]
    assert check["entities"] == [] and not any(g.get("root_cause") for g in check["groups"])
    assert json.loads(alarm["reference"]) == {"root_causes": []}  # type: ignore[arg-type]


def test_options_seed_and_judge(tmp_path: Path) -> None:
    data = converted(small_itbench(tmp_path / "sre"), seed=2, judge="also")
    assert data["scenario-20"]["environment"]["seed"] == 2 * 100_003 + 20  # type: ignore[index]
    assert data["scenario-20"]["checks"][0]["judge"] == "also"  # type: ignore[index]


def test_the_dataset_layout_and_a_single_scenario_are_found(tmp_path: Path) -> None:
    small_itbench(tmp_path / "sre")
    assert len(converted(tmp_path)) == 4  # the dataset root, holding sre/
    assert list(converted(tmp_path / "sre" / "scenario_20")) == ["scenario-20"]


def test_import_command_and_verify(tmp_path: Path) -> None:
    from benchyard.benchmarks.loader import load_benchmark
    from benchyard.importers.build import read_source, write_benchmark
    from benchyard.runner.api import verify_benchmark

    result = read_source("itbench", small_itbench(tmp_path / "src"))
    written = write_benchmark(result, tmp_path / "bench")
    loaded = load_benchmark(written)
    assert len(loaded.scenarios) == 4
    outcomes = verify_benchmark(loaded, sandbox="none")
    assert [o.scenario_id for o in outcomes if not o.ok] == []


def problems_of(root: Path) -> list[str]:
    with pytest.raises(SourceInvalid) as caught:
        convert(root, ItbenchOptions())
    return [str(problem) for problem in caught.value.problems]


def test_malformed_directories_name_file_line_and_field(tmp_path: Path) -> None:
    root = tmp_path / "sre"
    write_scenario(
        root,
        1,
        [{"id": "teleport-the-pods", "args": {"kubernetesObject": k8s("Deployment", "ad")}}],
        [FLAGD],
    )
    write_scenario(root, 2, [flag_injection("cartFailure")], [{"kind": "ConfigMap"}])
    broken = write_scenario(root, 3, [flag_injection("adFailure")], [FLAGD])
    (broken / "scenario.yaml").write_text("spec:\n  applications: [\n", encoding="utf-8")
    write_scenario(
        root,
        4,
        [
            {
                "id": "nonexistent-kubernetes-workload-container-image",
                "args": {"kubernetesObject": k8s("Deployment", "warp-drive")},
            }
        ],
        [FLAGD],
    )
    missing = write_scenario(root, 5, [flag_injection("adFailure")], [FLAGD])
    (missing / "groundtruth.yaml").unlink()
    write_scenario(root, 6, [flag_injection("adFailure")], [FLAGD], app="kubernetesDashboard")
    problems = problems_of(root)
    text = "\n".join(problems)
    assert (
        f"{root}/scenario_1/scenario.yaml:" in text
        and "spec.faults[0].injections[0].id: unsupported fault injection 'teleport-the-pods'"
        in text
    )
    line = next(p for p in problems if "teleport" in p)
    assert line.split(":")[1].isdigit()
    assert (
        f"{root}/scenario_2/groundtruth.yaml:" in text
        and "spec.entities[0].metadata.name: required text is missing" in text
    )
    assert f"{root}/scenario_3/scenario.yaml:" in text
    assert (
        "spec.faults[0].injections[0].args.kubernetesObject.metadata.name: no workload or service 'warp-drive'"
        in text
    )
    assert f"{root}/scenario_5/groundtruth.yaml: missing file" in text
    assert "spec.applications: expected exactly one enabled application" in text


def test_an_empty_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "nothing").mkdir()
    assert "no scenario_<N> directories" in problems_of(tmp_path / "nothing")[0]


def test_v1_at_top_level_or_under_spec(tmp_path: Path) -> None:
    v1 = {
        "groups": [
            {
                "id": "pc",
                "kind": "Deployment",
                "namespace": "otel-demo",
                "filter": ["product-catalog\\b"],
                "root_cause": True,
            }
        ]
    }
    injection = [
        {
            "id": "invalid-kubernetes-workload-container-command",
            "args": {"kubernetesObject": k8s("Deployment", "product-catalog")},
        }
    ]
    entity = [{"kind": "Deployment", "name": "product-catalog", "namespace": "otel-demo"}]
    write_scenario(tmp_path / "a", 105, injection, entity, v1)
    write_scenario(tmp_path / "b", 105, injection, entity, {"spec": v1})
    top = converted(tmp_path / "a")["scenario-105"]["checks"][0]  # type: ignore[index]
    wrapped = converted(tmp_path / "b")["scenario-105"]["checks"][0]  # type: ignore[index]
    assert top == wrapped and top["groups"][0]["id"] == "pc"
    assert yaml.safe_dump(top)
