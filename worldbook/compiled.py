"""Prepared revisions (``engine.prepared``): a bounded cache in each process, shared through
files between the processes of a machine, and through the database between machines.

Reading a revision for selection goes memory → file → stored form → content:

1. this process's LRU, bounded by the number of entries it holds
   (``WORLDBOOK_CACHE_ENTRIES``, 120,000 by default: 24 books of 5,000 entries);
2. the file another process (normally the Celery worker, on publish or on a binding change:
   ``tasks.warm_revisions``) wrote to ``WORLDBOOK_COMPILED_DIR``, named by book, revision,
   content hash and format, so a file is either exactly right or not looked at;
3. the prepared form the request that published the revision stored
   (``models.PreparedRevision``: a book's newest revision, no block's tokens counted), when
   it is of this revision, content and format: what a turn reads when no worker got to the
   revision yet, on any machine;
4. the revision's content, prepared inline without its token counts (a selection counts the
   few blocks it needs).

After 3 or 4 the worker is asked to write the file for the others: writing it means
counting every block's tokens, which a turn should not wait for.

A file that cannot be read (another format, truncated, tampered with) is prepared again and
replaced; a directory that cannot be written costs the sharing, never the turn.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction
from kombu.exceptions import OperationalError
from redis.exceptions import RedisError

from console import task_send
from worldbook.engine import prepared
from worldbook.engine.entry import compact_stored
from worldbook.engine.gc_pause import paused_gc
from worldbook.engine.schema import BookIn
from worldbook.engine.selection import LoadedBook
from worldbook.models import BookRevision, PreparedRevision
from worldbook.tokenizer import CL100K

log = logging.getLogger(__name__)

_lock = threading.Lock()
_memory: OrderedDict[tuple[str, int, str], LoadedBook] = OrderedDict()
_held = 0  # entries in _memory
# One preparation of a revision at a time in this process (a second turn waits for the
# first): a lock per stripe of revisions.
_STRIPES = tuple(threading.Lock() for _ in range(64))
_FORMAT_TAG = hashlib.sha256(prepared.FORMAT.encode()).hexdigest()[:12]


def get(book_id: str, revision: int, content_hash: str) -> LoadedBook:
    """The prepared revision, from the first place that has it (see the module doc)."""
    key = (book_id, revision, content_hash)
    found = _cached(key)
    if found is not None:
        return found
    with _STRIPES[hash(key) % len(_STRIPES)]:
        found = _cached(key)
        if found is None:
            found = _read(key)
            if found is None:
                found = _stored(key) or _build(key)
                _ask_worker(key)
            _remember(key, found)
    return found


def store(tenant, book_id: str, revision: int, content_hash: str, entries) -> None:
    """Prepare a revision just published from its validated ``entries`` and store it as
    the book's prepared form (unless a newer revision's is stored already), keeping it in
    this process too. What publishing pays so that no turn has to prepare it; best effort:
    a failure is logged, never raised (the publish is committed)."""
    key = (book_id, revision, content_hash)
    try:
        with paused_gc():
            book = prepared.prepare(book_id, revision, content_hash, entries)
            blob = prepared.dumps(book, CL100K, counted=False)
        with connection.cursor() as cursor:
            cursor.execute(
                _STORE_SQL,
                [book_id, tenant.pk, revision, content_hash, prepared.FORMAT, blob],
            )
    except Exception:  # noqa: BLE001 - the publish stands; a turn prepares it instead
        log.exception("prepared worldbook %s:%s not stored", book_id, revision)
        return
    _remember(key, book)


_TABLE = PreparedRevision._meta.db_table
# The newest revision wins, whichever of two publishes stores last.
_STORE_SQL = f"""
    INSERT INTO {_TABLE} (book_id, tenant_id, revision, content_hash, format, blob, updated_at)
    VALUES (%s, %s, %s, %s, %s, %s, now())
    ON CONFLICT (book_id) DO UPDATE SET
        revision = EXCLUDED.revision, content_hash = EXCLUDED.content_hash,
        format = EXCLUDED.format, blob = EXCLUDED.blob, updated_at = EXCLUDED.updated_at
    WHERE {_TABLE}.revision <= EXCLUDED.revision
"""
_STORED_SQL = f"""
    SELECT blob FROM {_TABLE}
    WHERE book_id = %s AND revision = %s AND content_hash = %s AND format = %s
"""


def _stored(key) -> LoadedBook | None:
    """The revision's stored prepared form, or None (none, another revision or format, or
    one that does not load)."""
    book_id, revision, content_hash = key
    with connection.cursor() as cursor:
        cursor.execute(_STORED_SQL, [book_id, revision, content_hash, prepared.FORMAT])
        row = cursor.fetchone()
    if row is None:
        return None
    try:
        with paused_gc():
            book = prepared.loads(row[0])
    except Exception as exc:  # any form that does not load is prepared from the content
        log.warning("stored prepared worldbook %s:%s rejected (%s)", book_id, revision, exc)
        return None
    return book if (book.book_id, book.revision, book.content_hash) == key else None


def warm(book_id: str, revision: int, content_hash: str) -> str:
    """Make sure the shared file exists: ``present``, or ``written`` after preparing it.
    What the worker runs after a publish; it keeps nothing in its own memory."""
    key = (book_id, revision, content_hash)
    if _read(key) is not None:
        return "present"
    _write(key, _cached(key) or _stored(key) or _build(key))
    return "written"


def resident() -> dict[str, int]:
    """What this process holds: revisions and entries."""
    with _lock:
        return {"revisions": len(_memory), "entries": _held}


def forget(*keys: tuple[str, int, str]) -> None:
    """Drop this process's prepared revisions, or only those of ``keys`` (tests and
    benchmarks of a cold process)."""
    global _held
    with _lock:
        for key in keys or list(_memory):
            gone = _memory.pop(key, None)
            if gone is not None:
                _held -= len(gone.entries)


def path_for(book_id: str, revision: int, content_hash: str) -> Path:
    return _path((book_id, revision, content_hash))


def _path(key: tuple[str, int, str]) -> Path:
    book_id, revision, content_hash = key
    name = f"{book_id}-{revision}-{content_hash[:32]}-{_FORMAT_TAG}.bin"
    return Path(settings.WORLDBOOK_COMPILED_DIR) / name


def _cached(key) -> LoadedBook | None:
    with _lock:
        found = _memory.get(key)
        if found is not None:
            _memory.move_to_end(key)
        return found


def _remember(key, book: LoadedBook) -> None:
    global _held
    limit = max(int(settings.WORLDBOOK_CACHE_ENTRIES), 1)
    with _lock:
        if key in _memory:
            return
        _memory[key] = book
        _held += len(book.entries)
        # Keep at least the newest revision, however large.
        while _held > limit and len(_memory) > 1:
            _, gone = _memory.popitem(last=False)
            _held -= len(gone.entries)


def _read(key) -> LoadedBook | None:
    path = _path(key)
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("prepared worldbook %s unreadable: %s", path.name, exc)
        return None
    try:
        book = prepared.loads(blob)
    except Exception as exc:  # any file that does not load is prepared again
        log.warning("prepared worldbook %s rejected (%s); preparing again", path.name, exc)
        return None
    if (book.book_id, book.revision, book.content_hash) != key:
        log.warning("prepared worldbook %s holds another revision; preparing again", path.name)
        return None
    try:
        os.utime(path)  # in use: not pruned (see _prune)
    except OSError:
        pass
    return book


def _build(key) -> LoadedBook:
    """The revision prepared from its stored content: read as stored, since it was
    validated when it was published (validated again only if another version stored it).
    The collector stays paused from the read on: the decoded content is a burst of a few
    hundred thousand objects, which would otherwise bring on full collections of a heap
    that may hold 20 prepared revisions (see engine.gc_pause)."""
    book_id, revision, content_hash = key
    with paused_gc():
        content = BookRevision.objects.values_list("content", flat=True).get(
            book_id=book_id, revision=revision
        )
        entries = compact_stored(content["entries"])
        if entries is None:
            entries = BookIn.model_validate(content).entries
        return prepared.prepare(book_id, revision, content_hash, entries)


def queue_warm(refs: list[tuple[str, int, str]]) -> None:
    """After the transaction commits, ask the worker to prepare these ``(book id, revision,
    content hash)`` revisions, so no turn prepares them inline. Best effort: a broker that
    cannot take the task costs the first turn the preparation, never the write."""
    if not refs:
        return

    def send() -> None:
        try:
            task_send.named("worldbook.warm_revisions").delay([list(ref) for ref in refs])
        except (OperationalError, RedisError, RuntimeError) as exc:
            log.warning("could not queue worldbook warming: %s", exc)

    transaction.on_commit(send)


def _ask_worker(key) -> None:
    """Have the worker write the shared file of a revision this process prepared inline."""
    queue_warm([key])


def _write(key, book: LoadedBook) -> None:
    path = _path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        blob = prepared.dumps(book, CL100K)
        # Written beside, then renamed: a reader sees the whole file or none.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(blob)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        _prune(path)
    except OSError as exc:
        log.warning("prepared worldbook %s not shared: %s", path.name, exc)


# A book's files that no process has read or written for this long are deleted when another
# revision of the book is written: old revisions, and files of another format.
PRUNE_AFTER_S = 7 * 24 * 3600


def _prune(written: Path) -> None:
    book_id = written.name[:36]
    cutoff = time.time() - PRUNE_AFTER_S
    for other in written.parent.glob(f"{book_id}-*.bin"):
        try:
            if other != written and other.stat().st_mtime < cutoff:
                other.unlink()
        except OSError:
            continue
