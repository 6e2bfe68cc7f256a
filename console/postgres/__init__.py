"""Django's PostgreSQL backend with the connection pool's check of ``console.pool_check``
(Django offers only psycopg's own check, a round trip on every checkout)."""
