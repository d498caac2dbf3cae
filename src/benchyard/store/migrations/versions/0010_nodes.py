"""Where attempts run: each try keeps the machine (and the Ray node) it ran on, and a claimed
attempt the node it is running on (docs/distributed.md).

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        batch.add_column(sa.Column("node", sa.String(200)))
    with op.batch_alter_table("attempt_queue") as batch:
        batch.add_column(sa.Column("node", sa.String(200)))


def downgrade() -> None:
    with op.batch_alter_table("attempt_queue") as batch:
        batch.drop_column("node")
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("node")
