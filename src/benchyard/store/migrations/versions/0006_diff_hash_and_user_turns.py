"""Runs keep a hash of the agent's uncommitted diff beside its dirty flag; attempts keep how many
user turns their stimulus scripted, so that review flags compare the agent's own turns.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("agent_diff_hash", sa.String(80)))
    with op.batch_alter_table("attempts") as batch:
        batch.add_column(sa.Column("user_turns", sa.Integer, nullable=False, server_default="1"))


def downgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("user_turns")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("agent_diff_hash")
