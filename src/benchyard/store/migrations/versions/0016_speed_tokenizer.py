"""Speed samples carry the reply's tokens by the serving model's own tokenizer, where its server
has one (POST /tokenize: llama.cpp, vLLM; llama-cpp-python's /extras/tokenize/count): the
endpoint's usage is checked against it (speed/tokenizer.py, speed/plausibility.py).

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("speed_samples") as batch:
        batch.add_column(sa.Column("tokenizer_tokens", sa.Integer()))


def downgrade() -> None:
    with op.batch_alter_table("speed_samples") as batch:
        batch.drop_column("tokenizer_tokens")
