"""Which books a character reads each turn (its prompt bindings), edited from the console.

Bindings belong to a ``prompt_id``; for our characters that is the character's id. The page
lives under /console/worldbooks/ and finds the character through the app registry rather than
importing ``roleplay``, so the worldbook app still stands alone (the capability rule in
DESIGN.md); the character page links here. Saving replaces every binding at once through
``put_bindings``, the same all-or-nothing write as ``PUT /v1/prompt-bindings``.
"""

from __future__ import annotations

from django.apps import apps
from django.contrib import messages as flash
from django.shortcuts import redirect, render

from console.access import console_view
from console.scoping import get_scoped_or_404
from worldbook import selectors, services
from worldbook.errors import WorldbookError
from worldbook.forms import BindingFormSet
from worldbook.views.common import error_context, status_for


def _book_choices(tenant):
    return [
        (str(book.pk), f"{book.name} (head r{book.head_revision})")
        for book in selectors.scoped_books(tenant).order_by("name")
    ]


@console_view()
def character_bindings(request, character_id):
    character_model = apps.get_model("roleplay", "Character")
    character = get_scoped_or_404(character_model, request.tenant, pk=character_id)
    prompt_id = str(character.pk)
    rows = selectors.list_bindings(request.tenant, prompt_id)
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
                services.put_bindings(request.tenant, prompt_id, formset.bindings())
            except WorldbookError as exc:
                error, status = error_context(exc), status_for(exc)
            else:
                flash.success(request, f"Worldbook bindings of “{character.name}” saved.")
                return redirect("wb_character_bindings", character_id=character.pk)
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
    return render(
        request,
        "worldbook/bindings.html",
        {
            "character": character,
            "prompt_id": prompt_id,
            "formset": formset,
            "bindings": rows,
            "error": error,
            "has_books": bool(choices),
        },
        status=status,
    )
