"""The store's tables (SQLAlchemy Core). Change them only together with a new Alembic migration."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

runs = Table(
    "runs",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("status", String(16), nullable=False),
    Column("benchmark_name", String(200), nullable=False),
    Column("benchmark_version", String(100), nullable=False),
    Column("benchmark_hash", String(80), nullable=False),
    Column("benchmark_path", Text, nullable=False),
    Column("agent_name", String(200), nullable=False),
    Column("agent_config", JSON, nullable=False),
    Column("agent_commit", String(64)),
    Column("agent_dirty", Boolean),
    Column("agent_repo", Text),
    Column("settings", JSON, nullable=False),
    Column("benchyard_version", String(40), nullable=False),
    Column("host", String(200), nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True)),
    Column("parent_run_id", String(32), ForeignKey("runs.id")),
    Column("planned_attempts", Integer, nullable=False),
    Column("status_reason", Text),  # why a run failed or was cancelled
    Column("rescored_from", String(32)),  # the run whose recorded outputs this one re-graded
    Index("ix_runs_started_at", "started_at"),
)

attempts = Table(
    "attempts",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("run_id", String(32), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("scenario_id", String(200), nullable=False),
    Column("category", String(200), nullable=False),
    Column("epoch", Integer, nullable=False),
    Column("try_number", Integer, nullable=False),
    Column("superseded", Boolean, nullable=False),
    Column("verdict", String(16), nullable=False),
    Column("score", Float, nullable=False),
    Column("cause", Text),
    Column("failure_kind", String(40)),
    Column("negative", Boolean, nullable=False),
    Column("answer", Text),
    Column("stdout", Text),
    Column("stderr", Text),
    Column("stdout_dropped_bytes", Integer, nullable=False),
    Column("stderr_dropped_bytes", Integer, nullable=False),
    Column("trajectory", LargeBinary),
    Column("patch", LargeBinary),  # zlib-compressed unified diff of the workdir
    Column("turns", Integer, nullable=False),
    Column("hit_max_turns", Boolean, nullable=False),
    Column("tokens_in", Integer, nullable=False),
    Column("tokens_out", Integer, nullable=False),
    Column("cost_usd", Float),
    Column("judge_tokens_in", Integer, nullable=False, server_default="0"),
    Column("judge_tokens_out", Integer, nullable=False, server_default="0"),
    Column("judge_cost_usd", Float),  # the judge model's calls, costed apart from the agent
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=False),
    Column("duration_sec", Float, nullable=False),
    Column("answers", JSON(none_as_null=True)),  # every turn's answer of multi-turn attempts
    Column("threshold", Float),  # the scenario's pass threshold on the score, if any
    Index("ix_attempts_run_final", "run_id", "superseded", "scenario_id", "epoch"),
)

check_results = Table(
    "check_results",
    metadata,
    Column(
        "attempt_id", String(32), ForeignKey("attempts.id", ondelete="CASCADE"), primary_key=True
    ),
    Column("position", Integer, primary_key=True),
    Column("check_type", String(100), nullable=False),
    Column("label", String(200), nullable=False),
    Column("passed", Boolean, nullable=False),
    Column("score", Float, nullable=False),
    Column("weight", Float, nullable=False),
    Column("reason", Text, nullable=False),
    Column("threshold", Float),  # the check's own pass threshold on its score, if any
)

attempt_queue = Table(
    "attempt_queue",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(32), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("scenario_id", String(200), nullable=False),
    Column("epoch", Integer, nullable=False),
    Column("state", String(16), nullable=False),  # queued | claimed | done | cancelled
    Column("tries", Integer, nullable=False),  # tries written so far
    Column("claims", Integer, nullable=False),  # times a worker claimed it
    Column("worker", String(120)),  # the worker holding the claim
    Column("worker_node", String(200)),  # host, boot and pid namespace of that worker
    Column("worker_pid", Integer),
    Column("lease_expires_at", DateTime(timezone=True)),
    UniqueConstraint("run_id", "scenario_id", "epoch", name="uq_attempt_queue_attempt"),
    Index("ix_attempt_queue_state", "state", "id"),
    Index("ix_attempt_queue_worker", "worker"),
)

run_resumes = Table(
    "run_resumes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(32), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("action", String(16), nullable=False),  # requeued | failed
    Column("lost_worker", String(120), nullable=False),
    Column("cause", Text, nullable=False),
    Column("by_worker", String(120), nullable=False),
    Column("kept", Integer, nullable=False),  # finished attempts kept
    Column("requeued", Integer, nullable=False),  # unfinished attempts put back (or cancelled)
    Index("ix_run_resumes_run", "run_id"),
)
