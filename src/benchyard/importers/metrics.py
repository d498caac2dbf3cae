"""A format's own figures in a run's report (IFEval's prompt- and instruction-level accuracy in
both modes, GSM8K's answer rule, Harbor's named rewards), computed by the importer that the run's
recorded provenance names, and the lines that show them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from benchyard.errors import BenchyardError

if TYPE_CHECKING:
    from benchyard.store.records import AttemptRecord

PROVENANCE_SETTING = "benchmark_provenance"
"""The key of a run's settings that records its benchmark's provenance."""


def run_settings_provenance(provenance: dict[str, Any] | None) -> dict[str, Any]:
    """What a run records in its settings about its benchmark's origin (nothing when native)."""
    return {PROVENANCE_SETTING: provenance} if provenance else {}


def format_metrics(
    provenance: dict[str, Any] | None, attempts: Sequence[AttemptRecord]
) -> dict[str, Any] | None:
    """The importer's figures for these attempts, with the format's name and version; None for a
    benchmark of benchyard's own format (or a format whose plugin is not installed here)."""
    if not isinstance(provenance, dict) or not isinstance(provenance.get("format"), str):
        return None
    from benchyard.importers.registry import get_importer

    try:
        importer = get_importer(provenance["format"])
    except BenchyardError:
        return None
    options = provenance.get("options")
    figures = importer.metrics(attempts, options if isinstance(options, dict) else {})
    return {
        "format": importer.name,
        "format_version": str(provenance.get("format_version", importer.format_version)),
        "source_sha256": provenance.get("source_sha256"),
        **figures,
    }


def metric_lines(metrics: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(label, text) pairs for the table and Markdown reports."""
    if not metrics:
        return []
    lines = [
        (
            "imported",
            f"{metrics['format']} format {metrics['format_version']}, source "
            f"{str(metrics.get('source_sha256') or '?')[:19]}",
        )
    ]
    if "answer_rule" in metrics:
        lines.append(("answer rule", str(metrics["answer_rule"])))
    for mode in ("strict", "loose"):
        figures = metrics.get(mode)
        if isinstance(figures, dict):
            lines.append(
                (
                    f"IFEval {mode}",
                    f"prompt-level {figures['prompt_level']:.2%} ({figures['prompt_level_raw']}), "
                    f"instruction-level {figures['instruction_level']:.2%} "
                    f"({figures['instruction_level_raw']})",
                )
            )
    rewards = metrics.get("rewards")
    if isinstance(rewards, dict):
        for name, figures in rewards.items():
            lines.append(
                (
                    f"reward {name}",
                    f"mean {figures['mean']:.3f} over {figures['attempts']} attempts",
                )
            )
    return lines
