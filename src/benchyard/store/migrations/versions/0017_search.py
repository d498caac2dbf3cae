"""Full-text search over a run's attempts (store/search.py): `search_attempts` holds the words of
each final attempt's scenario id, answer, cause and check reasons (an FTS5 table in SQLite, a
tsvector with a GIN index in PostgreSQL), `search_runs` how many attempts of each run it holds.

Revision ID: 0017
Revises: 0016
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "search_runs",
        sa.Column("run_id", sa.String(32), primary_key=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE TABLE search_attempts (attempt_id VARCHAR(32) PRIMARY KEY REFERENCES "
            "attempts (id) ON DELETE CASCADE, run_id VARCHAR(32) NOT NULL, body TSVECTOR NOT NULL)"
        )
        op.execute("CREATE INDEX ix_search_attempts_run ON search_attempts (run_id)")
        op.execute("CREATE INDEX ix_search_attempts_body ON search_attempts USING GIN (body)")
    else:
        op.execute(
            "CREATE VIRTUAL TABLE search_attempts USING fts5("
            "body, run_id, attempt_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 0')"
        )


def downgrade() -> None:
    op.execute("DROP TABLE search_attempts")
    op.drop_table("search_runs")
