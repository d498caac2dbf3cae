"""Proposals: drafted changes validated by the loader, nothing written until a person accepts,
the diff shown, stale or invalid ones refused, and the decision recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from benchyard.automation.proposals import (
    ProposalInvalid,
    ProposalRefused,
    accept,
    bumped_version,
    get_proposal,
    list_proposals,
    propose_create,
    propose_update,
    reject,
)
from benchyard.benchmarks.loader import load_benchmark
from benchyard.store.store import Store
from tests.integration.web.support import BENCHMARK_YAML, write_web_benchmark
from tests.support import Cli

CHANGED_S2 = {
    "id": "s2",
    "category": "math",
    "stimulus": "What is 3 + 4?",
    "reference": "7",
    "checks": [{"type": "equals", "value": "7"}],
}
NEW_S5 = {
    "id": "s5",
    "category": "text",
    "stimulus": "Say hi.",
    "reference": "hi",
    "checks": [{"type": "contains", "value": "hi"}],
    "fixtures": {"files": ["fixtures/greeting.txt"]},
}

PLAIN_S5 = {key: value for key, value in NEW_S5.items() if key != "fixtures"}


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    return write_web_benchmark(tmp_path / "webbench")


def _scenarios(bench: Path) -> str:
    return (bench / "scenarios" / "main.yaml").read_text(encoding="utf-8")


def test_an_update_stays_pending_until_accepted(store: Store, bench: Path) -> None:
    before = load_benchmark(bench).content_hash
    proposal = propose_update(
        store,
        bench,
        scenarios=[CHANGED_S2, NEW_S5],
        remove=["s4"],
        files={"scenarios/fixtures/greeting.txt": "hi there\n"},
        title="sharper arithmetic",
        rationale="s2 was too easy",
        created_by="assistant",
    )
    assert proposal.status == "pending"
    assert proposal.summary == {
        "added": ["s5"],
        "changed": ["s2"],
        "removed": ["s4"],
        "files": ["benchmark.yaml", "scenarios/fixtures/greeting.txt", "scenarios/main.yaml"],
    }
    assert _scenarios(bench) == BENCHMARK_YAML  # nothing written
    assert not (bench / "scenarios" / "fixtures" / "greeting.txt").exists()
    assert load_benchmark(bench).content_hash == before
    diff = proposal.diff()
    assert '-  stimulus: "What is 3 + 3?"' in diff and "+  stimulus: What is 3 + 4?" in diff
    assert "+- id: s5" in diff and "-- id: s4" in diff
    assert "+++ b/scenarios/fixtures/greeting.txt" in diff
    assert "-version: '1.0'" in diff and '+version: "1.1"' in diff  # a new version, shown

    accepted = accept(store, proposal.id[:8], by="alice", note="looks right")
    assert (accepted.status, accepted.decided_by, accepted.decision_note) == (
        "accepted",
        "alice",
        "looks right",
    )
    loaded = load_benchmark(bench)
    assert accepted.result_hash == loaded.content_hash != before
    assert loaded.version == "1.1"  # accepting it bumped the version
    assert [s.id for s in loaded.scenarios] == ["s1", "s2", "s3", "s5"]
    text = _scenarios(bench)
    assert "# Scenarios of the web tests. This comment must survive an edit." in text
    assert 'value: "4"   # the right answer' in text  # s1 untouched, byte for byte
    stored = get_proposal(store, proposal.id)
    assert stored.status == "accepted" and stored.decided_at is not None
    with pytest.raises(ProposalRefused, match="was accepted by alice"):
        accept(store, proposal.id)


def test_an_invalid_draft_is_refused_with_the_loaders_messages(store: Store, bench: Path) -> None:
    broken = {**NEW_S5, "checks": [{"type": "equals"}], "fixtures": {"files": ["nope.txt"]}}
    with pytest.raises(ProposalInvalid) as refused:
        propose_update(store, bench, scenarios=[broken])
    text = str(refused.value)
    assert "scenarios/main.yaml:" in text
    assert "checks[0]" in text and "value" in text
    assert "nope.txt" in text
    assert list_proposals(store) == []
    assert _scenarios(bench) == BENCHMARK_YAML


def test_a_draft_the_benchmark_would_not_read_is_refused(store: Store, bench: Path) -> None:
    with pytest.raises(ProposalInvalid, match="not read by the benchmark"):
        propose_update(store, bench, scenarios=[PLAIN_S5], scenario_file="elsewhere/new.yaml")


def test_a_proposal_made_stale_by_an_edit_is_refused(store: Store, bench: Path) -> None:
    proposal = propose_update(store, bench, scenarios=[CHANGED_S2])
    (bench / "scenarios" / "main.yaml").write_text(BENCHMARK_YAML + "\n# edited\n", "utf-8")
    with pytest.raises(ProposalRefused, match="changed since proposal"):
        accept(store, proposal.id)
    assert get_proposal(store, proposal.id).status == "pending"
    rejected = reject(store, proposal.id, by="bob", note="stale")
    assert (rejected.status, rejected.decided_by) == ("rejected", "bob")
    assert _scenarios(bench).endswith("# edited\n")


def test_a_new_benchmark_is_created_only_on_acceptance(store: Store, tmp_path: Path) -> None:
    proposal = propose_create(
        store,
        tmp_path,
        name="fresh-bench",
        version="0.1",
        description="made by an assistant",
        scenarios=[PLAIN_S5],
    )
    root = tmp_path / "fresh-bench"
    assert not root.exists()
    assert "+name: fresh-bench" in proposal.diff()
    accept(store, proposal.id, by="carol")
    loaded = load_benchmark(root)
    assert (loaded.name, loaded.version, [s.id for s in loaded.scenarios]) == (
        "fresh-bench",
        "0.1",
        ["s5"],
    )


def test_a_new_version_counts_up_its_last_number() -> None:
    assert [bumped_version(v) for v in ("1.0", "3", "v2-beta", "2024.12.31", "draft")] == [
        "1.1",
        "4",
        "v3-beta",
        "2024.12.32",
        "draft.1",
    ]


def test_a_built_in_benchmark_cannot_be_changed(store: Store) -> None:
    with pytest.raises(ProposalRefused, match="built into benchyard"):
        propose_update(store, "starter", scenarios=[NEW_S5])


def test_the_cli_lists_shows_the_diff_accepts_and_rejects(
    store: Store, bench: Path, cli: Cli
) -> None:
    first = propose_update(store, bench, scenarios=[CHANGED_S2], title="fix s2")
    second = propose_update(store, bench, version="1.1", title="bump")
    listed = cli("proposals", "list")
    assert listed.exit_code == 0, listed.output
    assert first.id[:8] in listed.output and "fix s2" in listed.output
    shown = cli("proposals", "show", first.id[:8])
    assert shown.exit_code == 0
    assert "+  stimulus: What is 3 + 4?" in shown.output and "(pending)" in shown.output
    done = cli("proposals", "accept", first.id[:8], "--by", "dana")
    assert done.exit_code == 0, done.output
    assert "accepted proposal" in done.output
    assert "What is 3 + 4?" in _scenarios(bench)
    refused = cli("proposals", "reject", second.id[:8], "-m", "not now")
    assert refused.exit_code == 0
    # the accepted proposal bumped 1.0 to 1.1; the rejected one wrote nothing
    assert yaml.safe_load((bench / "benchmark.yaml").read_text())["version"] == "1.1"
    again = cli("proposals", "accept", second.id[:8])
    assert again.exit_code == 2 and "was rejected" in again.output
    assert "rejected" in cli("proposals", "list", "--status", "rejected").output
