"""The database backend (``ENGINE = "console.postgres"``): Django's PostgreSQL backend whose
connection pool checks a connection with ``console.pool_check.check``."""

from __future__ import annotations

from django.db.backends.postgresql import base

from console import pool_check


class DatabaseWrapper(base.DatabaseWrapper):
    @property
    def pool(self):
        pool = super().pool
        # psycopg_pool keeps its check in ``_check``; Django builds the pool with psycopg's
        # own (CONN_HEALTH_CHECKS) or none, and refuses a ``check`` among the pool options.
        if pool is not None and pool._check is not pool_check.check:
            pool._check = pool_check.check
        return pool
