"""Console pages of players and their personas, and a conversation's persona.

Players have no page of their own elsewhere, so the Players list is the entry: each player
links to their personas (create, edit, make default, delete, avatar). A conversation's page
shows the persona it speaks as and lets an operator choose another of the player's. Writes
go through ``roleplay.players.services.personas`` and ``conversations``; roles as every console page
(viewers read, operators write).
"""

from __future__ import annotations

from django.contrib import messages as flash
from django.core.paginator import Paginator
from django.db import transaction
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.access import console_view, files, posted
from console.models import Player, Role
from console.scoping import get_scoped_or_404, is_uuid
from roleplay.characters.downloads import image_response
from roleplay.characters.selectors import avatar_of
from roleplay.characters.services import avatars
from roleplay.conversations.services import conversations
from roleplay.errors import Duplicate, FieldErrors
from roleplay.models import Conversation, Persona
from roleplay.players import selectors
from roleplay.players.forms import PersonaForm
from roleplay.players.services import personas

PAGE_SIZE = 50


def _persona_page(request, player, form, persona=None):
    return render(
        request,
        "roleplay/personas/form.html",
        {"form": form, "player": player, "persona": persona},
    )


def save_persona(form, service, *args, **extra):
    """The persona's fields, default flag and avatar in one transaction; the services'
    field errors are shown next to the form's fields."""
    fields = {
        **extra,
        "name": form.cleaned_data["name"],
        "description": form.cleaned_data["description"],
        # An unticked box on a new persona leaves the choice to the service (a player's
        # first persona becomes the default); on an existing one it means "not default".
        "is_default": form.cleaned_data["is_default"]
        or (None if form.instance._state.adding else False),
    }
    try:
        with transaction.atomic():
            persona = service(*args, **fields)
            if form.cleaned_data.get("avatar"):
                avatars.store_png(persona, form.cleaned_data["avatar"])
            elif form.cleaned_data.get("remove_avatar"):
                avatars.clear_avatar(persona)
            return persona
    except FieldErrors as exc:
        for field, messages in exc.by_field.items():
            for message in messages:
                form.add_error(field if field in form.fields else None, message)
    except Duplicate as exc:
        form.add_error(None, exc.message)
    return None


@console_view()
def player_list(request):
    query = request.GET.get("q", "").strip()
    rows = selectors.player_list(request.tenant, query)
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "roleplay/personas/players.html", {"page": page, "query": query})


@console_view()
def player_personas(request, pk):
    """A player's personas, and the form that adds one."""
    player = get_scoped_or_404(Player, request.tenant, pk=pk)
    form = PersonaForm(posted(request), files(request))
    if request.method == "POST" and form.is_valid():
        persona = save_persona(form, personas.create_persona, request.tenant, player=player)
        if persona is not None:
            flash.success(request, f"Persona “{persona.name}” added.")
            return redirect("player_personas", pk=player.pk)
    return render(
        request,
        "roleplay/personas/list.html",
        {
            "player": player,
            "personas": selectors.player_personas(request.tenant, player),
            "form": form,
        },
    )


@console_view()
def persona_edit(request, pk):
    persona = get_scoped_or_404(Persona.objects.select_related("player"), request.tenant, pk=pk)
    form = PersonaForm(posted(request), files(request), instance=persona)
    if request.method == "POST" and form.is_valid():
        if save_persona(form, personas.update_persona, persona) is not None:
            flash.success(request, f"Persona “{persona.name}” saved.")
            return redirect("player_personas", pk=persona.player_id)
    if not request.membership.can_edit():
        for field in form.fields.values():
            field.disabled = True
    return _persona_page(request, persona.player, form, persona)


@console_view(write=Role.OPERATOR)
@require_POST
def persona_make_default(request, pk):
    persona = get_scoped_or_404(Persona, request.tenant, pk=pk)
    personas.make_default_persona(persona)
    flash.success(request, f"“{persona.name}” is now the player's default persona.")
    return redirect("player_personas", pk=persona.player_id)


@console_view(read=Role.OPERATOR)
def persona_delete(request, pk):
    persona = get_scoped_or_404(Persona, request.tenant, pk=pk)
    if request.method == "POST":
        personas.delete_persona(persona)
        flash.success(request, f"Persona “{persona.name}” deleted.")
        return redirect("player_personas", pk=persona.player_id)
    return render(
        request,
        "console/confirm.html",
        {
            "title": f"Delete persona “{persona.name}”?",
            "message": "Conversations that chose it speak as the player's default persona.",
            "warning": "It is the player's default." if persona.is_default else "",
            "cancel_url": f"/console/players/{persona.player_id}/personas/",
        },
    )


@console_view()
def persona_avatar(request, pk):
    persona = get_scoped_or_404(Persona, request.tenant, pk=pk)
    return image_response(request, avatar_of(persona))


@console_view(write=Role.OPERATOR)
@require_POST
def conversation_persona(request, pk):
    """Choose which of the player's personas a conversation speaks as ("" = the default)."""
    conversation = get_scoped_or_404(Conversation, request.tenant, pk=pk)
    chosen = request.POST.get("persona") or None
    persona = None
    if chosen is not None:
        persona = selectors.player_personas(request.tenant, conversation.player_id)
        persona = persona.filter(pk=chosen).first() if is_uuid(chosen) else None
        if persona is None:
            flash.error(request, "Choose one of the player's personas.")
            return redirect("conversation_detail", pk=conversation.pk)
    try:
        conversations.update_conversation(conversation, persona=persona)
    except FieldErrors as exc:
        flash.error(request, exc.message)
    else:
        flash.success(request, "The conversation's persona is changed.")
    return redirect("conversation_detail", pk=conversation.pk)
