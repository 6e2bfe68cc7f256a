"""The session store: Django's database sessions, reading a cookie as a key only when it
could be one."""

from __future__ import annotations

from django.contrib.sessions.backends.base import VALID_KEY_CHARS
from django.contrib.sessions.backends.db import SessionStore as DatabaseStore

_KEY_CHARS = frozenset(VALID_KEY_CHARS)
_KEY_LENGTH = 40  # the session table's key column


class SessionStore(DatabaseStore):
    """Django makes keys of 32 lower-case letters and digits; a cookie of anything else is
    no session. Django looked up any cookie of 8 characters or more, and one holding a NUL
    reached the session table's query, which PostgreSQL refuses: a 500 on every page and a
    failed handshake on every socket, for a cookie anyone can send."""

    def _validate_session_key(self, key):
        return bool(key) and 8 <= len(key) <= _KEY_LENGTH and set(key) <= _KEY_CHARS
