"""The player's personas: who they are in a chat. Create, edit, make default, delete, with
the console's persona form and services."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from roleplay.accounts.access import player_view
from roleplay.characters.downloads import image_response
from roleplay.characters.selectors import avatar_of
from roleplay.players.forms import PersonaForm
from roleplay.players.selectors import player_personas
from roleplay.players.services import personas
from roleplay.players.views import save_persona


def _mine(request, persona_id):
    return get_object_or_404(player_personas(request.tenant, request.player), pk=persona_id)


def _form(request, **kwargs) -> PersonaForm:
    bound = request.method == "POST"
    form = PersonaForm(request.POST if bound else None, request.FILES if bound else None, **kwargs)
    form.fields["is_default"].label = "My default persona"
    form.fields["is_default"].help_text = "Used by chats that do not choose one."
    return form


@player_view
@require_http_methods(["GET", "POST"])
def personas_page(request):
    form = _form(request)
    if form.is_bound and form.is_valid():
        made = save_persona(form, personas.create_persona, request.tenant, player=request.player)
        if made is not None:
            messages.success(request, f"Persona “{made.name}” added.")
            return redirect("app_personas")
    context = {"form": form, "personas": player_personas(request.tenant, request.player)}
    return render(request, "app/personas.html", context, status=400 if form.errors else 200)


@player_view
@require_http_methods(["GET", "POST"])
def edit(request, persona_id):
    persona = _mine(request, persona_id)
    form = _form(request, instance=persona)
    if form.is_bound and form.is_valid():
        if save_persona(form, personas.update_persona, persona) is not None:
            messages.success(request, f"Persona “{persona.name}” saved.")
            return redirect("app_personas")
    context = {"form": form, "persona": persona}
    return render(request, "app/persona_form.html", context, status=400 if form.errors else 200)


@player_view
@require_POST
def make_default(request, persona_id):
    persona = _mine(request, persona_id)
    personas.make_default_persona(persona)
    messages.success(request, f"“{persona.name}” is now your default persona.")
    return redirect("app_personas")


@player_view
@require_POST
def delete(request, persona_id):
    persona = _mine(request, persona_id)
    personas.delete_persona(persona)
    messages.success(request, f"Persona “{persona.name}” deleted.")
    return redirect("app_personas")


@player_view
def avatar(request, persona_id):
    return image_response(request, avatar_of(_mine(request, persona_id)))
