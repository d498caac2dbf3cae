"""Stuck attempts: `attempt_queue.stuck_since`, set when the holding worker's watchdog finds an
attempt that its cancellation did not end; `runs`, `show` and the web UI count them, and another
worker takes them back (runner/watchdog.py).

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("attempt_queue") as batch:
        batch.add_column(sa.Column("stuck_since", sa.DateTime(timezone=True)))


def downgrade() -> None:
    with op.batch_alter_table("attempt_queue") as batch:
        batch.drop_column("stuck_since")
