"""`benchyard init`: a starter benchyard.yaml, a minimal example agent, and `.benchyard/` (where
the store lives) in .gitignore. Existing files are kept; what was done is returned as a model
(report/outputs.py's InitOutput: what `init --format json` prints)."""

from __future__ import annotations

from pathlib import Path

from benchyard.report.outputs import InitOutput, WrittenFile

GITIGNORE_LINE = ".benchyard/"
NEXT_STEP = "benchyard run starter --agent example   (or --agent oracle)"


def init_project(directory: Path) -> InitOutput:
    from benchyard.config import CONFIG_FILE, STARTER_AGENT, STARTER_CONFIG

    directory.mkdir(parents=True, exist_ok=True)
    files = []
    for name, content in ((CONFIG_FILE, STARTER_CONFIG), ("agent.py", STARTER_AGENT)):
        target = directory / name
        if target.exists():
            files.append(WrittenFile(path=str(target), action="kept"))
        else:
            target.write_text(content, encoding="utf-8")
            files.append(WrittenFile(path=str(target), action="wrote"))
    files.append(_ignore_store(directory / ".gitignore"))
    return InitOutput(directory=str(directory), files=files, next=NEXT_STEP)


def _ignore_store(gitignore: Path) -> WrittenFile:
    """Add `.benchyard/` (the default store and the demo's) to .gitignore, once."""
    if not gitignore.exists():
        gitignore.write_text(GITIGNORE_LINE + "\n", encoding="utf-8")
        return WrittenFile(path=str(gitignore), action="wrote")
    text = gitignore.read_text(encoding="utf-8")
    patterns = {line.strip().lstrip("/").rstrip("/") for line in text.splitlines()}
    if GITIGNORE_LINE.rstrip("/") in patterns:
        return WrittenFile(path=str(gitignore), action="kept")
    separator = "" if not text or text.endswith("\n") else "\n"
    gitignore.write_text(text + separator + GITIGNORE_LINE + "\n", encoding="utf-8")
    return WrittenFile(path=str(gitignore), action="added")


def init_lines(done: InitOutput) -> list[str]:
    """What `benchyard init` prints: a line per file, then the next step."""
    lines = []
    for file in done.files:
        if not file.path.endswith(".gitignore"):
            lines.append(f"{'kept existing' if file.action == 'kept' else 'wrote'} {file.path}")
        elif file.action == "wrote":
            lines.append(f"wrote {file.path} (ignores {GITIGNORE_LINE}, where the store lives)")
        elif file.action == "kept":
            lines.append(f"kept existing {file.path} (it already ignores {GITIGNORE_LINE})")
        else:
            lines.append(f"added {GITIGNORE_LINE} to {file.path} (where the store lives)")
    return [*lines, f"next: {NEXT_STEP}"]
