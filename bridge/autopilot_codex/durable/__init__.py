"""Durable execution: the runs' progress kept in a DBOS system database (SQLite by default,
Postgres when shared). Nothing on a hook's import path may import this package: DBOS pulls in
SQLAlchemy, which the hooks' budget cannot pay.
"""
