"""SWE-bench instances (JSONL: `instance_id`, `repo`, `base_commit`, `patch`, `test_patch`,
`problem_statement`, `FAIL_TO_PASS`, `PASS_TO_PASS`): one coding scenario per instance, graded by
the `swebench` check, which evaluates the agent's patch as SWE-bench's harness does
(formats/swebench/evaluation.py) in a fresh container of the instance's image.

The image is one the user names (`--option image='sweb.eval.x86_64.{instance_id}'`, the default;
`{instance_id}`, `{repo}` and `{version}` are filled in), or built locally from a Dockerfile
(`--option dockerfile=PATH`: its directory is the build context, the instance's fields are build
arguments). The agent works on the repository at `base_commit`, taken from a clone under
`--option repos=DIR` (`DIR/<owner>__<name>`); the gold `patch` is the reference change, so `verify`
grades it. `benchyard grade-patches` grades a predictions file without any agent.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import Field

from benchyard.formats.swebench.evaluation import DEFAULT_TEST_COMMAND, Instance
from benchyard.importers.base import BaseImporter, Imported, ImportOptions, ProblemList
from benchyard.importers.source import Fields, Record, read_scenarios
from benchyard.untrusted import path_name_problem

DEFAULT_IMAGE = "sweb.eval.x86_64.{instance_id}"


class SweBenchOptions(ImportOptions):
    image: str = Field(default=DEFAULT_IMAGE, description="The instance image's name (a template).")
    dockerfile: str | None = Field(
        default=None, description="A Dockerfile benchyard builds per instance instead."
    )
    repos: str | None = Field(
        default=None, description="A directory of clones (<owner>__<name>) for the agent's workdir."
    )
    repo_dir: str = Field(default="/testbed", description="The repository's path in the image.")
    test_command: str = Field(
        default=DEFAULT_TEST_COMMAND,
        description="The test command, run in repo_dir; {test_files} is the test patch's files.",
    )
    timeout_sec: float = Field(default=1800.0, gt=0)


def image_for(options: SweBenchOptions, data: dict[str, Any], source: Path) -> str:
    """The instance's image: built from the Dockerfile when one is given (once per content)."""
    if options.dockerfile is not None:
        from benchyard.formats.containers import build_image, context_tag

        dockerfile = Path(options.dockerfile)
        dockerfile = dockerfile if dockerfile.is_absolute() else source.parent / dockerfile
        args = {
            "INSTANCE_ID": str(data["instance_id"]),
            "REPO": str(data.get("repo", "")),
            "BASE_COMMIT": str(data.get("base_commit", "")),
        }
        tag = context_tag("benchyard-swebench", dockerfile.parent, dockerfile)
        tag = f"{tag}-{_tag_part(args['INSTANCE_ID'])}"
        return build_image(dockerfile.parent, tag, dockerfile=dockerfile, build_args=args)
    return options.image.format(
        instance_id=data["instance_id"], repo=data.get("repo", ""), version=data.get("version", "")
    )


def _tag_part(text: str) -> str:
    return "".join(c if c.isalnum() or c in "_.-" else "_" for c in text.lower())[:60]


def instance_of(
    record: Record,
    options: SweBenchOptions,
    problems: ProblemList,
    source: Path,
    *,
    build: bool = True,
) -> Instance | None:
    fields = Fields(record, problems)
    instance_id = fields.get("instance_id", str)
    base_commit = fields.get("base_commit", str)
    test_patch = fields.get("test_patch", str)
    fail_to_pass = fields.text_list("FAIL_TO_PASS")
    pass_to_pass = fields.text_list("PASS_TO_PASS")
    if not fields.ok:
        return None
    assert instance_id and base_commit and test_patch is not None
    assert fail_to_pass is not None and pass_to_pass is not None
    image = image_for(options, record.data, source) if build else options.image
    return Instance(
        instance_id=instance_id,
        image=image,
        base_commit=base_commit,
        test_patch=test_patch,
        fail_to_pass=fail_to_pass,
        pass_to_pass=pass_to_pass,
        repo_dir=options.repo_dir,
        test_command=options.test_command,
        timeout_sec=options.timeout_sec,
    )


def repository_files(clone: Path, commit: str) -> dict[str, bytes]:
    """The files of `clone` at `commit` (git archive), by path."""
    result = subprocess.run(
        ["git", "-C", str(clone), "archive", "--format=tar", commit],
        capture_output=True,
        check=False,
        timeout=600,
    )
    if result.returncode != 0:
        raise ValueError(result.stderr.decode(errors="replace").strip()[-300:])
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(result.stdout)) as archive:
        for member in archive.getmembers():
            if member.isfile():
                extracted = archive.extractfile(member)
                if extracted is not None:
                    files[member.name] = extracted.read()
    return files


class SweBenchImporter(BaseImporter):
    name = "swe-bench"
    format_version = "1"
    summary = "SWE-bench instances JSONL: FAIL_TO_PASS/PASS_TO_PASS in the instance's image"
    source_kind = "file"
    options = SweBenchOptions

    def read(self, source: Path, options: Any) -> Imported:
        assert isinstance(options, SweBenchOptions)
        files: dict[str, bytes] = {}
        scenario = partial(scenario_data, source=source, options=options, files=files)
        return Imported(
            name="swe-bench",
            version="1",
            description="SWE-bench: repository issues, resolved when FAIL_TO_PASS and "
            "PASS_TO_PASS tests pass in the instance's image, as the official harness grades.",
            scenarios=read_scenarios(source, "swe-bench", scenario),
            files=files,
        )


def scenario_data(
    fields: Fields, source: Path, options: SweBenchOptions, files: dict[str, bytes]
) -> dict[str, Any] | None:
    """One instance's scenario, or None when its fields have problems; the files it names (the
    repository at its base commit, the gold patch) are added to `files`."""
    instance = instance_of(fields.record, options, fields.problems, source, build=False)
    statement = fields.get("problem_statement", str)
    gold = fields.get("patch", str, required=False)
    repo = fields.get("repo", str, required=options.repos is not None)
    if instance is not None:
        _check_path_name(fields, "instance_id", instance.instance_id)
    if repo:
        _check_path_name(fields, "repo", repo.replace("/", "__"))
    if instance is None or not fields.ok:
        return None
    assert statement is not None
    record = fields.record
    base = f"fixtures/{instance.instance_id}"
    check: dict[str, Any] = {
        "type": "swebench",
        "instance_id": instance.instance_id,
        "image": image_for(options, record.data, source)
        if options.dockerfile
        else instance.image.format(
            instance_id=instance.instance_id,
            repo=record.data.get("repo", ""),
            version=record.data.get("version", ""),
        ),
        "base_commit": instance.base_commit,
        "test_patch": instance.test_patch,
        "fail_to_pass": instance.fail_to_pass,
        "pass_to_pass": instance.pass_to_pass,
    }
    for key in ("repo_dir", "test_command", "timeout_sec"):
        if getattr(options, key) != SweBenchOptions.model_fields[key].default:
            check[key] = getattr(options, key)
    data: dict[str, Any] = {
        "id": instance.instance_id,
        "category": str(record.data.get("repo", "swe-bench")).replace("/", "__"),
        "tags": ["swe-bench", "coding"],
        "stimulus": {"task": statement},
        "checks": [check],
        "limits": {"timeout_sec": 3600},
    }
    if options.repos is not None and repo:
        clone = Path(options.repos)
        clone = (clone if clone.is_absolute() else source.parent / clone) / repo.replace("/", "__")
        try:
            for relative, content in repository_files(clone, instance.base_commit).items():
                files[f"{base}/repo/{relative}"] = content
        except (OSError, ValueError, subprocess.SubprocessError) as error:
            fields.problem("base_commit", f"cannot take {clone} at it: {error}")
            return None
        data["fixtures"] = {"files": [{"src": f"{base}/repo", "dest": "."}]}
        if gold:
            files[f"{base}/gold.patch"] = gold.encode()
            data["reference_change"] = {"patch": f"{base}/gold.patch"}
    return data


def _check_path_name(fields: Fields, name: str, value: str) -> None:
    """A field that names a directory (the instance's fixtures, the repository's clone) must be a
    plain name: a problem, before anything is written, when it would lead elsewhere."""
    problem = path_name_problem(value)
    if problem is not None:
        fields.problem(name, f"{value!r} {problem}: it names a directory, so it must be a name")


IMPORTER = SweBenchImporter()
