"""Attempts keep the agent's change to its workdir as a compressed patch.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        batch.add_column(sa.Column("patch", sa.LargeBinary))


def downgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("patch")
