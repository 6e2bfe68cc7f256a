"""Console page of memory handoffs: what one persona passed to another in a conversation.

The tenant's handoffs, newest first, filtered by player and status, each with the entries it
still shares (``memory.handoffs.selectors.shared_entries``). Viewers read; operators create
a handoff for a player (a conversation of theirs, the receiving character, a summary and
entries chosen from their shareable ones) and accept or close one, as its receiving
character in its conversation (both taken from the handoff itself); close names the version
read. Every write goes through ``memory.handoffs.services``; a refused write is a flash
message with its 4xx status (a stale version a 409) and changes nothing.
"""

from __future__ import annotations

import uuid
from urllib.parse import urlencode

from django import forms
from django.contrib import messages as flash
from django.core.paginator import Paginator
from django.db.models import Q
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from console.access import console_view
from console.failures import DomainError
from console.models import Player
from console.owners import character_model, conversation_model, owners
from console.refusals import refused
from console.scoping import get_scoped_or_404, scoped
from console.storable import unstorable_at
from memory.engine.entries import SUPERSEDING_KINDS
from memory.errors import MemoryInvalid, MemoryNotFound
from memory.handoffs import selectors as handoff_reads
from memory.handoffs import services as handoff_writes
from memory.models import (
    EntryScope,
    EntryStatus,
    HandoffStatus,
    MemoryEntry,
    MemoryHandoff,
)
from memory.views.queue import posted_version

PAGE_SIZE = 50
MAX_ID_CHARS = 64  # MemoryHandoff.from_character_id
MAX_CONVERSATIONS = 100
HANDOFF_ACTIONS = ("accept", "close")
DONE = {"accept": "Accepted", "close": "Closed"}


class HandoffFilters(forms.Form):
    player = forms.IntegerField(required=False, min_value=1)
    status = forms.ChoiceField(required=False, choices=[("", "any"), *HandoffStatus.choices])


def _not_found(message: str, field: str) -> MemoryNotFound:
    return MemoryNotFound("not_found", message, {"field": field})


HANDOFF_CHANGED = (
    "Someone changed this handoff meanwhile (it is now at version {current}). "
    "Nothing was changed: check its current state and try again."
)


def _valid_uuids(values) -> list[str]:
    out = []
    for value in values:
        try:
            out.append(str(uuid.UUID(str(value))))
        except ValueError:
            continue
    return out


def _shareable_choices(tenant, player, conversations) -> list[MemoryEntry]:
    """The player's active shared preferences, and the session entries of their (listed)
    conversations shared in session: what a handoff may carry (the service checks again
    that a session entry is of the handoff's own conversation)."""
    sessions = [c.session_id for c in conversations]
    rows = MemoryEntry.objects.filter(
        tenant=tenant, player=player, status=EntryStatus.ACTIVE
    ).filter(
        Q(scope=EntryScope.SHARED, kind__in=SUPERSEDING_KINDS)
        | Q(scope=EntryScope.SESSION, share_in_session=True, session_id__in=sessions)
    )
    return list(rows.order_by("scope", "category_key", "-updated_at")[:200])


def _page(request, *, status=200, draft=None, filters=None):
    tenant = request.tenant
    filters = filters if filters is not None else HandoffFilters(request.GET)
    if filters.is_bound and not filters.is_valid():
        for field, problems in filters.errors.items():
            flash.error(request, f"Filter “{field}” ignored: {' '.join(problems)}")
    cleaned = getattr(filters, "cleaned_data", {}) if filters.is_bound else {}
    chosen = {name: value for name, value in cleaned.items() if value}
    player = None
    if "player" in chosen:
        player = get_scoped_or_404(Player, tenant, pk=chosen["player"])
        rows = handoff_reads.player_handoffs(tenant, player)
    else:
        rows = (
            MemoryHandoff.objects.filter(tenant=tenant)
            .order_by("-created_at", "id")
            .prefetch_related("items__entry")
        )
    if "status" in chosen:
        rows = rows.filter(status=chosen["status"])
    page = Paginator(rows.select_related("player"), PAGE_SIZE).get_page(request.GET.get("page"))
    handoffs = list(page)
    characters = list(scoped(character_model(), tenant).order_by("name").only("id", "name"))
    names = {str(c.pk): c.name for c in characters}
    sessions = _valid_uuids({h.session_id for h in handoffs})
    rows = scoped(conversation_model(), tenant).filter(pk__in=sessions)
    known = {str(pk) for pk in rows.values_list("pk", flat=True)}
    titled = owners().conversation_labels(tenant, known)
    items = [
        {
            "handoff": h,
            "from_name": names.get(h.from_character_id, ""),
            "conversation_label": titled.get(h.session_id),
            "to_name": names.get(h.to_character_id, ""),
            "conversation": h.session_id if h.session_id in known else "",
            "shared": handoff_reads.shared_entries(h),
        }
        for h in handoffs
    ]
    conversations, choices = [], []
    if player is not None:
        conversations = list(
            scoped(conversation_model(), tenant)
            .filter(player=player)
            .select_related("character")
            .order_by("-updated_at")[:MAX_CONVERSATIONS]
        )
        choices = _shareable_choices(tenant, player, conversations)
    context = {
        "page": page,
        "items": items,
        "filters": filters,
        "player": player,
        "query": urlencode(chosen),
        "players": scoped(Player, tenant).order_by("display_name", "external_id")[:200],
        "characters": characters,
        "conversations": conversations,
        "choices": choices,
        "draft": draft or {},
    }
    return render(request, "roleplay/memory/handoffs.html", context, status=status)


def _posted_target(request):
    """(player, conversation, to character) named by the create form; a missing, malformed
    or another tenant's id is a ``MemoryNotFound`` naming the field (a 404)."""
    tenant = request.tenant
    try:
        player = scoped(Player, tenant).get(pk=int(request.POST.get("player", "")))
    except (ValueError, Player.DoesNotExist):
        raise _not_found("no such player in this tenant", "player") from None
    try:
        conversation = (
            scoped(conversation_model(), tenant)
            .filter(player=player)
            .get(pk=uuid.UUID(request.POST.get("conversation", "")))
        )
    except (ValueError, conversation_model().DoesNotExist):
        raise _not_found("no such conversation of this player", "conversation") from None
    try:
        to_character = scoped(character_model(), tenant).get(
            pk=uuid.UUID(request.POST.get("to_character", ""))
        )
    except (ValueError, character_model().DoesNotExist):
        raise _not_found("no such character in this tenant", "to_character") from None
    return player, conversation, to_character


def _own_player(request, value) -> str:
    """``value`` when it names one of the tenant's players (the page shows its form again),
    else ""."""
    try:
        found = scoped(Player, request.tenant).filter(pk=int(value)).exists()
    except ValueError:
        return ""
    return value if found else ""


def _from_id(request) -> str:
    value = request.POST.get("from_character", "").strip()
    if not value or len(value) > MAX_ID_CHARS:
        raise MemoryInvalid(
            "invalid_from_character",
            f"from persona id is 1-{MAX_ID_CHARS} characters",
            {"field": "from_character"},
        )
    found = unstorable_at(value, "from persona id")
    if found is not None:
        raise MemoryInvalid("invalid_text", found[1], {"field": "from_character"})
    return value


def _memory_ids(request) -> list[str]:
    ids = request.POST.getlist("memory_ids")
    good = _valid_uuids(ids)
    if len(good) != len(ids):
        raise MemoryInvalid(
            "invalid_memory_ids", "an entry id is not a valid id", {"field": "memory_ids"}
        )
    return good


@console_view()
def memory_handoffs(request):
    """The tenant's handoffs; operators post the create form here."""
    if request.method != "POST":
        return _page(request)
    fields = ("player", "conversation", "from_character", "to_character", "summary")
    draft = {name: request.POST.get(name, "") for name in fields}
    draft["memory_ids"] = request.POST.getlist("memory_ids")
    try:
        player, conversation, to_character = _posted_target(request)
        handoff = handoff_writes.create_handoff(
            request.tenant,
            player,
            from_character_id=_from_id(request),
            to_character_id=str(to_character.pk),
            session_id=conversation.session_id,
            summary=request.POST.get("summary", ""),
            memory_ids=_memory_ids(request),
        )
    except DomainError as exc:
        status = refused(request, exc, stale=HANDOFF_CHANGED)
        filters = HandoffFilters({"player": _own_player(request, draft["player"])})
        return _page(request, status=status, draft=draft, filters=filters)
    flash.success(request, f"Handoff to {to_character.name} created (pending).")
    query = urlencode({"player": player.pk})
    return redirect(f"{reverse('memory_handoffs')}?{query}#handoff-{handoff.pk}")


@console_view()
@require_POST
def memory_handoff_action(request, handoff_id):
    """Accept or close one handoff as its receiving character in its conversation."""
    handoff = get_scoped_or_404(MemoryHandoff, request.tenant, pk=handoff_id)
    action = request.POST.get("action", "")
    if action not in HANDOFF_ACTIONS:
        flash.error(request, "Unknown action: choose accept or close. Nothing was changed.")
        return _page(request, status=400, filters=HandoffFilters())
    bound = {"character_id": handoff.to_character_id, "session_id": handoff.session_id}
    try:
        if action == "accept":
            handoff_writes.accept_handoff(request.tenant, handoff, **bound)
        else:
            handoff_writes.close_handoff(request.tenant, handoff, posted_version(request), **bound)
    except DomainError as exc:
        return _page(
            request, status=refused(request, exc, stale=HANDOFF_CHANGED), filters=HandoffFilters()
        )
    flash.success(request, f"{DONE[action]}: the handoff from {handoff.from_character_id}.")
    query = urlencode({"player": handoff.player_id})
    return redirect(f"{reverse('memory_handoffs')}?{query}#handoff-{handoff.pk}")
