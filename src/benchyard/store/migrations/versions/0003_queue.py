"""The durable queue: queued attempts with leases, resumes recorded on runs, rescored runs, and
what rescoring and review flags need (every turn's answer, thresholds).

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("status_reason", sa.Text))
        # No foreign key: adding one would make SQLite rebuild `runs`, cascading into attempts.
        batch.add_column(sa.Column("rescored_from", sa.String(32)))
    with op.batch_alter_table("attempts") as batch:
        batch.add_column(sa.Column("answers", sa.JSON(none_as_null=True)))
        batch.add_column(sa.Column("threshold", sa.Float))
    with op.batch_alter_table("check_results") as batch:
        batch.add_column(sa.Column("threshold", sa.Float))
    op.create_table(
        "attempt_queue",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "run_id", sa.String(32), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("scenario_id", sa.String(200), nullable=False),
        sa.Column("epoch", sa.Integer, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("tries", sa.Integer, nullable=False),
        sa.Column("claims", sa.Integer, nullable=False),
        sa.Column("worker", sa.String(120)),
        sa.Column("worker_node", sa.String(200)),
        sa.Column("worker_pid", sa.Integer),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True)),
        sa.UniqueConstraint("run_id", "scenario_id", "epoch", name="uq_attempt_queue_attempt"),
    )
    op.create_index("ix_attempt_queue_state", "attempt_queue", ["state", "id"])
    op.create_index("ix_attempt_queue_worker", "attempt_queue", ["worker"])
    op.create_table(
        "run_resumes",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "run_id", sa.String(32), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("lost_worker", sa.String(120), nullable=False),
        sa.Column("cause", sa.Text, nullable=False),
        sa.Column("by_worker", sa.String(120), nullable=False),
        sa.Column("kept", sa.Integer, nullable=False),
        sa.Column("requeued", sa.Integer, nullable=False),
    )
    op.create_index("ix_run_resumes_run", "run_resumes", ["run_id"])


def downgrade() -> None:
    op.drop_table("run_resumes")
    op.drop_table("attempt_queue")
    with op.batch_alter_table("check_results") as batch:
        batch.drop_column("threshold")
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("threshold")
        batch.drop_column("answers")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("rescored_from")
        batch.drop_column("status_reason")
