"""An incident as a scenario declares it (`environment: {type: sre, ...}`): the application, the
seed, the faults and the alerts known to fire. The simulator (`world.py`) builds the cluster from
it; the agent never sees it, only what the tools answer about the cluster."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchyard.sre.apps import APPS
from benchyard.sre.matching import EntitySpec

Mechanism = Literal[
    "feature-flag",
    "chaos",
    "bad-image",
    "bad-arch-image",
    "bad-command",
    "bad-env",
    "bad-hpa",
    "unschedulable",
    "init-container",
    "oom",
    "service-port",
    "service-selector",
    "service-deleted",
    "network-policy",
    "readiness-probe",
    "dns-policy",
    "credentials",
    "scaled-to-zero",
    "mesh-policy",
    "api-surge",
    "no-limits",
    "config-change",
]
MECHANISMS: tuple[str, ...] = Mechanism.__args__  # type: ignore[attr-defined]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FaultSpec(_Model):
    """One fault: how it breaks things (`mechanism`), the object it lives in (`target`), the
    service whose behaviour it changes first (`service`; default: the target's) and the
    mechanism's own settings (`params`, see docs/sre.md)."""

    mechanism: Mechanism
    target: EntitySpec
    service: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    started_min_ago: float | None = Field(
        default=None,
        gt=0,
        le=50,
        description="When it began, in minutes before now (default: from the seed).",
    )


class AlertSpec(_Model):
    """An alert known to fire during the incident (ITBench's v1 `alerts`), on a service (or on
    the whole namespace when `service` is not given)."""

    service: str | None = Field(default=None, min_length=1)
    alert: str = Field(min_length=1, max_length=100)


class NoiseSpec(_Model):
    red_herrings: int = Field(default=3, ge=0, le=6, description="Unrelated warnings and changes.")
    noisy_neighbour: bool = Field(default=True, description="A busy service that is not at fault.")


class IncidentSpec(_Model):
    """The `sre` environment's parameters."""

    app: str
    seed: int = Field(ge=0)
    faults: list[FaultSpec] = Field(
        default_factory=list, description="Empty: a false alarm (alerts fire, nothing is broken)."
    )
    alerts: list[AlertSpec] = Field(default_factory=list)
    noise: NoiseSpec = Field(default_factory=NoiseSpec)
    autoscaling: bool = Field(default=False, description="The application runs with HPAs.")

    @field_validator("app")
    @classmethod
    def _known_app(cls, app: str) -> str:
        if app not in APPS:
            raise ValueError(f"unknown app '{app}' (apps: {', '.join(sorted(APPS))})")
        return app

    @model_validator(mode="after")
    def _services_exist(self) -> IncidentSpec:
        app = APPS[self.app]
        known = {service.name for service in app.services}
        for index, fault in enumerate(self.faults):
            if fault.service is not None and fault.service not in known:
                raise ValueError(
                    f"faults[{index}].service: no service '{fault.service}' in {self.app} "
                    f"(services: {', '.join(sorted(known))})"
                )
        for index, alert in enumerate(self.alerts):
            if alert.service is not None and alert.service not in known:
                raise ValueError(
                    f"alerts[{index}].service: no service '{alert.service}' in {self.app}"
                )
        return self
