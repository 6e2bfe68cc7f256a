"""A chat turn reads every lorebook scope's books (global, the character's, its own chat's):
the strategy in force decides which scope's entries the token budget keeps (chat lore first,
then SillyTavern's ``world_info_character_strategy``), the kept ones reach the Actor in
ascending ``order``, and the trace names each selected entry's scope (docs/worldbook.md,
"Lorebook scopes")."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from roleplay.models import Conversation, Scenario, Turn
from tests.ws.test_chat_socket import connect, receive_until
from worldbook import services
from worldbook.engine.schema import BookIn

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

LORE = {
    "global": "The harbour bell rings at every change of watch.",
    "prompt": "Mira keeps a logbook of every ship that passes.",
    "chat": "Ann once saved Mira from the winter storm.",
}


# Placement order: ascending ``order`` (SillyTavern's), whatever the scope.
ORDERS = {"global": 50, "prompt": 70, "chat": 100}
# Two of the three entries fit (about 56 tokens each with their wrapper).
TOKEN_BUDGET = 150


def _book(tenant, scope: str):
    entry = {
        "id": f"{scope}-lore",
        "title": f"{scope} lore",
        "content": LORE[scope],
        "keys": ["hello"],
        "position": "before_character",
        "order": ORDERS[scope],
    }
    book, _ = services.create_book(
        tenant, BookIn.model_validate({"name": f"{scope} book", "entries": [entry]})
    )
    return str(book.id)


def _bind_every_scope(tenant, character, conversation) -> dict[str, str]:
    scenario = Scenario.objects.create(
        tenant=tenant,
        name="Tight budget",
        worldbook={"strategy": "rules", "tokenBudget": TOKEN_BUDGET},
    )
    Conversation.objects.filter(pk=conversation.pk).update(scenario=scenario)
    ids = {scope: _book(tenant, scope) for scope in LORE}
    services.put_bindings(tenant, "", [{"book_id": ids["global"]}], scope="global")
    services.put_bindings(tenant, str(character.id), [{"book_id": ids["prompt"]}])
    services.put_bindings(tenant, str(conversation.pk), [{"book_id": ids["chat"]}], scope="chat")
    return ids


async def _turn(conversation, llm, client_id: str) -> tuple[str, dict]:
    comm = await connect(conversation)
    await comm.send_to(
        text_data=json.dumps(
            {"type": "user_message", "client_message_id": client_id, "content": "Hello"}
        )
    )
    events = await receive_until(comm, "turn.completed")
    assert events[-1]["type"] == "turn.completed", events[-1]
    await comm.disconnect()
    turn = await Turn.objects.aget(pk=events[0]["turn_id"])
    # The whole prompt: keyword lore is per-turn context, which the shipped cache-aware
    # layout places after the history (docs/prompt.md), not in the first system message.
    messages = llm.requests[-1]["messages"]
    return "\n".join(m["content"] for m in messages), turn.trace["worldbook"]


def _placed(system: str) -> list[str]:
    """The scopes whose entry the Actor's prompt holds, in prompt order."""
    found = [scope for scope in LORE if LORE[scope] in system]
    return sorted(found, key=lambda scope: system.index(LORE[scope]))


async def test_every_scope_reaches_the_actor_in_the_strategys_order(
    conversation, character, tenant, llm
):
    ids = await sync_to_async(_bind_every_scope)(tenant, character, conversation)
    # character_first (the default): the chat's entry is considered first, then the
    # character's; the global one no longer fits. They are placed by ascending order.
    system, trace = await _turn(conversation, llm, "s1")
    assert _placed(system) == ["prompt", "chat"], trace["excluded"]
    assert system.index("You are Mira") < system.index(LORE["chat"])  # per turn: late
    scopes = trace["scopes"]
    assert scopes["strategy"] == "character_first" and scopes["cut"] == []
    assert [(b["scope"], b["book_id"]) for b in scopes["books"]] == [
        ("chat", ids["chat"]),
        ("prompt", ids["prompt"]),
        ("global", ids["global"]),
    ]
    assert {s["id"].split(":")[-1]: s["scope"] for s in trace["selected"]} == {
        "prompt-lore": "prompt",
        "chat-lore": "chat",
    }
    # global_first, the tenant's choice: the global entry now wins over the character's,
    # although its order is lower; the chat's still comes first.
    await sync_to_async(services.set_scope_strategy)(tenant, "global_first")
    system, trace = await _turn(conversation, llm, "s2")
    assert trace["scopes"]["strategy"] == "global_first"
    # The chat's entry, the same as in the turn before, stays where that turn sent it
    # (``prompting.anchoring``); the global one, new, goes to the marker after it.
    assert _placed(system) == ["chat", "global"]
    assert {s["scope"] for s in trace["selected"]} == {"global", "chat"}
