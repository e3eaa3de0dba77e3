"""The test cluster is a real Postgres server, and `database_url` gives each test its own
database, on SQLite or on that server."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from tests.postgres import Cluster


def test_the_cluster_is_a_real_server_with_a_database_per_test(postgres: Cluster) -> None:
    first, second = postgres.new_database(), postgres.new_database()
    assert first != second
    engine = sa.create_engine(first.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with engine.connect() as conn:
            assert str(conn.execute(sa.text("select version()")).scalar()).startswith("PostgreSQL")
    finally:
        engine.dispose()


def test_database_url_reaches_either_kind(database_url: str) -> None:
    url = database_url.replace("postgresql://", "postgresql+psycopg://")
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("create table t (n integer)"))
            conn.execute(sa.text("insert into t values (1)"))
            assert conn.execute(sa.text("select count(*) from t")).scalar() == 1
    finally:
        engine.dispose()
