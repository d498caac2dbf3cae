"""Runs, attempts (one row per try) and check results.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("benchmark_name", sa.String(200), nullable=False),
        sa.Column("benchmark_version", sa.String(100), nullable=False),
        sa.Column("benchmark_hash", sa.String(80), nullable=False),
        sa.Column("benchmark_path", sa.Text, nullable=False),
        sa.Column("agent_name", sa.String(200), nullable=False),
        sa.Column("agent_config", sa.JSON, nullable=False),
        sa.Column("agent_commit", sa.String(64)),
        sa.Column("agent_dirty", sa.Boolean),
        sa.Column("agent_repo", sa.Text),
        sa.Column("settings", sa.JSON, nullable=False),
        sa.Column("benchyard_version", sa.String(40), nullable=False),
        sa.Column("host", sa.String(200), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.Column("parent_run_id", sa.String(32), sa.ForeignKey("runs.id")),
        sa.Column("planned_attempts", sa.Integer, nullable=False),
    )
    op.create_index("ix_runs_started_at", "runs", ["started_at"])
    op.create_table(
        "attempts",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "run_id", sa.String(32), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("scenario_id", sa.String(200), nullable=False),
        sa.Column("category", sa.String(200), nullable=False),
        sa.Column("epoch", sa.Integer, nullable=False),
        sa.Column("try_number", sa.Integer, nullable=False),
        sa.Column("superseded", sa.Boolean, nullable=False),
        sa.Column("verdict", sa.String(16), nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("cause", sa.Text),
        sa.Column("failure_kind", sa.String(40)),
        sa.Column("negative", sa.Boolean, nullable=False),
        sa.Column("answer", sa.Text),
        sa.Column("stdout", sa.Text),
        sa.Column("stderr", sa.Text),
        sa.Column("stdout_dropped_bytes", sa.Integer, nullable=False),
        sa.Column("stderr_dropped_bytes", sa.Integer, nullable=False),
        sa.Column("trajectory", sa.LargeBinary),
        sa.Column("turns", sa.Integer, nullable=False),
        sa.Column("hit_max_turns", sa.Boolean, nullable=False),
        sa.Column("tokens_in", sa.Integer, nullable=False),
        sa.Column("tokens_out", sa.Integer, nullable=False),
        sa.Column("cost_usd", sa.Float),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("duration_sec", sa.Float, nullable=False),
    )
    op.create_index("ix_attempts_run", "attempts", ["run_id", "superseded"])
    op.create_table(
        "check_results",
        sa.Column(
            "attempt_id",
            sa.String(32),
            sa.ForeignKey("attempts.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("check_type", sa.String(100), nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("passed", sa.Boolean, nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("weight", sa.Float, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("check_results")
    op.drop_table("attempts")
    op.drop_table("runs")
