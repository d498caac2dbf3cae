"""`benchyard speed`: how fast an OpenAI-compatible endpoint serves a model, measured honestly.

Time to first token (split into reasoning and answer when the model streams reasoning), decode
and prefill speed by prompt length with mean, median, p95 and standard deviation, a concurrency
sweep with aggregate throughput, and plausibility rules that flag figures that cannot be true
(docs/speed.md). A speed run is a run of kind `speed` in the store: `runs`, `show`, `report` and
`compare` read it; `report` puts speed next to ability per category for several models."""

from benchyard.speed.api import measure_speed, resolve_speed_agent
from benchyard.speed.models import SpeedOptions, SpeedReport
from benchyard.speed.report import build_speed_report

__all__ = [
    "SpeedOptions",
    "SpeedReport",
    "build_speed_report",
    "measure_speed",
    "resolve_speed_agent",
]
