"""BFCL's AST checker on observed tool calls and on prompt-mode answers, and the importer's
tool-use scenarios, graded by `verify` (the reference's calls)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchyard.agents.toolbox import ToolBox
from benchyard.benchmarks.loader import load_benchmark
from benchyard.checks.base import Evidence
from benchyard.formats.bfcl.check import decode_answer
from benchyard.runner.api import verify_benchmark
from benchyard.runner.trajectory import Event, message
from benchyard.spec.models import Scenario
from tests.unit.checks.helpers import check_type
from tests.unit.importers.sources import BFCL_ANSWERS, BFCL_FUNCTIONS, direct_benchmark, write_bfcl

SIMPLE = BFCL_ANSWERS["simple_python"][0]["ground_truth"]
PARALLEL = BFCL_ANSWERS["parallel"][0]["ground_truth"]


def grade(
    category: str,
    made: list[tuple[str, Any]] | str,
    *,
    truth: Any = SIMPLE,
    replies: int = 1,
    **params: Any,
) -> tuple[bool, str]:
    """Grade calls made through a toolbox (as the openai agent's loop makes them), or an answer."""
    scenario = Scenario.model_validate(
        {"id": "s", "stimulus": "q", "checks": [{"type": "equals", "value": "x"}]}
    )
    events: list[Event] = [message("user", "q")]
    answer = ""
    if isinstance(made, str):
        answer, params = made, {"source": "answer", **params}
    else:
        box = ToolBox([], events)
        per_reply = max(1, len(made) // replies)
        for index, (name, arguments) in enumerate(made):
            if index % per_reply == 0:
                events.append(Event(kind="message", role="assistant", data={"source": "model"}))
            box.call(name, arguments)
    kind = check_type("function_call_ast")
    checked = kind.params.model_validate(
        {"category": category, "functions": BFCL_FUNCTIONS, "ground_truth": truth, **params}
    )
    result = kind.evaluate(checked, Evidence(answer=answer, scenario=scenario, trajectory=events))
    return result.passed, result.reason


def test_an_omitted_optional_parameter_passes_and_a_required_one_fails() -> None:
    assert grade("simple", [("geo_distance", {"origin": "Paris", "destination": "Lyon"})])[0]
    passed, reason = grade("simple", [("geo_distance", {"origin": "Paris"})])
    assert not passed and "missing required parameter 'destination'" in reason


def test_types_values_and_names_as_the_official_checker() -> None:
    # strings compare without spaces and `,./-_*^`, in any case; ints stand for floats
    assert grade(
        "simple", [("geo_distance", {"origin": "PARIS ", "destination": "ly-on", "precision": 1})]
    )[0]
    passed, reason = grade(
        "simple", [("geo_distance", {"origin": "Paris", "destination": "Lyon", "precision": "1.0"})]
    )
    assert not passed and "type_error" in reason
    passed, reason = grade("simple", [("geo_distance", {"origin": "Rome", "destination": "Lyon"})])
    assert not passed and "value_error:string" in reason
    passed, reason = grade(
        "simple", [("geo_distance", {"origin": "Paris", "destination": "Lyon", "speed": 3})]
    )
    assert not passed and "unexpected parameter 'speed'" in reason
    passed, reason = grade("simple", [("geo.distance", {"origin": "Paris", "destination": "Lyon"})])
    assert not passed and "wrong_func_name" in reason  # a tool name has `_` for `.`


def test_parallel_calls_match_in_any_order_but_not_in_any_number() -> None:
    oslo = ("geo_distance", {"origin": "Oslo", "destination": "Bergen"})
    paris = ("geo_distance", {"origin": "Paris", "destination": "Lyon", "unit": "km"})
    assert grade("parallel", [oslo, paris], truth=PARALLEL)[0]
    passed, reason = grade("parallel", [oslo], truth=PARALLEL)
    assert not passed and "wrong_count" in reason
    # the official checker reads one reply: calls spread over two replies are the first one's
    passed, reason = grade("parallel", [oslo, paris], truth=PARALLEL, replies=2)
    assert not passed and "1 calls, 2 expected" in reason
    assert grade("parallel", [oslo, paris], truth=PARALLEL, replies=2, calls="all")[0]


def test_irrelevance_passes_without_a_call() -> None:
    assert grade("irrelevance", [], truth=[])[0]
    assert grade("irrelevance", "I cannot help with that.", truth=[])[0]
    passed, reason = grade("irrelevance", [("geo_distance", {})], truth=[])
    assert not passed and "irrelevance_error" in reason
    # arguments that are not JSON: no decodable call, as the official FC decoding fails
    assert grade("irrelevance", [("geo_distance", "{not json")], truth=[])[0]


def test_prompt_mode_answers_are_decoded_without_running_them() -> None:
    assert decode_answer("[geo.distance(origin='Paris', destination='Lyon', precision=2*0.5)]") == [
        {"geo.distance": {"origin": "Paris", "destination": "Lyon", "precision": 1.0}}
    ]
    assert grade("simple", "```\ngeo.distance(origin='Paris', destination='Lyon')\n```")[0]
    passed, reason = grade("simple", "[geo.distance(origin=__import__('os').getcwd())]")
    assert not passed
    passed, reason = grade("simple", "[geo.distance(origin='a', destination=9**9**9)]")
    assert not passed and "decoder_failed" in reason


def test_imported_scenarios_offer_the_functions_and_verify(tmp_path: Path) -> None:
    source = write_bfcl(tmp_path / "bfcl")
    for mode in ("fc", "prompt"):
        root = direct_benchmark(tmp_path / f"bench-{mode}", "bfcl", source, mode=mode)
        benchmark = load_benchmark(root)
        by_id = {s.id: s for s in benchmark.scenarios}
        assert set(by_id) == {"simple_python_0", "parallel_0", "irrelevance_0"}
        assert by_id["irrelevance_0"].negative
        if mode == "fc":
            tool = by_id["simple_python_0"].tools[0]
            assert tool.name == "geo_distance"
            assert tool.parameters["properties"]["precision"]["type"] == "number"
        outcomes = verify_benchmark(benchmark, "none")
        assert all(outcome.ok for outcome in outcomes), outcomes
