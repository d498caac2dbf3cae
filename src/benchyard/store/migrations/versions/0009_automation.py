"""Automation: proposals of benchmark changes awaiting a person's decision, schedules and their
firings (each claimed once, whatever the number of workers), and webhook deliveries with every try
and its response.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_AT = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "proposals",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("benchmark_name", sa.String(200), nullable=False),
        sa.Column("benchmark_root", sa.Text, nullable=False),
        sa.Column("base_hash", sa.String(80)),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("rationale", sa.Text, nullable=False),
        sa.Column("changes", sa.JSON, nullable=False),
        sa.Column("summary", sa.JSON, nullable=False),
        sa.Column("created_at", _AT, nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("decided_at", _AT),
        sa.Column("decided_by", sa.String(200)),
        sa.Column("decision_note", sa.Text),
        sa.Column("result_hash", sa.String(80)),
    )
    op.create_index("ix_proposals_status", "proposals", ["status", "created_at"])
    op.create_table(
        "schedules",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("benchmark", sa.Text, nullable=False),
        sa.Column("agent_name", sa.String(200), nullable=False),
        sa.Column("agent_config", sa.JSON, nullable=False),
        sa.Column("agent_repo", sa.Text),
        sa.Column("settings", sa.JSON, nullable=False),
        sa.Column("cron", sa.String(200), nullable=False),
        sa.Column("missed", sa.String(8), nullable=False),
        sa.Column("grace_sec", sa.Float, nullable=False),
        sa.Column("created_at", _AT, nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("next_due_at", _AT, nullable=False),
    )
    op.create_index("ix_schedules_next_due", "schedules", ["next_due_at"])
    op.create_table(
        "schedule_firings",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "schedule_id",
            sa.String(32),
            sa.ForeignKey("schedules.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("due_at", _AT, nullable=False),
        sa.Column("handled_at", _AT, nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("missed", sa.Integer, nullable=False),
        sa.Column("run_id", sa.String(32)),
        sa.Column("baseline_run_id", sa.String(32)),
        sa.Column("regression", sa.Boolean),
        sa.Column("detail", sa.Text),
        sa.UniqueConstraint("schedule_id", "due_at", name="uq_schedule_firings_due"),
    )
    op.create_index("ix_schedule_firings_run", "schedule_firings", ["run_id"])
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("webhook", sa.String(200), nullable=False),
        sa.Column("event", sa.String(40), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("run_id", sa.String(32)),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("tries", sa.Integer, nullable=False),
        sa.Column("next_try_at", _AT),
        sa.Column("created_at", _AT, nullable=False),
        sa.Column("finished_at", _AT),
        sa.Column("last_status", sa.Integer),
    )
    op.create_index("ix_webhook_deliveries_due", "webhook_deliveries", ["state", "next_try_at"])
    op.create_table(
        "webhook_tries",
        sa.Column(
            "delivery_id",
            sa.String(32),
            sa.ForeignKey("webhook_deliveries.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("try_number", sa.Integer, primary_key=True),
        sa.Column("at", _AT, nullable=False),
        sa.Column("status_code", sa.Integer),
        sa.Column("response", sa.Text),
        sa.Column("error", sa.Text),
        sa.Column("duration_sec", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("webhook_tries")
    op.drop_index("ix_webhook_deliveries_due", table_name="webhook_deliveries")
    op.drop_table("webhook_deliveries")
    op.drop_index("ix_schedule_firings_run", table_name="schedule_firings")
    op.drop_table("schedule_firings")
    op.drop_index("ix_schedules_next_due", table_name="schedules")
    op.drop_table("schedules")
    op.drop_index("ix_proposals_status", table_name="proposals")
    op.drop_table("proposals")
