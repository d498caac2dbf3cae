"""Check results keep a check's structured figures (the root_cause check's precision, recall,
F1 and false positives), for reports and the audit artefact.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("check_results") as batch:
        batch.add_column(sa.Column("details", sa.JSON(none_as_null=True)))


def downgrade() -> None:
    with op.batch_alter_table("check_results") as batch:
        batch.drop_column("details")
