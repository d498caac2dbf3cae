"""A store's URL as benchyard prints it (audit artefacts, the Ray driver, errors): the password
hidden, the driver named, without SQLAlchemy; for a URL SQLAlchemy parses, what it printed."""

from __future__ import annotations

import pytest
from sqlalchemy import make_url

from benchyard.store.lite import shown_url, with_driver

PARSED = [
    "sqlite:////tmp/runs/store.db",
    "sqlite:///relative.db",
    "postgresql://root@127.0.0.1/test",
    "postgresql://me:secret@db.example:5432/runs",
    "postgres://me:secret@db/runs",
    "postgresql+psycopg://me:s%40cr%2Fet@db/runs",
    "postgresql://me:secret@127.0.0.1/test?options=-csearch_path%3Dhostile",
    "mysql://me:secret@db/runs",
]


@pytest.mark.parametrize("url", PARSED)
def test_a_url_that_parses_prints_as_sqlalchemy_printed_it(url: str) -> None:
    assert shown_url(url) == make_url(with_driver(url)).render_as_string()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://me:pa/ss@db/runs", "postgresql+psycopg://me:***@db/runs"),  # unescaped /
        ("postgresql://me:secret@db:port/runs", "postgresql+psycopg://me:***@db:port/runs"),
        ("postgresql://me@db/runs?x=a:b@c", "postgresql+psycopg://me@db/runs?x=a:b@c"),
        ("sqlite:////tmp/a:b@c.db", "sqlite:////tmp/a:b@c.db"),
        ("garbage", "garbage"),
    ],
)
def test_the_password_is_hidden_even_where_the_url_does_not_parse(url: str, shown: str) -> None:
    assert shown_url(url) == shown
    assert "secret" not in shown_url(url) and "pa/ss" not in shown_url(url)
