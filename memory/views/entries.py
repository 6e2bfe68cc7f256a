"""Console pages of memory entries: the tenant's entries (filtered, paginated), one entry
(edit, pin, accept or reject, delete, its evidence), and what the Actor would see of a
player's preferences next turn.

Viewers read every page; every write is an operator's and goes through
``memory.entries.services`` with the entry's ``version`` (compare-and-set). A refused write
is a flash message and its 4xx status (a stale version a 409 that keeps the typed text) and
changes nothing. The review queue of candidates is ``memory.views.queue``.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from urllib.parse import urlencode

from django import forms
from django.contrib import messages as flash
from django.core.paginator import Paginator
from django.db import transaction
from django.shortcuts import redirect, render

from console.access import console_view
from console.failures import DomainError
from console.models import Player, Role
from console.owners import character_model, conversation_model, owners
from console.scoping import get_scoped_or_404, scoped
from console.storable import unstorable_at
from memory.configs.selectors import config_for
from memory.engine import preferences
from memory.entries import selectors as entry_reads
from memory.entries import services as entry_writes
from memory.errors import MemoryInvalid
from memory.models import EntryKind, EntryScope, EntryStatus, MemoryEntry
from memory.views.queue import (
    entry_or_404,
    evidences,
    posted_version,
    refused,
    with_evidence,
)

PAGE_SIZE = 50
DONE = {
    "save": "Saved.",
    "pin": "Pinned.",
    "unpin": "Unpinned.",
    "accept": "Accepted: the entry is active.",
    "reject": "Rejected.",
}
ENTRY_ACTIONS = tuple(DONE)


def _choices(values) -> list[tuple[str, str]]:
    return [("", "any"), *values.choices]


class EntryFilters(forms.Form):
    player = forms.IntegerField(required=False, min_value=1)
    kind = forms.ChoiceField(required=False, choices=_choices(EntryKind))
    scope = forms.ChoiceField(required=False, choices=_choices(EntryScope))
    status = forms.ChoiceField(required=False, choices=_choices(EntryStatus))
    q = forms.CharField(required=False, max_length=200, label="Search")


@console_view()
def memory_entries(request):
    """The tenant's entries, newest change first; a foreign player filter is a 404."""
    filters = EntryFilters(request.GET)
    filters.is_valid()
    for field, problems in filters.errors.items():
        flash.error(request, f"Filter “{field}” ignored: {' '.join(problems)}")
    chosen = {name: value for name, value in filters.cleaned_data.items() if value}
    player = None
    rows = MemoryEntry.objects.filter(tenant=request.tenant)
    if "player" in chosen:
        player = get_scoped_or_404(Player, request.tenant, pk=chosen["player"])
        rows = entry_reads.owner_entries(request.tenant, player)
    for name in ("kind", "scope", "status"):
        if name in chosen:
            rows = rows.filter(**{name: chosen[name]})
    if "q" in chosen:
        rows = rows.filter(content__icontains=chosen["q"])
    rows = rows.select_related("player").order_by("-updated_at", "id")
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "page": page,
        "entries": owners().name_rows(request.tenant, page),
        "filters": filters,
        "player": player,
        "query": urlencode(chosen),
        "candidates": MemoryEntry.objects.filter(
            tenant=request.tenant, status=EntryStatus.CANDIDATE
        ).count(),
    }
    return render(request, "roleplay/memory/entries.html", context)


def _tags(text: str) -> list[str]:
    return [tag.strip() for tag in text.split(",") if tag.strip()]


def _entry_page(request, entry, *, status=200, draft=None, confirm_delete=False):
    """The entry page; after a refused write the entry is read again (its current version
    goes in the form) and ``draft`` keeps what the operator typed."""
    entry = _entry_with_evidence(request, entry.pk)
    text = {
        "content": entry.content,
        "category_key": entry.category_key,
        "tags": ", ".join(entry.tags or ()),
    } | (draft or {})
    context = {
        "entry": owners().name_rows(request.tenant, [entry])[0],
        "text": text,
        "evidence": owners().name_evidence(request.tenant, evidences(entry)),
        "confirm_delete": confirm_delete,
    }
    return render(request, "roleplay/memory/entry.html", context, status=status)


def _entry_with_evidence(request, entry_id) -> MemoryEntry:
    rows = with_evidence(MemoryEntry.objects.select_related("player"))
    return get_scoped_or_404(rows, request.tenant, pk=entry_id)


def _write(request, entry, action: str, version):
    tenant = request.tenant
    if action == "save":
        found = unstorable_at(request.POST.get("tags", ""), "tags")  # the service checks the rest
        if found is not None:
            raise MemoryInvalid("invalid_text", found[1], {"field": "tags"})
        return entry_writes.update_entry(
            tenant,
            entry,
            version,
            content=request.POST.get("content", ""),
            category_key=request.POST.get("category_key", "").strip(),
            tags=_tags(request.POST.get("tags", "")),
        )
    if action in ("pin", "unpin"):
        return entry_writes.set_pinned(tenant, entry, version, action == "pin")
    return getattr(entry_writes, action)(tenant, entry, version)  # accept, reject


@console_view()
def memory_entry(request, entry_id):
    """One entry; operators post ``action`` save (content, category, tags), pin, unpin,
    accept or reject, each with the version they read."""
    entry = entry_or_404(request, entry_id)
    if request.method != "POST":
        return _entry_page(request, entry)
    action = request.POST.get("action", "")
    draft = None
    if action == "save":
        draft = {name: request.POST.get(name, "") for name in ("content", "category_key", "tags")}
    if action not in ENTRY_ACTIONS:
        flash.error(request, "Unknown action: nothing was changed.")
        return _entry_page(request, entry, status=400)
    try:
        with transaction.atomic():
            _write(request, entry, action, posted_version(request))
    except DomainError as exc:
        return _entry_page(request, entry, status=refused(request, exc), draft=draft)
    flash.success(request, DONE[action])
    return redirect("memory_entry", entry_id=entry.pk)


@console_view(read=Role.OPERATOR)
def memory_entry_delete(request, entry_id):
    """Ask, then delete the entry at the version the confirmation was shown for."""
    entry = entry_or_404(request, entry_id)
    if request.method != "POST":
        return _entry_page(request, entry, confirm_delete=True)
    try:
        entry_writes.delete_entry(request.tenant, entry, posted_version(request))
    except DomainError as exc:
        return _entry_page(request, entry, status=refused(request, exc), confirm_delete=True)
    flash.success(request, "The memory entry is deleted.")
    return redirect("memory_entries")


# --- what the Actor would see next turn -------------------------------------------------


def _turn_target(request, player):
    """(character, conversation, tags) chosen in the GET form; foreign ones are a 404."""
    conversation = character = None
    if request.GET.get("conversation"):
        rows = scoped(conversation_model(), request.tenant).filter(player=player)
        conversation = get_scoped_or_404(
            rows.select_related("character"), request.tenant, pk=request.GET["conversation"]
        )
    if request.GET.get("character"):
        character = get_scoped_or_404(
            character_model(), request.tenant, pk=request.GET["character"]
        )
    elif conversation is not None:
        character = conversation.character
    return character, conversation, _tags(request.GET.get("tags", ""))[:16]


def _when(item) -> datetime:
    return datetime.fromtimestamp(item.updated_at, tz=UTC)


@console_view()
def memory_next_turn(request, pk):
    """What the Actor would see of ``pk``'s preferences and agreements next turn."""
    player = get_scoped_or_404(Player, request.tenant, pk=pk)
    character, conversation, tags = _turn_target(request, player)
    character_id = str(character.pk) if character else ""
    session_id = conversation.session_id if conversation else ""
    items = entry_reads.selectable_items(request.tenant, player.id)
    config = config_for(request.tenant, character_id)
    # As a turn: the tags the character's card holds count too (the player's message's
    # are the ones typed here).
    card = preferences.turn_tags(
        (tag for item in items for tag in item.tags),
        text="",
        character_tags=(character.tags if character else None) or (),
    )
    tags = list(dict.fromkeys([*tags, *card]))
    left_out: list = []
    chosen = preferences.select(
        items,
        character_id=character_id,
        session_id=session_id,
        tags=tags,
        now=time.time(),
        max_entries=config.max_selected,
        max_chars=config.max_selected_chars,
        left_out=left_out,
    )
    context = {
        "player": player,
        "character": character,
        "character_choice": request.GET.get("character", ""),
        "conversation": conversation,
        "tags": ", ".join(tags),
        "chosen": [(entry, _when(entry.item)) for entry in chosen],
        "left_out": [(item, reason, _when(item)) for item, reason in left_out],
        "actor_block": preferences.render(chosen),
        "used": sum(len(entry.item.content) for entry in chosen),
        "limits": {"entries": config.max_selected, "chars": config.max_selected_chars},
        "characters": scoped(character_model(), request.tenant).order_by("name").only("id", "name"),
        "conversations": scoped(conversation_model(), request.tenant)
        .filter(player=player)
        .select_related("character")
        .order_by("-updated_at")[:100],
    }
    return render(request, "roleplay/memory/next_turn.html", context)
