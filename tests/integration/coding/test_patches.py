"""The agent's change as a patch, with real git: new, deleted, binary and non-UTF-8 files; caches
and the agent's own .git left out; a patch over the cap refused with the files it touched; every
patch applies to a fresh copy of the pristine files and reproduces the workdir."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

import pytest

from benchyard.runner import patches
from benchyard.runner.patches import GitFailed, apply_patch, take_snapshot

PRISTINE = {
    "src/app.py": "def main():\n    return 1\n",
    "README.md": "hello\n",
    "old.txt": "to be deleted\n",
    "logo.bin": "\x00\x01\x02",
}


def _tree(root: Path, files: dict[str, str]) -> Path:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="latin-1")
    return root


def _same_tree(left: Path, right: Path) -> bool:
    compared = filecmp.dircmp(left, right, ignore=["__pycache__", ".git"])
    if compared.left_only or compared.right_only or compared.diff_files or compared.funny_files:
        return False
    return all(_same_tree(left / name, right / name) for name in compared.common_dirs)


async def test_every_kind_of_change_round_trips(tmp_path: Path) -> None:
    workdir = _tree(tmp_path / "work", PRISTINE)
    snapshot = await take_snapshot(workdir, tmp_path / "git")
    (workdir / "src" / "app.py").write_text("def main():\n    return 2\n")
    (workdir / "old.txt").unlink()
    (workdir / "logo.bin").write_bytes(bytes(range(256)))
    (workdir / "src" / "new module.py").write_text("X = 'ü'\n")
    (workdir / "latin.txt").write_bytes("café\n".encode("latin-1"))
    (workdir / "__pycache__").mkdir()
    (workdir / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\x00cache")
    (workdir / ".git").mkdir()
    (workdir / ".git" / "config").write_text("[core]\n")

    patch = await snapshot.diff()

    assert patch.error is None
    assert {(c.path, c.status) for c in patch.changes} == {
        ("src/app.py", "modified"),
        ("old.txt", "deleted"),
        ("logo.bin", "modified"),
        ("src/new module.py", "added"),
        ("latin.txt", "added"),
    }
    assert "GIT binary patch" in patch.text  # the binary file, and the latin-1 text with it
    assert "__pycache__" not in patch.text and ".git/config" not in patch.text
    fresh = _tree(tmp_path / "fresh", PRISTINE)
    await apply_patch(patch.text, fresh)
    assert _same_tree(workdir, fresh)


async def test_an_unchanged_workdir_gives_an_empty_patch(tmp_path: Path) -> None:
    workdir = _tree(tmp_path / "work", PRISTINE)
    snapshot = await take_snapshot(workdir, tmp_path / "git")
    patch = await snapshot.diff()
    assert (patch.text, patch.changes, patch.error) == ("", (), None)
    assert patch.stored() is None


async def test_a_patch_over_the_cap_is_refused_and_its_files_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(patches, "PATCH_CAP_BYTES", 1000)
    workdir = _tree(tmp_path / "work", PRISTINE)
    snapshot = await take_snapshot(workdir, tmp_path / "git")
    (workdir / "big.txt").write_text("line\n" * 1000)
    patch = await snapshot.diff()
    assert patch.text == ""
    assert patch.error is not None and patch.error.endswith("bytes, over 1000")
    assert patch.stored() == (
        f"# patch not kept: {patch.error}\n# files changed:\n#   added big.txt (+1000 -0)\n"
    )


async def test_a_patch_that_does_not_apply(tmp_path: Path) -> None:
    target = _tree(tmp_path / "target", {"a.txt": "other\n"})
    stale = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n"
    with pytest.raises(GitFailed, match="patch does not apply"):
        await apply_patch(stale, target)


async def test_a_patch_cannot_write_through_a_link_out_of_its_directory(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = tmp_path / "target"
    target.mkdir()
    (target / "escape").symlink_to(outside)
    sneaky = "--- /dev/null\n+++ b/escape/owned.txt\n@@ -0,0 +1 @@\n+owned\n"
    with pytest.raises(GitFailed):
        await apply_patch(sneaky, target)
    assert not (outside / "owned.txt").exists()
    shutil.rmtree(target)
