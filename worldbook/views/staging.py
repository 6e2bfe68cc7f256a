"""Uploaded import files kept between the wizard's steps (upload → preview → confirm).

The bytes go to a file under ``var/worldbook-imports/`` named by a random token, and only the
token and the file's SHA-256 go into the user's (server-side) session. The browser never
carries the file back: a hidden field could be swapped for other bytes between the preview
the operator approved and the import. A token is only usable from the session, and tenant,
that staged it; the hash is checked again on read. Files older than a day are swept.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import time
from dataclasses import dataclass

from django.http import Http404

from console.embedded import VAR_DIR

STAGING_DIR = VAR_DIR / "worldbook-imports"
SESSION_KEY = "worldbook_imports"
MAX_PER_SESSION = 5
TTL_SECONDS = 24 * 3600
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,64}$")


@dataclass(frozen=True)
class Staged:
    token: str
    name: str
    sha256: str
    data: bytes


def _directory():
    STAGING_DIR.mkdir(parents=True, exist_ok=True)
    return STAGING_DIR


def sweep(now: float | None = None) -> int:
    """Delete staged files older than the TTL; returns how many were removed."""
    if not STAGING_DIR.exists():
        return 0
    now = time.time() if now is None else now
    removed = 0
    for path in STAGING_DIR.iterdir():
        try:
            if now - path.stat().st_mtime > TTL_SECONDS:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    return removed


def stage(request, name: str, data: bytes) -> str:
    """Keep ``data`` for this session and tenant; returns the token naming it."""
    sweep()
    token = secrets.token_urlsafe(18)
    path = _directory() / token
    with open(path, "wb") as handle:
        handle.write(data)
    os.chmod(path, 0o600)
    staged = dict(request.session.get(SESSION_KEY) or {})
    while len(staged) >= MAX_PER_SESSION:
        oldest = min(staged, key=lambda key: staged[key]["at"])
        _unlink(oldest)
        del staged[oldest]
    staged[token] = {
        "name": name[:300],
        "sha256": hashlib.sha256(data).hexdigest(),
        "tenant": str(request.tenant.pk),
        "at": time.time(),
    }
    request.session[SESSION_KEY] = staged
    return token


def load(request, token: str) -> Staged:
    """The staged file of ``token`` or a 404 (unknown, foreign, expired or altered)."""
    meta = (request.session.get(SESSION_KEY) or {}).get(token)
    if not _TOKEN.match(token) or meta is None or meta.get("tenant") != str(request.tenant.pk):
        raise Http404("this upload is not available; upload the file again")
    try:
        data = (STAGING_DIR / token).read_bytes()
    except FileNotFoundError as exc:
        raise Http404("this upload has expired; upload the file again") from exc
    if hashlib.sha256(data).hexdigest() != meta["sha256"]:
        raise Http404("the staged upload changed on disk; upload the file again")
    return Staged(token, meta["name"], meta["sha256"], data)


def discard(request, token: str) -> None:
    staged = dict(request.session.get(SESSION_KEY) or {})
    if staged.pop(token, None) is not None:
        request.session[SESSION_KEY] = staged
    if _TOKEN.match(token):
        _unlink(token)


def _unlink(token: str) -> None:
    try:
        (STAGING_DIR / token).unlink()
    except FileNotFoundError:
        pass
