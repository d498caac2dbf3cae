"""Deciding whether to deploy an agent, with evidence: the audit artefact of a run
(`benchyard report RUN --format audit`) and the deploy gate over it (`benchyard gate`)."""

from benchyard.audit.build import build_audit
from benchyard.audit.gate import Decision, GatePolicy, decide, load_policy
from benchyard.audit.model import AuditArtefact

__all__ = ["AuditArtefact", "Decision", "GatePolicy", "build_audit", "decide", "load_policy"]
