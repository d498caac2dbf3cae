"""Runs of another kind: `benchyard speed` records a run of kind `speed`, whose measured calls
are rows of `speed_samples` instead of attempts. Every earlier run is of kind `benchmark`.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(
            sa.Column("kind", sa.String(16), nullable=False, server_default="benchmark")
        )
    op.create_table(
        "speed_samples",
        sa.Column(
            "run_id",
            sa.String(32),
            sa.ForeignKey("runs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("phase", sa.String(16), nullable=False),
        sa.Column("label", sa.String(40), nullable=False),
        sa.Column("prompt_words", sa.Integer, nullable=False),
        sa.Column("prompt_key", sa.String(40), nullable=False),
        sa.Column("concurrency", sa.Integer, nullable=False),
        sa.Column("started_sec", sa.Float, nullable=False),
        sa.Column("sent_sec", sa.Float),
        sa.Column("total_sec", sa.Float),
        sa.Column("ttft_sec", sa.Float),
        sa.Column("reasoning_ttft_sec", sa.Float),
        sa.Column("content_ttft_sec", sa.Float),
        sa.Column("last_token_sec", sa.Float),
        sa.Column("token_chunks", sa.Integer, nullable=False),
        sa.Column("tokens_in", sa.Integer),
        sa.Column("tokens_out", sa.Integer),
        sa.Column("reasoning_tokens", sa.Integer),
        sa.Column("usage_source", sa.String(16), nullable=False),
        sa.Column("retries", sa.Integer, nullable=False),
        sa.Column("error", sa.Text),
    )


def downgrade() -> None:
    op.drop_table("speed_samples")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("kind")
