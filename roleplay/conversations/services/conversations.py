"""Writes of conversations: start (with every choice, or in one click with the defaults),
change, pick the opening, and delete with everything kept by their id.

Other capabilities key their rows by the conversation id as text, without a foreign key, so
they stand alone (the message store's ``session_id``, worldbook's timed-effect state). A
database cascade cannot reach those rows: every deletion of conversations, whether of one,
or of a character's or a player's, goes through :func:`delete_conversations`.
"""

from __future__ import annotations

from django.db import transaction

from images.services.slots import delete_slots_of_conversation
from memory import forks
from memory.forget import forget
from roleplay.characters.selectors import greeting_choices, greeting_for
from roleplay.conversations.services.messages import quiet
from roleplay.errors import HasBranches, NotFound, TurnInProgress
from roleplay.models import (
    Conversation,
    ConversationStatus,
    ModelConfig,
    Persona,
    Scenario,
)
from roleplay.prompting.notes import normalise_note, note_problems
from roleplay.services import rows
from roleplay.turns.records import live_turns
from worldbook import services as worldbooks

CONVERSATION_FIELDS = (
    "player",
    "character",
    "model_config",
    "persona",
    "greeting_index",
    "title",
    "status",
    "author_note",
    "scenario",
    # a group's settings (``roleplay.groups``)
    "group_mode",
    "join_cards",
    "allow_self_responses",
    "auto_turns",
    "auto_delay_ms",
)


def start_conversation(
    tenant,
    *,
    character,
    player,
    model_config: ModelConfig | None = None,
    persona: Persona | None = None,
    greeting_index: int = 0,
    title: str = "",
    status: str = ConversationStatus.ACTIVE,
    author_note: dict | None = None,
    scenario: Scenario | None = None,
    **group_settings,
) -> Conversation:
    """A new conversation of ``player`` with ``character``; all three related objects must be
    the tenant's own. ``persona`` is one of the player's (None: the player's default, see
    ``selectors.persona_for``); ``greeting_index`` picks the opening: 0 the character's first
    message, n its n-th alternate greeting; ``author_note`` (``prompting.notes``) replaces
    the character's; ``scenario`` replaces the character's default scenario;
    ``group_settings`` a group's ``group_mode``, ``join_cards``,
    ``allow_self_responses``, ``auto_turns``, ``auto_delay_ms`` (``roleplay.groups``;
    members join through its services)."""
    fields = dict(
        character=character,
        player=player,
        model_config=model_config,
        persona=persona,
        greeting_index=greeting_index,
        title=title,
        status=status,
        author_note=author_note or {},
        scenario=scenario,
        **group_settings,
    )
    return _write(Conversation(tenant=tenant), fields, update=False)


def start_chat(tenant, *, character, player) -> Conversation:
    """A conversation of ``player`` with ``character`` on the defaults, for a one-click
    "Chat": the character's model config and scenario, the player's default persona, and
    the card's first message as the opening (its first alternate greeting when the first
    message is empty; none when the card has neither)."""
    openings = [index for index, text in greeting_choices(character) if text.strip()]
    return start_conversation(
        tenant,
        character=character,
        player=player,
        greeting_index=openings[0] if openings else None,
    )


@transaction.atomic
def select_opening(conversation: Conversation, index: int) -> Conversation:
    """Open the conversation with greeting ``index`` instead (0 the card's first message, n
    its n-th alternate greeting), as swiping the first message does. The chat page offers
    it only before the first message, as SillyTavern does; like ``greeting_index`` through
    :func:`update_conversation`, the service itself allows it at any time."""
    quiet(conversation)
    conversation = Conversation.objects.select_related("character").get(pk=conversation.pk)
    choices = greeting_choices(conversation.character)
    if index not in dict(choices):
        raise NotFound(
            "opening_not_found",
            f"the character has no opening {index}",
            {"index": index, "greetings": len(choices)},
        )
    return update_conversation(conversation, greeting_index=index)


def opening_state(conversation: Conversation) -> dict:
    """What a page shows of the opening: which greeting, of how many, and its text."""
    return {
        "greeting_index": conversation.greeting_index,
        "greetings": len(greeting_choices(conversation.character)),
        "opening": greeting_for(conversation),
    }


def update_conversation(conversation: Conversation, **fields) -> Conversation:
    return _write(conversation, fields, update=True)


def _write(conversation: Conversation, fields: dict, update: bool) -> Conversation:
    normalise_note(fields)
    return rows.write(
        conversation,
        fields,
        allowed=CONVERSATION_FIELDS,
        related=("player", "character", "model_config", "persona", "scenario"),
        update=update,
        rules=_rules,
    )


def _rules(conversation: Conversation) -> dict[str, list[str]]:
    """The persona must be the player's and the greeting one the character has (judged on
    the values the row will hold, so changing the player or character re-checks them)."""
    problems: dict[str, list[str]] = {}
    if found := note_problems(conversation.author_note):
        problems["author_note"] = found
    persona = conversation.persona
    if persona is not None and persona.player_id != conversation.player_id:
        problems["persona"] = ["not one of this conversation's player's personas"]
    index = conversation.greeting_index
    if isinstance(index, int) and conversation.character_id is not None:
        count = len(conversation.character.alternate_greetings or [])
        if index > count:
            problems["greeting_index"] = [
                f"the character has {count} alternate greeting(s): choose 0 (its first "
                f"message) to {count}"
            ]
    return problems


def delete_conversation(conversation: Conversation) -> None:
    delete_conversations(conversation.tenant, Conversation.objects.filter(pk=conversation.pk))


@transaction.atomic
def delete_conversations(tenant, conversations) -> int:
    """Delete the tenant's ``conversations`` (a queryset), their turns, stored messages,
    memory documents, worldbook state and pictures (rows and files); returns how many went.

    The rows are locked first, so a turn cannot start in them meanwhile; a turn still
    generating (its lease is live) would store its reply after the delete, so it makes the
    whole call a :class:`TurnInProgress` and nothing is deleted. A turn whose process died
    (lease expired) does not block. A conversation with a branch not deleted with it is a
    :class:`HasBranches` (the branch reads its history from it: docs/branches.md).
    """
    ids = list(conversations.filter(tenant=tenant).select_for_update().values_list("id", flat=True))
    busy = (
        live_turns()
        .filter(conversation_id__in=ids)
        .values_list("conversation_id", flat=True)
        .first()
    )
    if busy is not None:
        raise TurnInProgress(
            message=f"a reply is being generated in conversation {busy}; retry when it ends",
            details={"conversation_id": str(busy)},
        )
    kept = Conversation.objects.filter(parent_id__in=ids).exclude(pk__in=ids)
    branch = kept.values_list("parent_id", "id").first()
    if branch is not None:  # its history is read from the parent's messages
        raise HasBranches(
            message=f"conversation {branch[0]} has branches: delete them first",
            details={"conversation_id": str(branch[0]), "branch": str(branch[1])},
        )
    forks.forget(tenant, [str(i) for i in ids])
    for conversation_id in ids:  # messages, session memory, documents, handoffs, pictures
        forget(tenant, scope="session", session_id=str(conversation_id))
        delete_slots_of_conversation(tenant, conversation_id)
    worldbooks.forget_conversations(tenant, ids)
    Conversation.objects.filter(pk__in=ids).delete()
    return len(ids)
