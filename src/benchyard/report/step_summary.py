"""Markdown fit for a GitHub Actions step summary (`>> "$GITHUB_STEP_SUMMARY"`), which takes at
most 1 MiB per step: a longer report keeps its head (the summary table, categories) and is cut at
a line, saying how much was left out and where the whole of it is."""

from __future__ import annotations

STEP_SUMMARY_BYTES = 1024 * 1024
MARGIN = 4096  # room for the note and whatever the step appends


def fit_step_summary(text: str, run_ids: list[str], limit: int = STEP_SUMMARY_BYTES) -> str:
    encoded = text.encode()
    if len(encoded) <= limit - MARGIN:
        return text
    kept = encoded[: limit - MARGIN].decode(errors="ignore")
    kept = kept[: kept.rfind("\n") + 1]
    left_out = text[len(kept) :].count("\n")
    runs = " ".join(run_ids)
    return (
        kept
        + f"\n**… {left_out} more lines left out to fit a step summary (1 MiB): the whole report "
        f"is `benchyard report {runs} --format md -o report.md` (or `--format json`).**\n"
    )
