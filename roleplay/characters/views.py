"""Console pages of characters beyond the form (``views``): the avatar image, card import
and export, one-click chat, and the context the character page shows (avatar, bound
books, last import, the players to chat as).

Same rules as every console page: :func:`console.access.console_view` for roles, objects
through ``get_scoped_or_404`` (another tenant's id is a 404), writes through the services.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages as flash
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.access import console_view, files, posted
from console.failures import DomainError
from console.models import Player, Role
from console.scoping import get_scoped_or_404, scoped
from console.services import ensure_console_player
from roleplay.characters import selectors
from roleplay.characters.card_export import export_character
from roleplay.characters.cards.build import EXPORT_FORMATS
from roleplay.characters.cards.read import MAX_FILE_BYTES
from roleplay.characters.cards.report import summary as report_summary
from roleplay.characters.downloads import download, image_response
from roleplay.characters.services.card_import import import_card
from roleplay.conversations.services import conversations
from roleplay.models import Character, CharacterImport
from roleplay.pickers import PlayerChoiceField
from roleplay.regex_scripts.views import character_section as regex_section
from worldbook import selectors as worldbook_reads

EXPORT_LABELS = [
    ("ccv3_png", "PNG card (CCv3 + CCv2)"),
    ("ccv3_json", "CCv3 JSON"),
    ("ccv2_json", "CCv2 JSON"),
]


def character_page(character: Character, form) -> dict:
    """What the character page shows around its form."""
    last_import = (
        CharacterImport.objects.filter(character=character).order_by("-created_at").first()
    )
    return {
        "form": form,
        "chat_form": QuickChatForm(tenant=character.tenant),
        "character": character,
        "has_avatar": selectors.has_avatar(character),
        "bound_books": worldbook_reads.list_bindings(character.tenant, str(character.pk)),
        "export_formats": EXPORT_LABELS,
        "last_import": last_import,
        "import_summary": report_summary(last_import.report) if last_import else None,
        **regex_section(character),
    }


class QuickChatForm(forms.Form):
    """Who chats in a one-click conversation: a player of the tenant, or (empty) the console
    user's own player."""

    player = PlayerChoiceField(
        queryset=Player.objects.none(), required=False, empty_label="Me", label="Chat as"
    )

    def __init__(self, *args, tenant, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["player"].queryset = scoped(Player, tenant).order_by("external_id")


@console_view(read=Role.OPERATOR)
@require_POST
def character_chat(request, pk):
    """ "Chat": a conversation with the defaults (``conversations.start_chat``), then the
    chat page itself. Without a chosen player, the console user's own player (created on
    first use, as the New conversation form's "Me")."""
    character = get_scoped_or_404(Character.objects.defer("avatar"), request.tenant, pk=pk)
    form = QuickChatForm(request.POST, tenant=request.tenant)
    if not form.is_valid():
        flash.error(request, "That player is not one of yours; choose another.")
        return redirect("character_edit", pk=character.pk)
    player = form.cleaned_data["player"] or ensure_console_player(request.tenant, request.user)
    try:
        conversation = conversations.start_chat(request.tenant, character=character, player=player)
    except DomainError as exc:
        flash.error(request, f"The chat could not start: {exc.message} ({exc.code})")
        return redirect("character_edit", pk=character.pk)
    return redirect("play", conversation_id=conversation.pk)


@console_view()
def character_avatar(request, pk):
    """The avatar as an image (or a plain one), for the console's ``<img>`` tags."""
    character = get_scoped_or_404(Character, request.tenant, pk=pk)
    return image_response(request, selectors.avatar_of(character))


class CardImportForm(forms.Form):
    file = forms.FileField(
        label="Character card",
        widget=forms.ClearableFileInput(attrs={"accept": ".png,.json,.charx,.yaml,.yml"}),
        help_text="CCv2 or CCv3, as PNG, JSON or .charx, or an older tool's character "
        "(Pygmalion JSON, text-generation-webui YAML), at most 16 MiB. An embedded "
        "worldbook becomes a book bound to the character.",
    )
    on_duplicate = forms.ChoiceField(
        choices=[
            ("existing", "Open the character it made"),
            ("copy", "Make another character"),
        ],
        initial="existing",
        widget=forms.RadioSelect,
        label="If this file was imported before",
    )


@console_view(read=Role.OPERATOR)
def character_import(request):
    """Upload a card; the character page then shows what the import mapped, kept, dropped."""
    form = CardImportForm(posted(request), files(request))
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            result = import_card(
                request.tenant,
                upload.name or "card",
                upload.read(MAX_FILE_BYTES + 1),
                on_duplicate=form.cleaned_data["on_duplicate"],
            )
        except DomainError as exc:
            form.add_error("file", f"{exc.message} ({exc.code})")
        else:
            name = result.character.name
            if result.deduplicated:
                flash.info(request, f"This file was imported before: here is “{name}”.")
            else:
                flash.success(request, f"Imported “{name}” from {upload.name}.")
            return redirect("character_edit", pk=result.character.pk)
    return render(request, "roleplay/characters/import.html", {"form": form})


@console_view()
def character_export(request, pk):
    """The character as a card file to download (``?format=``, as the API's export)."""
    character = get_scoped_or_404(Character, request.tenant, pk=pk)
    fmt = request.GET.get("format", "ccv3_png")
    if fmt not in EXPORT_FORMATS:
        fmt = "ccv3_png"
    try:
        card = export_character(request.tenant, character, fmt)
    except DomainError as exc:
        flash.error(request, f"Export failed: {exc.message} ({exc.code})")
        return redirect("character_edit", pk=character.pk)
    return download(card.data, card.content_type, card.filename)
