"""Editing a scenario from the web UI: validated by the loader, each problem at its field, the file
written back with its comments, order and other lines untouched, and only when it is valid."""

from __future__ import annotations

from pathlib import Path

from benchyard.benchmarks.loader import load_benchmark
from tests.integration.web.support import (
    BENCHMARK_YAML,
    Filled,
    ServerThread,
    browser_client,
    csrf_of,
)

EDIT = "/benchmarks/webbench/scenarios/{sid}/edit"


def _fields(server: ServerThread, sid: str) -> tuple[dict[str, str], str]:
    page = server.get("/api" + EDIT.format(sid=sid), timeout=30).json()
    return {field["name"]: field["text"] for field in page["fields"]}, page["file_sha256"]


def _form(fields: dict[str, str], sha: str, token: str, **extra: str) -> dict[str, str]:
    return {
        **{f"field:{name}": text for name, text in fields.items()},
        "file_sha256": sha,
        "csrf_token": token,
        **extra,
    }


def test_the_editor_shows_each_field_as_written(server: ServerThread, filled: Filled) -> None:
    fields, _ = _fields(server, "s1")
    assert list(fields) == ["id", "category", "stimulus", "reference", "checks"]
    assert fields["stimulus"] == '"What is 2 + 2?"'
    assert fields["checks"] == '- type: equals\n  value: "4"   # the right answer'


def test_a_valid_edit_changes_only_that_field_and_keeps_the_comments(
    server: ServerThread, filled: Filled
) -> None:
    file = filled.benchmark_root / "scenarios" / "main.yaml"
    client = browser_client(server)
    fields, sha = _fields(server, "s2")
    fields["stimulus"] = "What is 3 + 4?"
    fields["checks"] = '- type: equals\n  value: "7"  # changed from the web UI'
    fields["reference"] = '"7"'
    answer = client.post(
        EDIT.format(sid="s2"),
        data=_form(fields, sha, csrf_of(client), new_name="difficulty", new_value="hard"),
    )
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == "/benchmarks/webbench?saved=s2"
    expected = BENCHMARK_YAML.replace(
        '  stimulus: "What is 3 + 3?"\n  reference: "6"\n  checks:\n    - type: equals\n      value: "6"\n',
        '  stimulus: What is 3 + 4?\n  reference: "7"\n  checks:\n    - type: equals\n'
        '      value: "7"  # changed from the web UI\n  difficulty: hard\n',
    )
    assert file.read_text(encoding="utf-8") == expected
    s2 = next(s for s in load_benchmark(filled.benchmark_root).scenarios if s.id == "s2")
    assert (s2.stimulus.turns, s2.reference, s2.difficulty) == (["What is 3 + 4?"], "7", "hard")
    assert "saved scenario s2" in client.get(answer.headers["location"]).text


def test_an_invalid_edit_is_refused_at_its_field_and_the_file_is_kept(
    server: ServerThread, filled: Filled
) -> None:
    file = filled.benchmark_root / "scenarios" / "main.yaml"
    client = browser_client(server)
    fields, sha = _fields(server, "s1")
    fields["checks"] = "- type: equalz\n  value: 4"
    answer = client.post(EDIT.format(sid="s1"), data=_form(fields, sha, csrf_of(client)))
    assert answer.status_code == 422
    assert file.read_text(encoding="utf-8") == BENCHMARK_YAML
    block = answer.text.split('data-field-name="checks"', 1)[1].split("</div>", 1)[0]
    assert "checks[0].type" in block and "unknown check type &#39;equalz&#39;" in block
    assert "did you mean &#39;equals&#39;" in block
    assert "- type: equalz" in block  # the text as the user sent it, to fix
    as_json = client.post(
        "/api" + EDIT.format(sid="s1"),
        data=_form({**fields, "checks": "- type: equals\n  value: [4"}, sha, csrf_of(client)),
    ).json()
    [checks] = [f for f in as_json["fields"] if f["name"] == "checks"]
    assert (
        checks["problems"][0]["line"] == 2 and "flow sequence" in checks["problems"][0]["message"]
    )
    assert file.read_text(encoding="utf-8") == BENCHMARK_YAML


def test_a_duplicate_id_names_the_id_field(server: ServerThread, filled: Filled) -> None:
    client = browser_client(server)
    fields, sha = _fields(server, "s3")
    fields["id"] = "s4"
    answer = client.post("/api" + EDIT.format(sid="s3"), data=_form(fields, sha, csrf_of(client)))
    assert answer.status_code == 422
    [id_field] = [f for f in answer.json()["fields"] if f["name"] == "id"]
    assert any("duplicate scenario id 's4'" in p["message"] for p in id_field["problems"])
    assert (filled.benchmark_root / "scenarios" / "main.yaml").read_text() == BENCHMARK_YAML


def test_a_stale_form_built_ins_and_unknown_scenarios_are_refused(
    server: ServerThread, filled: Filled
) -> None:
    file = filled.benchmark_root / "scenarios" / "main.yaml"
    client = browser_client(server)
    fields, sha = _fields(server, "s1")
    file.write_text(BENCHMARK_YAML + "\n# edited by hand meanwhile\n", encoding="utf-8")
    stale = client.post(EDIT.format(sid="s1"), data=_form(fields, sha, csrf_of(client)))
    assert stale.status_code == 409 and "changed on disk" in stale.text
    assert file.read_text(encoding="utf-8").endswith("meanwhile\n")
    built_in = server.get("/benchmarks/starter/scenarios/math-001/edit", timeout=30)
    assert built_in.status_code == 403
    missing = server.get(EDIT.format(sid="nope"), timeout=30)
    assert missing.status_code == 409 and "no scenario" in missing.text


def test_the_edit_form_posts_to_the_page_that_shows_it(
    server: ServerThread, filled: Filled
) -> None:
    html = server.get(EDIT.format(sid="s1"), timeout=30).text
    assert f'action="{EDIT.format(sid="s1")}"' in html and 'name="csrf_token"' in html
    assert Path(filled.benchmark_root).is_dir()
