"""Which books a conversation's turn reads, edited from the console: a character's (its
prompt bindings) and the other lorebook scopes' (the tenant's global books, a scenario's, a
chat's, a persona's; docs/worldbook.md, "Lorebook scopes").

Bindings belong to a scope and a ``prompt_id``; for our characters that is the character's
id. The pages live under /console/worldbooks/ and find the character, scenario, conversation
or persona through the app registry rather than importing ``roleplay``, so the worldbook app
still stands alone (the capability rule in DESIGN.md); the character page links here.
Saving replaces every binding of the scope at once through ``put_bindings``, the same
all-or-nothing write as ``PUT /v1/prompt-bindings`` and ``PUT /v1/scope-bindings``.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.apps import apps
from django.contrib import messages as flash
from django.shortcuts import redirect, render

from console.access import console_view
from console.scoping import get_scoped_or_404
from worldbook import selectors, services
from worldbook.engine import scopes
from worldbook.errors import WorldbookError
from worldbook.forms import BindingFormSet
from worldbook.models import BindingScope
from worldbook.views.common import error_context, status_for


def _book_choices(tenant):
    return [
        (str(book.pk), f"{book.name} (head r{book.head_revision})")
        for book in selectors.scoped_books(tenant).order_by("name")
    ]


@dataclass(frozen=True)
class Page:
    """What a bindings page binds to and says about it."""

    scope: str
    prompt_id: str
    title: str  # "Worldbooks of …"
    saved: str  # the flash after a save
    back_url: str
    back_label: str
    about: str  # which turns read these books


@console_view()
def character_bindings(request, character_id):
    character = _target(request, "Character", character_id)
    page = Page(
        BindingScope.PROMPT,
        str(character.pk),
        f"Worldbooks of “{character.name}”",
        f"Worldbook bindings of “{character.name}” saved.",
        f"/console/characters/{character.pk}/",
        "Back to the character",
        "Each turn of this character's conversations selects entries from the enabled books below",
    )
    return _bindings_page(request, page, "wb_character_bindings", character_id=character.pk)


@console_view()
def global_bindings(request):
    if request.method == "POST" and "character_strategy" in request.POST:
        return _save_strategy(request)
    page = Page(
        BindingScope.GLOBAL,
        "",
        "Global worldbooks",
        "Global worldbooks saved.",
        "/console/worldbooks/",
        "Back to the worldbooks",
        "Every conversation of this tenant reads the enabled books below",
    )
    return _bindings_page(request, page, "wb_global_bindings")


@console_view()
def scenario_bindings(request, scenario_id):
    scenario = _target(request, "Scenario", scenario_id)
    page = Page(
        BindingScope.SCENARIO,
        str(scenario.pk),
        f"Worldbooks of the scenario “{scenario.name}”",
        f"Worldbooks of “{scenario.name}” saved.",
        f"/console/scenarios/{scenario.pk}/",
        "Back to the scenario",
        "Every conversation running this scenario reads the enabled books below",
    )
    return _bindings_page(request, page, "wb_scenario_bindings", scenario_id=scenario.pk)


@console_view()
def chat_bindings(request, conversation_id):
    chat = _target(request, "Conversation", conversation_id)
    page = Page(
        BindingScope.CHAT,
        str(chat.pk),
        f"Worldbooks of the chat “{chat.title or chat.pk}”",
        "Chat worldbooks saved.",
        f"/console/conversations/{chat.pk}/",
        "Back to the conversation",
        "This conversation's turns read the enabled books below first",
    )
    return _bindings_page(request, page, "wb_chat_bindings", conversation_id=chat.pk)


@console_view()
def persona_bindings(request, persona_id):
    persona = _target(request, "Persona", persona_id)
    page = Page(
        BindingScope.PERSONA,
        str(persona.pk),
        f"Worldbooks of the persona “{persona.name}”",
        f"Worldbooks of “{persona.name}” saved.",
        f"/console/personas/{persona.pk}/",
        "Back to the persona",
        "Every conversation played as this persona reads the enabled books below",
    )
    return _bindings_page(request, page, "wb_persona_bindings", persona_id=persona.pk)


def _target(request, model_name: str, pk):
    """The tenant's object (404 for another tenant's, as for an unknown id)."""
    return get_scoped_or_404(apps.get_model("roleplay", model_name), request.tenant, pk=pk)


def _save_strategy(request):
    try:
        services.set_scope_strategy(request.tenant, request.POST.get("character_strategy"))
    except WorldbookError as exc:
        flash.error(request, exc.message)
    else:
        flash.success(request, "The order between scopes is saved.")
    return redirect("wb_global_bindings")


def _bindings_page(request, page: Page, url_name: str, **url_kwargs):
    rows = selectors.list_bindings(request.tenant, page.prompt_id, page.scope)
    initial = [
        {
            "book": str(binding.book_id),
            "revision": binding.revision,
            "enabled": binding.enabled,
            "position": binding.position,
        }
        for binding in rows
    ]
    choices = _book_choices(request.tenant)
    formset = BindingFormSet(
        request.POST if request.method == "POST" else None,
        initial=initial,
        prefix="b",
        form_kwargs={"book_choices": choices},
    )
    error = None
    status = 200
    if request.method == "POST":
        if formset.is_valid():
            try:
                services.put_bindings(
                    request.tenant, page.prompt_id, formset.bindings(), scope=page.scope
                )
            except WorldbookError as exc:
                error, status = error_context(exc), status_for(exc)
            else:
                flash.success(request, page.saved)
                return redirect(url_name, **url_kwargs)
        else:
            status = 422
    if not request.membership.can_edit():
        for form in formset.forms:
            for form_field in form.fields.values():
                form_field.disabled = True
    resolved = {
        str(b.book_id): b.book.head_revision if b.revision is None else b.revision for b in rows
    }
    for form in formset.forms:
        form.resolved = resolved.get(form.initial.get("book"))
    strategy = None
    if page.scope == BindingScope.GLOBAL:
        strategy = scopes.strategy_of(selectors.scope_strategy(request.tenant))
    return render(
        request,
        "worldbook/bindings.html",
        {
            "page": page,
            "prompt_id": page.prompt_id,
            "formset": formset,
            "bindings": rows,
            "error": error,
            "has_books": bool(choices),
            "strategy": strategy,
            "strategies": scopes.STRATEGIES,
        },
        status=status,
    )
