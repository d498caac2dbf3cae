"""Versions per scenario: `attempts.scenario_hash`, the scenario's own content hash when the
attempt ran (spec/hashing.py). compare and history pair only the scenarios whose hash is the same
in both runs and list the changed ones; rows from before it have none, and the run's whole
benchmark hash decides for them, as before.

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        batch.add_column(sa.Column("scenario_hash", sa.String(71)))


def downgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("scenario_hash")
