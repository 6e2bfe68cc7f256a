"""The player's home: their latest chats and the library's newest characters."""

from __future__ import annotations

from django.shortcuts import render

from roleplay.accounts.access import player_view
from roleplay.library import selectors

RECENT_CHATS = 6
HIGHLIGHTS = 8


@player_view
def home(request):
    adult = request.account.age_confirmed_at is not None
    chats = selectors.with_unread(selectors.my_chats(request.tenant, request.player)[:RECENT_CHATS])
    newest = selectors.search(request.tenant, request.player, adult=adult).order_by(
        "-created_at", "id"
    )[:HIGHLIGHTS]
    return render(request, "app/home.html", {"chats": chats, "highlights": newest})
