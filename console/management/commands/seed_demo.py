"""Idempotent demo data: tenant ``demo``, an operator login, a character (with a scenario,
personality and an alternate greeting), the demo player's persona, the local model.

Everything is written through the services every other door uses, so the demo data obeys
the same rules (one default model config, a console user's player, bindings by character).
"""

from __future__ import annotations

import secrets

from django.core.management.base import BaseCommand
from django.db import transaction

from console.embedded import VAR_DIR
from console.models import Role, Tenant
from console.services import create_tenant, ensure_console_player, ensure_console_user
from roleplay.accounts import services as accounts
from roleplay.accounts.selectors import account_by_email
from roleplay.characters.services import characters
from roleplay.conversations.services import conversations
from roleplay.llm.configs import services as model_configs
from roleplay.llm.gateway import resolve_config
from roleplay.models import Character, Conversation, ModelConfig, Persona
from roleplay.players.services import personas

DEMO_USER = "demo"
DEMO_PLAYER = "player@example.com"  # the player app's demo account (same password)
CREDENTIALS = VAR_DIR / "demo-login.txt"

DEMO_DESCRIPTION = (
    "Mira is the keeper of the Greyport lighthouse: dry-humoured, observant, fond of tea and "
    "of strangers' stories. Greyport is a steam city without electricity; gas lamps light "
    "its streets at night."
)
DEMO_FIRST = "*Mira looks up from her logbook.* A visitor, at this hour? Come in out of the fog."
# The card fields a full character has; filled in on an older demo Mira that lacks them.
DEMO_CARD = {
    "personality": "Dry-humoured, patient, curious about strangers; hides worry behind tea.",
    "scenario": "A foggy night at the Greyport lighthouse. The lamp must be trimmed soon, "
    "and someone has knocked at the door.",
    "alternate_greetings": [
        "*The lamp hisses overhead as Mira trims its wick.* Careful on the stairs. "
        "You're soaked; the kettle's on."
    ],
    "tags": ["lighthouse", "steam city", "demo"],
}
DEMO_PERSONA = {
    "name": "Traveller",
    "description": "A traveller who came to Greyport on the evening boat, looking for "
    "somewhere dry to wait out the fog.",
}
DEMO_CONFIG = {
    "name": "Bundled demo model (gemma-3-270m)",
    "provider": "llama_cpp",
    "model": "gemma-3-270m-q4_k_m",
    "context_limit": 4096,
    "max_output_tokens": 160,
    "temperature": 0.8,
    "timeout_ms": 120_000,
}


DEMO_BOOK = {
    "name": "Greyport",
    "description": "Demo lore: a constant rule and a keyword-triggered one.",
    "entries": [
        {
            "id": "greyport",
            "title": "Greyport",
            "content": "Greyport is a steam city without electricity; gas lamps light it at night.",
            "constant": True,
        },
        {
            "id": "copper-key",
            "title": "The copper key",
            "content": "The copper key opens only the side door of the city gate. Guards must "
            "check a visitor's warrant before letting anyone through.",
            "keys": ["copper key", "gate", "guard"],
            "priority": 20,
        },
        {
            "id": "lighthouse",
            "title": "The lighthouse",
            "content": "Mira's lighthouse stands on the north breakwater; its lamp burns whale "
            "oil and must be trimmed every four hours.",
            "keys": ["lighthouse", "lamp", "fog"],
        },
    ],
}


def demo_password() -> str:
    if CREDENTIALS.exists():
        return CREDENTIALS.read_text().strip()
    CREDENTIALS.parent.mkdir(parents=True, exist_ok=True)
    password = secrets.token_urlsafe(9)
    CREDENTIALS.write_text(password)
    CREDENTIALS.chmod(0o600)
    return password


class Command(BaseCommand):
    help = "Create the demo tenant, login, character and local model config (idempotent)."

    @transaction.atomic
    def handle(self, *args, **options):
        tenant = Tenant.objects.filter(name="demo").first() or create_tenant("demo")
        password = demo_password()
        user, _ = ensure_console_user(tenant, DEMO_USER, password, Role.ADMIN)
        if not ModelConfig.objects.filter(tenant=tenant, name=DEMO_CONFIG["name"]).exists():
            model_configs.create_model_config(
                tenant,
                is_default=resolve_config(tenant) is None,
                is_demo=True,
                **DEMO_CONFIG,
            )
        character = Character.objects.filter(tenant=tenant, name="Mira").first()
        if character is None:
            character = characters.create_character(
                tenant,
                name="Mira",
                description=DEMO_DESCRIPTION,
                first_message=DEMO_FIRST,
                visibility="listed",  # in the player app's library from the first minute
                **DEMO_CARD,
            )
        missing = {name: value for name, value in DEMO_CARD.items() if not getattr(character, name)}
        if missing:
            characters.update_character(character, **missing)
        player = ensure_console_player(tenant, user, display_name="Traveller")
        if not Persona.objects.filter(player=player).exists():
            personas.create_persona(tenant, player=player, **DEMO_PERSONA)
        self._demo_worldbook(tenant, character)
        conversation = (
            Conversation.objects.filter(tenant=tenant, player=player, character=character)
            .order_by("created_at")
            .first()
        ) or conversations.start_conversation(
            tenant, player=player, character=character, title="Demo conversation"
        )
        if account_by_email(tenant, DEMO_PLAYER) is None:
            accounts.create_account(
                tenant, email=DEMO_PLAYER, password=password, display_name="Guest"
            )
        self.stdout.write(
            f"login={DEMO_USER} password={password} conversation={conversation.id}"
            f" player={DEMO_PLAYER}"
        )

    def _demo_worldbook(self, tenant, character) -> None:
        """A small lorebook bound to the demo character, so turns show worldbook selection."""
        from worldbook import services as books
        from worldbook.engine.schema import BookIn
        from worldbook.models import Book

        if Book.objects.filter(tenant=tenant, name=DEMO_BOOK["name"]).exists():
            return
        book, _ = books.create_book(tenant, BookIn.model_validate(DEMO_BOOK))
        books.put_bindings(tenant, str(character.id), [{"book_id": str(book.id)}])
