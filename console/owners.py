"""The runtime's owners as Memory's and Story's doors see them: conversations and
characters of a tenant, and the names pages show for them.

Memory's and Story's doors (``memory.api``, ``memory.views``, ``story.api``,
``story.views``) take conversation and character ids, tenant-scoped (a missing, foreign or
malformed id is the same 404 or coded error as any other lookup), and name them on their
pages; those rows are the runtime's, and a capability never imports the runtime. The runtime
registers an :class:`Owners` when its app is ready (``roleplay.owners``); the doors ask
through the functions here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.db import models

from console.ports import Port
from console.scoping import get_scoped_or_404


@dataclass(frozen=True)
class Owners:
    """What the runtime answers. The two tables are handed out for tenant-scoped lookups and
    serializer references (``console.serializers.TenantRelatedField``); the rest are reads."""

    conversation: type[models.Model]
    character: type[models.Model]
    scenario_of: Callable[[Any], models.Model | None]
    """The scenario a conversation runs (its own, else its character's), or None."""
    player_sessions: Callable[[Any, Any], list[str]]
    """(tenant, player) -> the message store's session ids of the player's conversations."""
    conversation_title: Callable[[Any], str]
    """A conversation's title, else "Chat with <character>"."""
    conversation_labels: Callable[[Any, Iterable], dict[str, Any]]
    """(tenant, ids) -> a label (title, character, player, url) per conversation id."""
    name_rows: Callable[..., list]
    """(tenant, rows) -> the rows with ``character_name`` and ``conversation_label`` set."""
    name_evidence: Callable[[Any, list[dict]], list[dict]]
    """(tenant, evidence views) -> the views with their conversation's label."""
    message_snippets: Callable[[Any, Iterable], dict[str, str]]
    """(tenant, message ids) -> each message's first words."""
    speaker_names: Callable[[Any, Any, str | None], list[str]]
    """(tenant, player, character id or None) -> the names the player's talk goes by (the
    player's and personas', the characters' of their conversations, or that character's)."""


PORT: Port[Owners] = Port("console.owners")


def owners() -> Owners:
    return PORT.get()


def conversation_model() -> type[models.Model]:
    """The runtime's conversation table (a serializer reference resolves it per request)."""
    return owners().conversation


def character_model() -> type[models.Model]:
    return owners().character


class RuntimeTable:
    """A view's ``model`` that is one of the runtime's tables (``RuntimeTable("conversation")``),
    looked up when it is read, on the view class as on a view."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, view, owner=None) -> type[models.Model]:
        return getattr(owners(), self.name)


def conversation_or_404(request, pk):
    """The request tenant's conversation ``pk`` with its character, or a 404."""
    rows = conversation_model().objects.select_related("character")
    return get_scoped_or_404(rows, request.tenant, pk=pk)
