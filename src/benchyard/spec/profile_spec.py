"""The model of a benchmark's `profiles:` (spec/profiles.py chooses the scenarios a profile
names): apart from the choosing, which reads scenarios, so that the scenario models can hold it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

PROFILE_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


class ProfileSpec(BaseModel):
    """A named subset of a benchmark's scenarios: `ids` (in that order), else the scenarios that
    match every filter, at most `per_category` of each category, spread evenly."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = ""
    ids: list[str] = Field(default_factory=list, description="These scenarios, and no others.")
    filters: list[str] = Field(
        default_factory=list, description="As `--filter`: category:X, tag:X, id:GLOB, ..."
    )
    per_category: int | None = Field(
        default=None, ge=1, description="At most this many scenarios of each category."
    )
