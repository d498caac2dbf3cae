"""Outputs stored once: an attempt's stdout, stderr and answer in one zlib-compressed blob, the
answer and the trajectory referring to stdout instead of copying it (store/outputs.py). Rows
written before keep their text columns, which readers still take; a downgrade puts the blob's
text back in them.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

from benchyard.store import outputs as outputs_codec

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        batch.add_column(sa.Column("outputs", sa.LargeBinary))


def downgrade() -> None:
    connection = op.get_bind()
    table = sa.table(
        "attempts",
        sa.column("id", sa.String),
        sa.column("outputs", sa.LargeBinary),
        sa.column("stdout", sa.Text),
        sa.column("stderr", sa.Text),
        sa.column("answer", sa.Text),
    )
    stored = connection.execute(
        sa.select(table.c.id, table.c.outputs).where(table.c.outputs.is_not(None))
    ).all()
    for attempt_id, blob in stored:
        outputs = outputs_codec.decode(blob)
        connection.execute(
            table.update()
            .where(table.c.id == attempt_id)
            .values(stdout=outputs.stdout, stderr=outputs.stderr, answer=outputs.answer)
        )
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("outputs")
