"""Writes of memory entries: add, change, accept, reject, pin, unpin, delete.

Every door comes here. Text is checked for what PostgreSQL can store, scrubbed
(``memory.engine.scrub``) and then held to its kind's length. Adds of one owner run one at a
time (the owner's row is locked), which keeps the cap of entries per owner exact: when it is
reached the owner's entries past their expiry are marked ``expired`` and the oldest
non-active, unpinned entry is recycled, else the add is a 409 ``memory_full``. An active
preference or agreement supersedes the active one of the same owner, scope, character,
conversation and category; a partial unique index guards that rule against any writer that
gets past the lock. Every other change names the entry's current
``version`` and is one conditional UPDATE: a stale version is a 409 ``version_conflict``.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from console.storable import unstorable_at
from memory import owners
from memory.caps import make_room
from memory.configs.selectors import config_for
from memory.engine.entries import (
    SUPERSEDING_KINDS,
    check_content,
    check_fields,
    check_tags,
    check_version,
    content_hash,
    max_chars,
)
from memory.engine.scrub import scrub
from memory.errors import MemoryConflict, MemoryInvalid, MemoryNotFound
from memory.models import EntryOrigin, EntryStatus, MemoryEntry

ADD_ATTEMPTS = 3


def max_entries(tenant) -> int:
    """Entries one owner may hold (seed 004: 200; the tenant's memory settings)."""
    return config_for(tenant).max_entries


def add_entry(
    tenant,
    player,
    *,
    kind,
    scope,
    content,
    category_key="",
    tags=(),
    character_id: str = "",
    session_id: str = "",
    share_in_session: bool = False,
    status: str = EntryStatus.ACTIVE,
    pinned: bool = False,
    origin: str = EntryOrigin.MANUAL,
    expires_at=None,
    source_missing: bool = False,
) -> MemoryEntry:
    """A new entry (``active`` or a ``candidate`` to review)."""
    tags = check_fields(
        kind=kind,
        scope=scope,
        category_key=category_key,
        tags=tags,
        character_id=character_id,
        session_id=session_id,
    )
    if status not in (EntryStatus.ACTIVE, EntryStatus.CANDIDATE):
        raise MemoryInvalid("invalid_status", "a new entry is active or a candidate")
    if origin not in EntryOrigin.values:
        raise ValueError(f"unknown origin {origin!r}")
    text = clean_content(kind, content)
    fields = {
        "tenant": tenant,
        "player": player,
        "kind": kind,
        "scope": scope,
        "category_key": category_key,
        "character_id": character_id,
        "session_id": session_id,
    }
    with transaction.atomic():
        if player is not None:
            owners.lock(player.pk)
        _make_room(tenant, player)
        owners.touch(tenant, player.pk if player is not None else None)
        return _superseding(
            fields if status == EntryStatus.ACTIVE else None,
            lambda replaced: MemoryEntry.objects.create(
                **fields,
                content=text,
                content_hash=content_hash(text),
                tags=clean_tags(tags),
                share_in_session=bool(share_in_session),
                status=status,
                pinned=bool(pinned),
                origin=origin,
                expires_at=expires_at,
                source_missing=bool(source_missing),
                supersedes_id=replaced,
            ),
        )


def clean_content(kind: str, content) -> str:
    """The text to store: storable, scrubbed, within the kind's length."""
    if isinstance(content, str):
        if len(content) > 4 * max_chars(kind):  # far too long to be worth scrubbing first
            check_content(kind, content)
        found = unstorable_at(content, "content")
        if found is not None:
            raise MemoryInvalid("invalid_text", found[1], {"field": "content"})
        content = scrub(content).text
    return check_content(kind, content)


def clean_tags(tags: tuple[str, ...]) -> list[str]:
    """Checked tags as stored: scrubbed like the content (a tag is text a person wrote)."""
    return list(dict.fromkeys(scrub(tag).text for tag in tags))


def _make_room(tenant, player) -> None:
    owned = MemoryEntry.objects.filter(tenant=tenant, player=player)
    expire_due(owned)
    cap = max_entries(tenant)
    full = MemoryConflict(
        "memory_full",
        f"this player holds {cap} entries, all active or pinned: delete one first",
        {"max_entries": cap},
    )
    make_room(owned, owned.exclude(status=EntryStatus.ACTIVE).filter(pinned=False), cap, full)


def expire_due(rows) -> int:
    """Active entries of ``rows`` past their ``expires_at`` become ``expired`` (one more
    version): no longer active, so an unpinned one is a spare slot at the cap."""
    return rows.filter(status=EntryStatus.ACTIVE, expires_at__lte=timezone.now()).update(
        status=EntryStatus.EXPIRED, version=F("version") + 1, updated_at=timezone.now()
    )


def _superseding(fields: dict | None, write):
    """``write(replaced id or None)`` in a savepoint, after superseding the active entry of
    ``fields``' category (None: nothing to supersede). Another writer's new active entry of
    the category breaks the unique index: then supersede that one too and write again."""
    for _ in range(ADD_ATTEMPTS):
        try:
            with transaction.atomic():
                return write(_supersede(fields) if fields is not None else None)
        except IntegrityError:
            continue
    raise MemoryConflict("memory_busy", "the category is being written; retry")


def _supersede(fields: dict) -> str | None:
    """Mark the active entry this one replaces (same owner, scope, character, conversation
    and category) superseded; its id, or None."""
    if fields["kind"] not in SUPERSEDING_KINDS or not fields["category_key"]:
        return None
    same = {name: value for name, value in fields.items() if name != "kind"}
    rows = MemoryEntry.objects.filter(**same, kind__in=SUPERSEDING_KINDS, status=EntryStatus.ACTIVE)
    old = rows.values_list("pk", flat=True).first()
    if old is None:
        return None
    rows.filter(pk=old).update(
        status=EntryStatus.SUPERSEDED, version=F("version") + 1, updated_at=timezone.now()
    )
    return old


def _fields_of(entry: MemoryEntry) -> dict:
    """What identifies an entry's category slot (see :func:`_supersede`)."""
    return {
        "tenant": entry.tenant,
        "player": entry.player,
        "kind": entry.kind,
        "scope": entry.scope,
        "category_key": entry.category_key,
        "character_id": entry.character_id,
        "session_id": entry.session_id,
    }


def update_entry(
    tenant,
    entry: MemoryEntry,
    version,
    *,
    content=None,
    category_key=None,
    tags=None,
    expires_at=...,
    share_in_session=None,
) -> MemoryEntry:
    """Change an entry's text, category, tags, expiry or sharing (compare-and-set)."""
    changes: dict = {}
    if content is not None:
        text = clean_content(entry.kind, content)
        changes.update(content=text, content_hash=content_hash(text))
    if category_key is not None:
        check_fields(
            kind=entry.kind,
            scope=entry.scope,
            category_key=category_key,
            tags=(),
            character_id=entry.character_id,
            session_id=entry.session_id,
        )
        changes["category_key"] = category_key
    if tags is not None:
        changes["tags"] = clean_tags(check_tags(tags))
    if expires_at is not ...:
        changes["expires_at"] = expires_at
    if share_in_session is not None:
        changes["share_in_session"] = bool(share_in_session)
    try:
        with transaction.atomic():
            return _compare_and_set(tenant, entry, version, epoch=True, **changes)
    except IntegrityError as exc:
        raise MemoryConflict(
            "category_taken",
            "another active entry holds this category here: change or delete that one",
            {"category_key": category_key},
        ) from exc


def accept(tenant, entry: MemoryEntry, version) -> MemoryEntry:
    """A candidate becomes active, superseding the active one of its category."""
    _expect_status(entry, EntryStatus.CANDIDATE, "accept")
    with transaction.atomic():
        return _superseding(
            _fields_of(entry),
            lambda replaced: _compare_and_set(
                tenant, entry, version, status=EntryStatus.ACTIVE, supersedes_id=replaced
            ),
        )


def reject(tenant, entry: MemoryEntry, version) -> MemoryEntry:
    """A candidate is set aside (kept, never selected)."""
    _expect_status(entry, EntryStatus.CANDIDATE, "reject")
    return _compare_and_set(tenant, entry, version, status=EntryStatus.REJECTED)


def set_pinned(tenant, entry: MemoryEntry, version, pinned: bool) -> MemoryEntry:
    """Pinned entries come first within their scope and are never recycled."""
    return _compare_and_set(tenant, entry, version, pinned=pinned)


def delete_entry(tenant, entry: MemoryEntry, version) -> None:
    """Delete the entry (its evidence and handoff references go with it)."""
    expected = _version(version)
    with transaction.atomic():
        rows = MemoryEntry.objects.filter(tenant=tenant, pk=entry.pk, version=expected)
        deleted, _ = rows.delete()
        if not deleted:
            raise _stale(tenant, entry, expected)
        owners.touch(tenant, entry.player_id, epoch=True)


def forget_entries(tenant, player, entry_ids) -> int:
    """Delete those of the player's entries that are still there, whatever their version
    (a forget is not an edit: there is nothing to lose by racing one); how many went."""
    with transaction.atomic():
        _deleted, by_model = MemoryEntry.objects.filter(
            tenant=tenant, player=player, pk__in=list(entry_ids)
        ).delete()
        count = by_model.get(MemoryEntry._meta.label, 0)
        if count:
            owners.touch(tenant, player.pk, epoch=True)
    return count


def _expect_status(entry: MemoryEntry, status: str, action: str) -> None:
    if entry.status != status:
        raise MemoryConflict(
            "invalid_state",
            f"only a {status} can be {action}ed; this entry is {entry.status}",
            {"status": entry.status, "version": entry.version},
        )


def _compare_and_set(
    tenant, entry: MemoryEntry, version, *, epoch: bool = False, **changes
) -> MemoryEntry:
    """One conditional UPDATE on the version; the owner's counters move with it (``epoch``
    for a person's edit of the content)."""
    expected = _version(version)
    with transaction.atomic():
        changed = MemoryEntry.objects.filter(tenant=tenant, pk=entry.pk, version=expected).update(
            **changes, version=F("version") + 1, updated_at=timezone.now()
        )
        if not changed:
            raise _stale(tenant, entry, expected)
        owners.touch(tenant, entry.player_id, epoch=epoch)
    return MemoryEntry.objects.get(pk=entry.pk)


def _version(value) -> int:
    return check_version(value, "entry", " (an integer ≥ 1)")


def _stale(tenant, entry: MemoryEntry, expected: int) -> Exception:
    current = (
        MemoryEntry.objects.filter(tenant=tenant, pk=entry.pk)
        .values_list("version", flat=True)
        .first()
    )
    if current is None:
        return MemoryNotFound(message="this memory entry no longer exists")
    return MemoryConflict(
        "version_conflict",
        f"the entry is at version {current}, not {expected}: read it again",
        {"current_version": current, "expected_version": expected},
    )


def mark_used(entry_ids: list[str]) -> None:
    """Record that a turn's prompt carried these entries (``last_used_at``), in one UPDATE."""
    if entry_ids:
        MemoryEntry.objects.filter(pk__in=entry_ids).update(last_used_at=timezone.now())
