"""The library: listed characters (and the player's own), searched and filtered by tag; a
character's page with "Start chat"; avatars of what the player may see."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from console.failures import DomainError, FieldErrors
from roleplay.accounts.access import player_view
from roleplay.accounts.selectors import app_settings
from roleplay.characters.downloads import image_response
from roleplay.characters.selectors import avatar_of, greeting_choices
from roleplay.library import selectors, services
from roleplay.library.forms import StartChatForm
from roleplay.models import ContentRating
from roleplay.players.selectors import player_personas

PAGE_SIZE = 24


@dataclass
class Window:
    """One page of the library without counting every match (a search matching thousands
    of characters would pay for the count on every page): the page's rows and whether
    there is a next one."""

    object_list: list
    number: int
    has_next: bool

    @classmethod
    def of(cls, rows, number: str | None, size: int) -> Window:
        page = int(number) if (number or "").isdigit() and len(number or "") < 6 else 1
        page = max(page, 1)
        found = list(rows[(page - 1) * size : page * size + 1])
        return cls(found[:size], page, len(found) > size)

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    def next_page_number(self) -> int:
        return self.number + 1

    def previous_page_number(self) -> int:
        return self.number - 1


def is_adult(request) -> bool:
    return request.account.age_confirmed_at is not None


def age_gated(request, character) -> bool:
    """Whether ``character`` is adult content the signed-in player has not confirmed their
    age for: every app page and file of it is then refused."""
    return character.content_rating == ContentRating.NSFW and not is_adult(request)


@player_view
def library(request):
    query = selectors.clean_query(request.GET.get("q"))
    tag = selectors.clean_query(request.GET.get("tag"), selectors.MAX_TAG_CHARS)
    adult = is_adult(request)
    rows = selectors.search(request.tenant, request.player, adult=adult, query=query, tag=tag)
    page = Window.of(rows, request.GET.get("page"), PAGE_SIZE)
    context = {
        "page": page,
        "query": query,
        "tag": tag,
        "tags": selectors.top_tags(request.tenant, adult=adult),
        "adult": adult,
        "can_create": app_settings(request.tenant).player_characters,
        "page_keep": _keep(q=query, tag=tag),
    }
    return render(request, "app/library.html", context)


def character_of(request, character_id):
    """A character the player may open (an operator's private one, or another player's, is
    a 404)."""
    rows = selectors.reachable(request.tenant, request.player).select_related("owner_player")
    return get_object_or_404(rows, pk=character_id)


@player_view
def character(request, character_id):
    found = character_of(request, character_id)
    gated = age_gated(request, found)
    form = None if gated else _start_form(request, found)
    context = {"character": found, "form": form, "gated": gated, "own": _own(request, found)}
    return render(request, "app/character.html", context, status=403 if gated else 200)


@player_view
@require_POST
def start_chat(request, character_id):
    found = character_of(request, character_id)
    if age_gated(request, found):
        messages.error(request, "Confirm your age to chat with this character.")
        return redirect("app_character", character_id=found.pk)
    form = _start_form(request, found, request.POST)
    if not form.is_valid():
        messages.error(request, "Choose one of your personas and one of the openings.")
        return redirect("app_character", character_id=found.pk)
    try:
        conversation = services.start_from_library(
            request.tenant,
            character=found,
            player=request.player,
            persona=form.cleaned_data["persona"],
            opening=form.cleaned_data["opening"],
        )
    except (FieldErrors, DomainError) as exc:
        messages.error(request, exc.message)
        return redirect("app_character", character_id=found.pk)
    return redirect("app_chat", conversation_id=conversation.pk)


@player_view
def character_avatar(request, character_id):
    found = character_of(request, character_id)
    if age_gated(request, found):
        raise Http404
    return image_response(request, avatar_of(found))


def _keep(**values: str) -> str:
    """The query string a page link keeps (``q=…&tag=…&``)."""
    kept = urlencode({name: value for name, value in values.items() if value})
    return kept + "&" if kept else ""


def _own(request, character) -> bool:
    return character.owner_player_id == request.player.pk


def _start_form(request, character, data=None) -> StartChatForm:
    openings = [(i, text) for i, text in greeting_choices(character) if text.strip()]
    personas = list(player_personas(request.tenant, request.player))
    return StartChatForm(data, personas=personas, openings=openings)
