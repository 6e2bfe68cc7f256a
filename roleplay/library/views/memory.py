"""What the characters remember about the player: their active memory entries, each
deletable or pinnable through the memory services the console uses."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.failures import DomainError
from console.scoping import is_uuid
from memory.entries import selectors as entries
from memory.entries import services
from memory.models import EntryStatus
from roleplay.accounts.access import player_view
from roleplay.models import Character

PAGE_SIZE = 50


@player_view
def memory(request):
    rows = entries.owner_entries(request.tenant, request.player, status=EntryStatus.ACTIVE)
    page = Paginator(rows.order_by("-pinned", "-updated_at", "id"), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    ids = {entry.character_id for entry in page.object_list if entry.character_id}
    found = Character.objects.filter(tenant=request.tenant, pk__in=[i for i in ids if is_uuid(i)])
    names = {str(pk): name for pk, name in found.values_list("id", "name")}
    for entry in page.object_list:
        entry.character_name = names.get(entry.character_id, "")
    return render(request, "app/memory.html", {"page": page})


def _entry(request, entry_id):
    found = entries.owner_entry(request.tenant, request.player, entry_id)
    if found is None:
        raise Http404
    return found


@player_view
@require_POST
def delete(request, entry_id):
    entry = _entry(request, entry_id)
    try:
        services.delete_entry(request.tenant, entry, _version(request, entry))
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "Forgotten.")
    return redirect("app_memory")


@player_view
@require_POST
def pin(request, entry_id):
    entry = _entry(request, entry_id)
    pinned = request.POST.get("pinned", "1") == "1"
    try:
        services.set_pinned(request.tenant, entry, _version(request, entry), pinned)
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect("app_memory")


def _version(request, entry) -> int:
    """The version the page showed (a stale one is a conflict), else the current one."""
    shown = request.POST.get("version", "")
    return int(shown) if shown.isdigit() and len(shown) < 10 else entry.version
