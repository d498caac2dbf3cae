"""Attempts keep the judge model's tokens and cost apart from the agent's.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        batch.add_column(
            sa.Column("judge_tokens_in", sa.Integer, nullable=False, server_default="0")
        )
        batch.add_column(
            sa.Column("judge_tokens_out", sa.Integer, nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("judge_cost_usd", sa.Float))


def downgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("judge_cost_usd")
        batch.drop_column("judge_tokens_out")
        batch.drop_column("judge_tokens_in")
