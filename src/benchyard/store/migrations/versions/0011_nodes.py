"""Where attempts run: each try keeps the machine (and the Ray node) it ran on, and a claimed
attempt the node it is running on (docs/distributed.md).

Revision ID: 0011
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0005"
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
