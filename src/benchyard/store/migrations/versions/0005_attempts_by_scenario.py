"""Attempts indexed by run, finality, scenario and epoch: a page of a run's final attempts and one
scenario's tries are read from the index, flat in the size of the run (the web UI at 100,000
attempts). It replaces the index on (run_id, superseded), its prefix.

Revision ID: 0005
Revises: 0004
"""

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_attempts_run_final", "attempts", ["run_id", "superseded", "scenario_id", "epoch"]
    )
    op.drop_index("ix_attempts_run", table_name="attempts")


def downgrade() -> None:
    op.create_index("ix_attempts_run", "attempts", ["run_id", "superseded"])
    op.drop_index("ix_attempts_run_final", table_name="attempts")
