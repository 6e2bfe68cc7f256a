"""A player's own characters (when the tenant lets players make them): create, import a
card, edit, delete. They are private to the player; only the player changes them."""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from console.failures import DomainError, FieldErrors
from roleplay.accounts.access import player_view
from roleplay.accounts.selectors import app_settings
from roleplay.characters.cards.errors import CardFailure
from roleplay.characters.cards.read import MAX_FILE_BYTES
from roleplay.library import selectors, services
from roleplay.library.forms import CardUploadForm, OwnCharacterForm


def _allowed(request) -> bool:
    return app_settings(request.tenant).player_characters


def _refused(request):
    return render(request, "app/characters_off.html", status=403)


def _own(request, character_id):
    return get_object_or_404(
        selectors.own_characters(request.tenant, request.player), pk=character_id
    )


def _errors_to(form, exc: FieldErrors) -> None:
    for field, errors in exc.by_field.items():
        name = "tags_text" if field == "tags" else field
        form.add_error(name if name in form.fields else None, errors)


@player_view
@require_http_methods(["GET", "POST"])
def create(request):
    if not _allowed(request):
        return _refused(request)
    form = OwnCharacterForm(request.POST if request.method == "POST" else None)
    if form.is_bound and form.is_valid():
        try:
            made = services.create_own_character(
                request.tenant, request.player, **form.character_fields()
            )
        except FieldErrors as exc:
            _errors_to(form, exc)
        else:
            messages.success(request, f"“{made.name}” is yours: only you see it.")
            return redirect("app_character", character_id=made.pk)
    status = 400 if form.errors else 200
    return render(request, "app/character_form.html", {"form": form}, status=status)


@player_view
@require_http_methods(["GET", "POST"])
def import_card(request):
    if not _allowed(request):
        return _refused(request)
    bound = request.method == "POST"
    form = CardUploadForm(request.POST if bound else None, request.FILES if bound else None)
    if form.is_bound and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            made = services.import_own_character(
                request.tenant, request.player, upload.name[:300], upload.read(MAX_FILE_BYTES + 1)
            )
        except (CardFailure, DomainError) as exc:
            form.add_error("file", exc.message)
        else:
            messages.success(request, f"“{made.name}” is imported: only you see it.")
            return redirect("app_character", character_id=made.pk)
    status = 400 if form.errors else 200
    return render(request, "app/character_import.html", {"form": form}, status=status)


@player_view
@require_http_methods(["GET", "POST"])
def edit(request, character_id):
    mine = _own(request, character_id)
    form = OwnCharacterForm(request.POST if request.method == "POST" else None, instance=mine)
    if form.is_bound and form.is_valid():
        try:
            with transaction.atomic():
                services.update_own_character(mine, **form.character_fields())
        except FieldErrors as exc:
            _errors_to(form, exc)
        else:
            messages.success(request, "Saved.")
            return redirect("app_character", character_id=mine.pk)
    status = 400 if form.errors else 200
    context = {"form": form, "character": mine}
    return render(request, "app/character_form.html", context, status=status)


@player_view
@require_POST
def delete(request, character_id):
    mine = _own(request, character_id)
    try:
        services.delete_own_character(mine)
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("app_character", character_id=mine.pk)
    messages.success(request, f"“{mine.name}” and its chats are deleted.")
    return redirect("app_library")
