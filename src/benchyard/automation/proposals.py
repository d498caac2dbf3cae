"""Proposals: benchmark changes an assistant drafts and a person decides.

`propose_update` (new, changed and removed scenarios of a benchmark on disk, fixture files, a new
version) and `propose_create` (a new benchmark) never write the benchmark. They turn the drafts
into file changes (automation/scenario_text.py keeps every other line as it was), apply them to a
copy of the benchmark's directory and load that copy with the loader `benchyard validate` uses:
any problem is raised (`ProposalInvalid`, file, line and field), and nothing is recorded. A valid
proposal is stored as `pending` with each file's text before and after.

`accept` writes the files, only if each is still what the proposal was made from (its SHA-256)
and the benchmark with them still loads, and records who accepted it and when; `reject` records
who refused it and why. Only paths inside the benchmark's directory are written, no link followed
(automation/proposal_files.py).
"""

from __future__ import annotations

import difflib
import getpass
import json
import re
import shutil
import tempfile
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from sqlalchemy import insert, select, update

from benchyard import secrets
from benchyard.automation import proposal_files as files_on_disk
from benchyard.automation import scenario_text
from benchyard.automation.proposal_files import PathRefused, checked_path
from benchyard.benchmarks.loader import load_benchmark
from benchyard.errors import BenchyardError
from benchyard.spec.loader import MANIFEST, Benchmark
from benchyard.spec.problems import BenchmarkInvalid, BenchmarkNotFound, Problem
from benchyard.store.run_list import moment
from benchyard.store.schema import proposals
from benchyard.store.store import Store

PENDING, ACCEPTED, REJECTED = "pending", "accepted", "rejected"
STATUSES = (PENDING, ACCEPTED, REJECTED)
SCENARIO_SUFFIXES = (".yaml", ".yml", ".jsonl")
DEFAULT_NEW_FILE = "scenarios/proposed.yaml"
MAX_SCENARIOS = 500
MAX_TITLE = 200
MAX_RATIONALE = 20_000
HERE = "(proposal)"  # the `file` of problems with the proposal itself, not a file of it


class ProposalInvalid(BenchyardError):
    """The proposal's benchmark would not load; every problem is listed (`problems`)."""

    def __init__(self, problems: list[Problem], lead: str = "") -> None:
        self.problems = sorted(problems, key=lambda p: (p.file, p.line or 0, p.field))
        self.lead = lead
        text = "\n".join(str(problem) for problem in self.problems)
        super().__init__(f"{lead}\n{text}" if lead else text)


class ProposalRefused(BenchyardError):
    """A proposal that cannot be made, found or decided as asked."""


@dataclass(frozen=True)
class FileChange:
    path: str  # relative to the benchmark's directory
    before: str | None  # None: the file does not exist yet
    after: str | None  # None: the file is removed

    @property
    def before_sha256(self) -> str | None:
        return files_on_disk.sha256(self.before)

    def diff(self) -> str:
        before = (self.before or "").splitlines(keepends=True)
        after = (self.after or "").splitlines(keepends=True)
        lines = difflib.unified_diff(
            before,
            after,
            fromfile=f"a/{self.path}" if self.before is not None else "/dev/null",
            tofile=f"b/{self.path}" if self.after is not None else "/dev/null",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass(frozen=True)
class Proposal:
    id: str
    kind: str  # create | update
    status: str
    benchmark_name: str
    benchmark_root: str
    base_hash: str | None
    title: str
    rationale: str
    changes: list[FileChange]
    summary: dict[str, list[str]]
    created_at: datetime
    created_by: str
    decided_at: datetime | None = None
    decided_by: str | None = None
    decision_note: str | None = None
    result_hash: str | None = None

    def diff(self) -> str:
        return "".join(change.diff() for change in self.changes)


@dataclass
class _Draft:
    """What the caller gave, checked for shape before any file is touched."""

    scenarios: list[dict[str, Any]] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


# ---- proposing ---------------------------------------------------------------------------------


def propose_update(
    store: Store,
    benchmark: str | Path,
    *,
    scenarios: Sequence[Any] = (),
    remove: Sequence[str] = (),
    files: dict[str, str] | None = None,
    version: str | None = None,
    scenario_file: str | None = None,
    title: str = "",
    rationale: str = "",
    created_by: str = "",
) -> Proposal:
    """A pending proposal to change a benchmark on disk: `scenarios` are added (a new id) or
    replace the scenario of the same id; `remove` drops scenarios; `files` adds or replaces files
    (fixtures) by relative path; `version` sets benchmark.yaml's version (by default the current
    one bumped: `bumped_version`), so that accepting it makes a new version."""
    loaded = _editable(benchmark)
    draft = _checked(scenarios, remove, files or {})
    if scenario_file is not None:
        scenario_file = _scenario_path(scenario_file, draft.problems)
    if draft.problems:
        raise ProposalInvalid(draft.problems)
    changes = _update_changes(loaded, draft, version, scenario_file)
    if not changes:
        raise ProposalRefused("the proposal changes nothing")
    _validated(loaded.root, loaded.root, changes, expect=_expectations(draft))
    summary = _summary(loaded, draft, changes)
    return _record(
        store,
        "update",
        loaded.name,
        loaded.root,
        loaded.content_hash,
        changes,
        summary,
        title,
        rationale,
        created_by,
    )


def propose_create(
    store: Store,
    directory: Path,
    *,
    name: str,
    version: str,
    description: str = "",
    scenarios: Sequence[Any] = (),
    files: dict[str, str] | None = None,
    defaults: dict[str, Any] | None = None,
    scenario_file: str = "scenarios/main.yaml",
    title: str = "",
    rationale: str = "",
    created_by: str = "",
) -> Proposal:
    """A pending proposal to create the benchmark `name` in `directory/name`."""
    draft = _checked(scenarios, (), files or {})
    if not draft.scenarios:
        draft.problems.append(Problem(HERE, None, "scenarios", "a benchmark needs a scenario"))
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}", name):
        draft.problems.append(
            Problem(
                HERE,
                None,
                "name",
                "letters, digits, '_', '.' and '-', starting with one of "
                "the first two, at most 200 characters",
            )
        )
    target = _scenario_path(scenario_file, draft.problems)
    if draft.problems:
        raise ProposalInvalid(draft.problems)
    root = (directory / name).resolve()
    if not root.parent.is_dir():
        raise ProposalRefused(f"{root.parent} is not a directory")
    if root.exists() or root.is_symlink():
        raise ProposalRefused(f"{root} exists already: propose an update of it instead")
    manifest: dict[str, Any] = {"name": name, "version": str(version)}
    if description:
        manifest["description"] = description
    if defaults:
        manifest["defaults"] = defaults
    manifest_text = scenario_text.mapping_yaml(manifest)
    changes = [FileChange(MANIFEST, None, manifest_text)]
    changes.append(
        FileChange(target, None, scenario_text.new_file(draft.scenarios, _suffix(target)))
    )
    for path, text in sorted(draft.files.items()):
        if path in (MANIFEST, target):
            raise ProposalRefused(f"files: '{path}' is written by the proposal itself")
        changes.append(FileChange(path, None, text))
    _limits(changes)
    _validated(None, root, changes, expect=_expectations(draft), name=name)
    summary = {
        "added": [str(s["id"]) for s in draft.scenarios],
        "changed": [],
        "removed": [],
        "files": [change.path for change in changes],
    }
    return _record(
        store, "create", name, root, None, changes, summary, title, rationale, created_by
    )


def _editable(reference: str | Path) -> Benchmark:
    from benchyard.spec.library import LIBRARY_ROOT

    try:
        loaded = load_benchmark(reference)
    except BenchmarkInvalid as invalid:
        raise ProposalInvalid(
            invalid.problems, f"{reference} does not load as it is; fix it first:"
        ) from None
    if loaded.root.is_relative_to(LIBRARY_ROOT):
        raise ProposalRefused(
            f"'{loaded.name}' is built into benchyard and cannot change: copy its directory and "
            "propose changes to the copy"
        )
    if loaded.manifest.format is not None:
        raise ProposalRefused(
            f"'{loaded.name}' is read from a published format ({loaded.manifest.format}): "
            "change its source instead"
        )
    return loaded


def _checked(scenarios: Sequence[Any], remove: Sequence[Any], files: dict[str, Any]) -> _Draft:
    draft = _Draft()
    if len(scenarios) > MAX_SCENARIOS:
        draft.problems.append(
            Problem(HERE, None, "scenarios", f"at most {MAX_SCENARIOS} scenarios at once")
        )
        return draft
    seen: set[str] = set()
    for index, scenario in enumerate(scenarios):
        where = f"scenarios[{index}]"
        if not isinstance(scenario, dict):
            draft.problems.append(Problem(HERE, None, where, "a scenario is a mapping of fields"))
            continue
        scenario_id = scenario.get("id")
        if not isinstance(scenario_id, str) or not scenario_id.strip():
            draft.problems.append(Problem(HERE, None, f"{where}.id", "a scenario needs an id"))
            continue
        if scenario_id in seen:
            draft.problems.append(
                Problem(HERE, None, f"{where}.id", f"'{scenario_id}' is given twice")
            )
            continue
        seen.add(scenario_id)
        try:
            json.dumps(scenario)
        except (TypeError, ValueError):
            draft.problems.append(Problem(HERE, None, where, "not plain data (JSON) "))
            continue
        draft.scenarios.append(scenario)
    for index, scenario_id in enumerate(remove):
        if not isinstance(scenario_id, str) or scenario_id in seen:
            draft.problems.append(
                Problem(HERE, None, f"remove[{index}]", "an id of a scenario not also changed")
            )
        else:
            draft.remove.append(scenario_id)
    for path, text in files.items():
        try:
            normal = checked_path(path, "files")
        except PathRefused as refused:
            draft.problems.append(Problem(HERE, None, "files", str(refused)))
            continue
        if not isinstance(text, str):
            draft.problems.append(Problem(HERE, None, f"files.{normal}", "give the file's text"))
            continue
        draft.files[normal] = text
    return draft


def _scenario_path(path: str, problems: list[Problem]) -> str:
    try:
        normal = checked_path(path, "scenario_file")
    except PathRefused as refused:
        problems.append(Problem(HERE, None, "scenario_file", str(refused)))
        return path
    if _suffix(normal) not in SCENARIO_SUFFIXES:
        problems.append(
            Problem(HERE, None, "scenario_file", "a scenario file ends in .yaml, .yml or .jsonl")
        )
    return normal


def _suffix(path: str) -> str:
    return PurePosixPath(path).suffix


def _update_changes(
    loaded: Benchmark, draft: _Draft, version: str | None, scenario_file: str | None
) -> list[FileChange]:
    root = loaded.root
    texts: dict[str, str | None] = {}  # relative path -> new text

    def current(path: str) -> str | None:
        if path not in texts:
            try:
                files_on_disk.check_on_disk(root, path)
                texts[path] = files_on_disk.read_text(root, path)
            except PathRefused as refused:
                raise ProposalRefused(str(refused)) from None
        return texts[path]

    originals: dict[str, str | None] = {}
    by_file: dict[str, dict[str, dict[str, Any] | None]] = {}
    added: dict[str, list[dict[str, Any]]] = {}
    for scenario in draft.scenarios:
        location = loaded.locations.get(scenario["id"])
        if location is not None:
            by_file.setdefault(_relative(root, location.file), {})[scenario["id"]] = scenario
        else:
            target = scenario_file or _home_for(loaded, scenario, current)
            added.setdefault(target, []).append(scenario)
    for scenario_id in draft.remove:
        location = loaded.locations.get(scenario_id)
        if location is None:
            raise ProposalRefused(f"remove: {loaded.name} has no scenario '{scenario_id}'")
        by_file.setdefault(_relative(root, location.file), {})[scenario_id] = None
    try:
        for path, changed in sorted(by_file.items()):
            text = current(path)
            originals.setdefault(path, text)
            texts[path] = scenario_text.replace(text or "", _suffix(path), changed)
            if not scenario_text.scenario_ids(texts[path] or "", _suffix(path)) and all(
                value is None for value in changed.values()
            ):
                texts[path] = None  # every scenario of the file removed: the file goes
        for path, drafts in sorted(added.items()):
            text = current(path)
            originals.setdefault(path, text)
            suffix = _suffix(path)
            texts[path] = (
                scenario_text.new_file(drafts, suffix)
                if text is None
                else scenario_text.append(text, suffix, drafts)
            )
    except scenario_text.TextRefused as refused:
        raise ProposalRefused(f"{path}: {refused}") from None
    for path, text in sorted(draft.files.items()):
        if path == MANIFEST or path in texts:
            raise ProposalRefused(f"files: '{path}' holds scenarios or the manifest; propose them")
        originals.setdefault(path, current(path))
        texts[path] = text
    edited = any(texts[path] != originals.get(path) for path in texts)
    if version is not None or (edited and current(MANIFEST) is not None):  # a new version
        manifest = current(MANIFEST) or ""
        originals.setdefault(MANIFEST, manifest)
        texts[MANIFEST] = _with_version(
            manifest, str(version) if version is not None else bumped_version(loaded.version)
        )
    changes = [
        FileChange(path, originals.get(path), after)
        for path, after in sorted(texts.items())
        if after != originals.get(path) and path in originals
    ]
    _limits(changes)
    return changes


def _relative(root: Path, file: Path) -> str:
    return file.resolve().relative_to(root).as_posix()


def _home_for(loaded: Benchmark, scenario: dict[str, Any], current: Any) -> str:
    """Where a new scenario goes: the YAML file holding others of its category, else the first
    YAML scenario file, else scenarios/proposed.yaml."""
    category = scenario.get("category", "general")
    candidates: list[str] = []
    for existing in loaded.scenarios:
        path = _relative(loaded.root, loaded.locations[existing.id].file)
        if _suffix(path) not in (".yaml", ".yml") or path in candidates:
            continue
        if existing.category == category:
            candidates.insert(0, path)
        else:
            candidates.append(path)
    for path in candidates:
        if scenario_text.can_append(current(path) or "", _suffix(path)):
            return path
    return DEFAULT_NEW_FILE


def bumped_version(version: str) -> str:
    """The version an accepted change gets when the proposal names none: the last number in it
    plus one ('1.0' -> '1.1', '3' -> '4', 'v2-beta' -> 'v3-beta'), or '.1' added when it holds
    none. So runs before and after it are told apart by version, not only by content."""
    numbers = list(re.finditer(r"\d+", version))
    if not numbers:
        return f"{version}.1"
    last = numbers[-1]
    return f"{version[: last.start()]}{int(last.group()) + 1}{version[last.end() :]}"


def _with_version(manifest: str, version: str) -> str:
    line = f"version: {json.dumps(version)}\n"
    pattern = re.compile(r"^version:.*(?:\n|$)", re.MULTILINE)
    if pattern.search(manifest):
        return pattern.sub(lambda _: line, manifest, count=1)
    return manifest + ("" if manifest.endswith("\n") or not manifest else "\n") + line


def _limits(changes: list[FileChange]) -> None:
    if len(changes) > files_on_disk.MAX_FILES:
        raise ProposalRefused(f"a proposal changes at most {files_on_disk.MAX_FILES} files")
    total = 0
    for change in changes:
        size = len((change.after or "").encode())
        if size > files_on_disk.MAX_FILE_BYTES:
            raise ProposalRefused(
                f"'{change.path}' would be over {files_on_disk.MAX_FILE_BYTES} bytes"
            )
        total += size
    if total > files_on_disk.MAX_TOTAL_BYTES:
        raise ProposalRefused(f"a proposal writes at most {files_on_disk.MAX_TOTAL_BYTES} bytes")


def _expectations(draft: _Draft) -> tuple[set[str], set[str]]:
    return {str(s["id"]) for s in draft.scenarios}, set(draft.remove)


def _validated(
    existing: Path | None,
    root: Path,
    changes: list[FileChange],
    *,
    expect: tuple[set[str], set[str]],
    name: str | None = None,
    lead: str = "",
) -> Benchmark:
    """Load a copy of the benchmark (of `existing`, or a new one) with the changes applied; raise
    ProposalInvalid with the loader's problems, or when a scenario drafted is not where the
    benchmark reads scenarios from."""
    with tempfile.TemporaryDirectory(prefix="benchyard-proposal-") as scratch:
        copy = Path(scratch) / root.name
        if existing is not None:
            shutil.copytree(existing, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        else:
            copy.mkdir()
        try:
            for change in changes:
                files_on_disk.write_text(copy, change.path, change.after)
        except PathRefused as refused:
            raise ProposalRefused(str(refused)) from None
        try:
            loaded = load_benchmark(copy)
        except BenchmarkInvalid as invalid:
            raise ProposalInvalid(invalid.problems, lead) from None
        except BenchmarkNotFound as missing:
            raise ProposalInvalid([Problem(MANIFEST, None, "", str(missing))], lead) from None
    present, gone = expect
    ids = {scenario.id for scenario in loaded.scenarios}
    problems = [
        Problem(
            HERE,
            None,
            "scenarios",
            f"'{sid}' is not read by the benchmark: its file is not "
            "matched by benchmark.yaml's `scenarios` patterns",
        )
        for sid in sorted(present - ids)
    ]
    problems += [
        Problem(HERE, None, "remove", f"'{sid}' is still in the benchmark")
        for sid in sorted(gone & ids)
    ]
    if name is not None and loaded.name != name:
        problems.append(Problem(MANIFEST, None, "name", f"'{loaded.name}' is not '{name}'"))
    if problems:
        raise ProposalInvalid(problems, lead)
    return loaded


def _summary(loaded: Benchmark, draft: _Draft, changes: list[FileChange]) -> dict[str, list[str]]:
    existing = set(loaded.locations)
    return {
        "added": [s["id"] for s in draft.scenarios if s["id"] not in existing],
        "changed": [s["id"] for s in draft.scenarios if s["id"] in existing],
        "removed": list(draft.remove),
        "files": [change.path for change in changes],
    }


def _record(
    store: Store,
    kind: str,
    name: str,
    root: Path,
    base_hash: str | None,
    changes: list[FileChange],
    summary: dict[str, list[str]],
    title: str,
    rationale: str,
    created_by: str,
) -> Proposal:
    proposal = Proposal(
        id=uuid.uuid4().hex[:16],
        kind=kind,
        status=PENDING,
        benchmark_name=name,
        benchmark_root=str(root),
        base_hash=base_hash,
        title=secrets.scrub(" ".join((title or f"{kind} {name}").split()))[:MAX_TITLE],
        rationale=secrets.scrub(rationale or "")[:MAX_RATIONALE],
        changes=changes,
        summary=summary,
        created_at=datetime.now(UTC),
        created_by=(created_by or _who())[:200],
    )
    row = {**vars(proposal), "changes": [_change_row(change) for change in changes]}
    with store.engine.begin() as connection:
        connection.execute(insert(proposals).values(**row))
    return proposal


def _change_row(change: FileChange) -> dict[str, Any]:
    return {
        "path": change.path,
        "before_sha256": change.before_sha256,
        "before": change.before,
        "after": change.after,
    }


# ---- reading -----------------------------------------------------------------------------------


def list_proposals(store: Store, status: str | None = None, limit: int = 50) -> list[Proposal]:
    if status is not None and status not in STATUSES:
        raise ProposalRefused(f"status: one of {', '.join(STATUSES)}, not '{status}'")
    query = select(proposals).order_by(proposals.c.created_at.desc(), proposals.c.id.desc())
    if status is not None:
        query = query.where(proposals.c.status == status)
    with store.engine.connect() as connection:
        rows = connection.execute(query.limit(limit)).all()
    return [_proposal(row) for row in rows]


def get_proposal(store: Store, reference: str) -> Proposal:
    """A proposal by id or unique id prefix."""
    if not reference or not re.fullmatch(r"[0-9a-f]{1,32}", reference):
        raise ProposalRefused(
            f"'{reference}' is not a proposal id (see `benchyard proposals list`)"
        )
    with store.engine.connect() as connection:
        rows = connection.execute(
            select(proposals).where(proposals.c.id.like(reference + "%")).limit(2)
        ).all()
    if not rows:
        raise ProposalRefused(f"no proposal matches '{reference}' (see `benchyard proposals list`)")
    if len(rows) > 1:
        raise ProposalRefused(f"'{reference}' matches several proposals; give more of its id")
    return _proposal(rows[0])


def _proposal(row: Any) -> Proposal:
    values = row._asdict()
    values["changes"] = [
        FileChange(item["path"], item.get("before"), item.get("after"))
        for item in values["changes"]
    ]
    for key in ("created_at", "decided_at"):
        values[key] = moment(values[key])
    return Proposal(**values)


# ---- deciding ----------------------------------------------------------------------------------


def accept(store: Store, reference: str, *, by: str = "", note: str | None = None) -> Proposal:
    """Write the proposal's files and record who accepted it; refused when a file changed since
    the proposal was made, or when the benchmark with the changes would not load any more."""
    proposal = _pending(store, reference)
    root = Path(proposal.benchmark_root)
    if proposal.kind == "create":
        if root.exists() or root.is_symlink():
            raise ProposalRefused(f"{root} exists now: the proposal was to create it")
        if not root.parent.is_dir():
            raise ProposalRefused(f"{root.parent} is not a directory any more")
    elif not (root / MANIFEST).is_file():
        raise ProposalRefused(f"{root} holds no {MANIFEST} any more")
    for change in proposal.changes:
        try:
            checked_path(change.path)
            if proposal.kind == "update":
                files_on_disk.check_on_disk(root, change.path)
            now = files_on_disk.read_text(root, change.path) if proposal.kind == "update" else None
        except PathRefused as refused:
            raise ProposalRefused(str(refused)) from None
        if proposal.kind == "update" and files_on_disk.sha256(now) != change.before_sha256:
            raise ProposalRefused(
                f"{change.path} changed since proposal {proposal.id[:8]} was made: its diff no "
                "longer applies; reject it and ask for a new one"
            )
    expect = (
        set(proposal.summary.get("added", [])) | set(proposal.summary.get("changed", [])),
        set(proposal.summary.get("removed", [])),
    )
    lead = f"proposal {proposal.id[:8]} would not load with the benchmark as it is now:"
    _validated(
        root if proposal.kind == "update" else None,
        root,
        proposal.changes,
        expect=expect,
        lead=lead,
    )
    if proposal.kind == "create":
        root.mkdir()
    try:
        for change in proposal.changes:
            files_on_disk.write_text(root, change.path, change.after)
    except PathRefused as refused:
        raise ProposalRefused(f"{refused}; some of the proposal's files may be written") from None
    result_hash = load_benchmark(root).content_hash
    return _decide(store, proposal, ACCEPTED, by, note, result_hash)


def reject(store: Store, reference: str, *, by: str = "", note: str | None = None) -> Proposal:
    return _decide(store, _pending(store, reference), REJECTED, by, note, None)


def _pending(store: Store, reference: str) -> Proposal:
    proposal = get_proposal(store, reference)
    if proposal.status != PENDING:
        raise ProposalRefused(
            f"proposal {proposal.id[:8]} was {proposal.status} by {proposal.decided_by} "
            f"at {proposal.decided_at:%Y-%m-%d %H:%M} UTC"
        )
    return proposal


def _decide(
    store: Store,
    proposal: Proposal,
    status: str,
    by: str,
    note: str | None,
    result_hash: str | None,
) -> Proposal:
    values = {
        "status": status,
        "decided_at": datetime.now(UTC),
        "decided_by": (by or _who())[:200],
        "decision_note": secrets.scrub(note)[:MAX_RATIONALE] if note else None,
        "result_hash": result_hash,
    }
    with store.engine.begin() as connection:
        changed = connection.execute(
            update(proposals)
            .where(proposals.c.id == proposal.id, proposals.c.status == PENDING)
            .values(**values)
        ).rowcount
    if changed != 1:
        raise ProposalRefused(f"proposal {proposal.id[:8]} was decided by someone else meanwhile")
    return Proposal(**{**vars(proposal), **values})


def _who() -> str:
    from benchyard.runner.provenance import host_name

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{host_name()}"
