"""Speed samples carry what benchyard counted itself: the reply's characters, words and words on
topic (to bound the endpoint's token usage and tell an answer from garbage), the client's
event-loop lag during the call, and how many stalled takes of it were discarded (speed/).

Written beside a 0013 (per-scenario hashes) that was committed as 0015, after this one.

Revision ID: 0014
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("speed_samples") as batch:
        batch.add_column(sa.Column("reply_chars", sa.Integer()))
        batch.add_column(sa.Column("reply_words", sa.Integer()))
        batch.add_column(sa.Column("expected_words", sa.Integer()))
        batch.add_column(sa.Column("client_lag_sec", sa.Float()))
        batch.add_column(sa.Column("retakes", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("speed_samples") as batch:
        for name in ("retakes", "client_lag_sec", "expected_words", "reply_words", "reply_chars"):
            batch.drop_column(name)
