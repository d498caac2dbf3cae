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
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=False),
    Column("duration_sec", Float, nullable=False),
    Index("ix_attempts_run", "run_id", "superseded"),
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
)
