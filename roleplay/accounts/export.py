"""Everything of a player's, as one zip: what the account page's "Download my data" gives.

- ``account.json``: the account (e-mail, name, dates);
- ``personas.json``: the player's personas;
- ``chats/*.jsonl``: every conversation, as SillyTavern chat files (``chat_export``);
- ``memory/entries.json``: the memory entries about the player, every status;
- ``memory/documents.json``: the memory documents of the player's conversations;
- ``characters/*.json``: the characters the player made or imported, as V3 cards.
"""

from __future__ import annotations

import io
import json
import zipfile

from django.db import transaction

from console import audit
from console.models import AuditAction
from memory.models import MemoryDocument, MemoryEntry
from roleplay.characters.card_export import export_character
from roleplay.conversations.chat_export import export_chat
from roleplay.conversations.chats.write import SILLYTAVERN
from roleplay.models import Character, Conversation, Persona

ENTRY_FIELDS = ("id", "kind", "scope", "content", "tags", "status", "pinned", "created_at")


def _json(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str).encode()


def _unique(names: set[str], name: str) -> str:
    stem, dot, ext = name.rpartition(".")
    candidate, n = name, 1
    while candidate in names:
        n += 1
        candidate = f"{stem} ({n}){dot}{ext}"
    names.add(candidate)
    return candidate


@transaction.atomic
def export_account(account, *, request=None) -> bytes:
    """The zip of everything that is the player's (audited)."""
    tenant, player = account.tenant, account.player
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "account.json",
            _json(
                {
                    "email": account.email,
                    "display_name": player.display_name,
                    "created_at": account.created_at,
                    "email_verified_at": account.email_verified_at,
                    "age_confirmed_at": account.age_confirmed_at,
                }
            ),
        )
        personas = Persona.objects.filter(tenant=tenant, player=player).order_by("created_at")
        archive.writestr(
            "personas.json",
            _json(list(personas.values("name", "description", "is_default", "created_at"))),
        )
        conversations = (
            Conversation.objects.filter(tenant=tenant, player=player)
            .select_related("character", "persona")
            .order_by("created_at")
        )
        names: set[str] = set()
        sessions = []
        for conversation in conversations:
            sessions.append(conversation.session_id)
            file = export_chat(tenant, conversation, SILLYTAVERN)
            archive.writestr(f"chats/{_unique(names, file.filename)}", file.data)
        entries = MemoryEntry.objects.filter(tenant=tenant, player=player).order_by("created_at")
        archive.writestr("memory/entries.json", _json(list(entries.values(*ENTRY_FIELDS))))
        documents = MemoryDocument.objects.filter(tenant=tenant, session_id__in=sessions)
        archive.writestr(
            "memory/documents.json",
            _json(
                list(documents.order_by("session_id", "slot").values("session_id", "slot", "data"))
            ),
        )
        for character in Character.objects.filter(tenant=tenant, owner_player=player):
            card = export_character(tenant, character, "ccv3_json")
            archive.writestr(f"characters/{_unique(names, card.filename)}", card.data)
    audit.record(
        AuditAction.PLAYER_EXPORTED,
        request=request,
        user=account.user,
        tenant=tenant,
        details={"account": str(account.id), "chats": len(sessions)},
    )
    return buffer.getvalue()
