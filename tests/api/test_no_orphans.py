"""Deleting through the API leaves no row of any table behind that names what was deleted.

Two object graphs of one tenant are built through the API, and each has a real chat turn
(socket, scripted model, a bound worldbook), so every table the product writes for a
conversation has rows: messages, turns, model calls, worldbook timed state and bindings.
After one DELETE, every table of every installed model is scanned for rows that still name a
deleted id, by foreign key or as text in any column (``session_id``, ``prompt_id``, JSON...).
A model added later that keeps rows by conversation, character or player id and is not
cleaned up by the services makes this fail without anyone listing it here; so does one whose
foreign key blocks the delete.
"""

from __future__ import annotations

import json
import uuid

import pytest
from asgiref.sync import sync_to_async
from django.apps import apps
from django.db import connection, models

from console.asgi import application
from console.management.commands.seed_demo import DEMO_BOOK
from console.models import Player
from roleplay.llm.scripted_server import Reply
from roleplay.models import Character, Conversation, ModelConfig, Turn
from tests.api.helpers import db_snapshot
from tests.ws.test_chat_socket import Socket, receive_until
from worldbook import services as worldbooks
from worldbook.engine.schema import BookIn

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

RESOURCES = {
    "model-configs": ModelConfig,
    "characters": Character,
    "players": Player,
    "conversations": Conversation,
}


def _created(response) -> dict:
    assert response.status_code == 201, response.content
    return response.json()


def _build(api, tenant, base_url: str, label: str) -> dict:
    """A model config, character (with a bound book), player and conversation, all made
    through the API; returns their ids by resource."""
    config = _created(
        api.post(
            "/api/v1/model-configs/",
            {
                "name": f"{label}-config",
                "provider": "openai_compatible",
                "model": "scripted-model",
                "base_url": base_url,
                "context_limit": 4096,
                "max_output_tokens": 256,
                "timeout_ms": 5000,
            },
            format="json",
        )
    )
    character = _created(
        api.post(
            "/api/v1/characters/",
            {"name": f"{label}-char", "first_message": "Hi.", "model_config": config["id"]},
            format="json",
        )
    )
    player = _created(api.post("/api/v1/players/", {"external_id": label}, format="json"))
    conversation = _created(
        api.post(
            "/api/v1/conversations/",
            {"player": player["id"], "character": character["id"]},
            format="json",
        )
    )
    # A sticky entry the chat turn triggers, so the conversation has timed-effect state.
    sticky = {"id": "lamp-sticky", "keys": ["lamp"], "content": "The lamp burns.", "sticky": 2}
    entries = [*DEMO_BOOK["entries"], sticky]
    book, _ = worldbooks.create_book(
        tenant, BookIn.model_validate({**DEMO_BOOK, "name": f"{label}-book", "entries": entries})
    )
    worldbooks.put_bindings(tenant, character["id"], [{"book_id": str(book.id)}])
    return {
        "model-configs": config["id"],
        "characters": character["id"],
        "players": player["id"],
        "conversations": conversation["id"],
    }


async def _chat_turn(api, conversation_id: str, llm) -> None:
    """One turn over the socket, with a ticket from the API."""
    ticket = await sync_to_async(api.post)(f"/api/v1/conversations/{conversation_id}/ws-ticket/")
    comm = Socket(application, _created(ticket)["url"])
    connected, _ = await comm.connect()
    assert connected
    llm.enqueue(Reply(content="The lamp is lit.", chunks=3))
    frame = {"type": "user_message", "client_message_id": "c1", "content": "The fog, the lamp?"}
    await comm.send_to(text_data=json.dumps(frame))
    events = await receive_until(comm, "turn.completed")
    assert events[-1]["type"] == "turn.completed", events[-1]
    await comm.disconnect()


def _graph_ids(ids: dict) -> dict[type[models.Model], set]:
    """Primary keys of every row of a graph that is not a message: its four objects and the
    conversation's turns (messages are found by their ``session_id``)."""
    return {
        **{RESOURCES[name]: {pk} for name, pk in ids.items()},
        Turn: set(
            Turn.objects.filter(conversation_id=ids["conversations"]).values_list("pk", flat=True)
        ),
    }


def _gone(graph: dict[type[models.Model], set]) -> dict[type[models.Model], set]:
    """The ids of ``graph`` whose rows no longer exist."""
    out = {}
    for model, pks in graph.items():
        kept = {str(pk) for pk in model.objects.filter(pk__in=pks).values_list("pk", flat=True)}
        out[model] = {pk for pk in pks if str(pk) not in kept}
    return out


def _tables():
    return [m for m in apps.get_models() if m._meta.managed and not m._meta.proxy]


def _outlives(model: type[models.Model]) -> set[type[models.Model]]:
    """Models that ``model`` points at with ``SET_NULL``: its rows are meant to outlive theirs
    (a turn keeps its trace when its model config goes), so only that foreign key must be
    cleared; a mention in the row's own history is not an orphan."""
    return {
        field.related_model
        for field in model._meta.concrete_fields
        if field.is_relation and field.remote_field.on_delete is models.SET_NULL
    }


def rows_naming(gone: dict[type[models.Model], set]) -> dict[str, int]:
    """Table -> rows that still name a deleted id: by a foreign key to the deleted row, or,
    for ids that cannot be mistaken for anything else (UUIDs), as text anywhere in the row."""
    found: dict[str, int] = {}
    for model in _tables():
        table = connection.ops.quote_name(model._meta.db_table)
        conditions, params = [], []
        for field in model._meta.concrete_fields:
            target = getattr(field, "related_model", None)
            if field.is_relation and gone.get(target):
                conditions.append(f"{connection.ops.quote_name(field.column)} = ANY(%s)")
                params.append([target._meta.pk.to_python(pk) for pk in gone[target]])
        outlives = _outlives(model)
        texts = [
            f"%{pk}%"
            for target, pks in gone.items()
            if target not in outlives
            for pk in pks
            if _is_uuid(pk)
        ]
        if texts:
            conditions.append("t::text LIKE ANY(%s)")
            params.append(texts)
        if not conditions:
            continue
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT count(*) FROM {table} t WHERE {' OR '.join(conditions)}", params
            )
            count = cursor.fetchone()[0]
        if count:
            found[model._meta.db_table] = count
    return found


def _is_uuid(value) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


EXPECTED_GONE = {
    # resource deleted -> resources that go with it (the rest of the graph stays)
    "model-configs": {"model-configs"},
    "characters": {"characters", "conversations"},
    "players": {"players", "conversations"},
    "conversations": {"conversations"},
}


@pytest.mark.parametrize("resource", sorted(RESOURCES))
async def test_delete_leaves_no_rows_naming_what_went(resource, api, tenant, llm):
    target = await sync_to_async(_build)(api, tenant, llm.base_url, "target")
    control = await sync_to_async(_build)(api, tenant, llm.base_url, "control")
    for ids in (target, control):
        await _chat_turn(api, ids["conversations"], llm)
    target_graph = await sync_to_async(_graph_ids)(target)
    control_graph = await sync_to_async(_graph_ids)(control)
    control_rows = await sync_to_async(rows_naming)(control_graph)
    before = await sync_to_async(db_snapshot)()
    # The world really has what must be cleaned: stored messages, worldbook state, bindings.
    for table in ("memory_message", "worldbook_timedeffectstate", "worldbook_promptbinding"):
        assert control_rows.get(table), (table, control_rows)

    response = await sync_to_async(api.delete)(f"/api/v1/{resource}/{target[resource]}/")
    assert response.status_code == 204, response.content

    gone = await sync_to_async(_gone)(target_graph)
    gone_resources = {name for name, model in RESOURCES.items() if gone[model]}
    assert gone_resources == EXPECTED_GONE[resource]
    assert await sync_to_async(rows_naming)(gone) == {}
    # Only the target's rows went: the control graph is whole, and no table grew.
    assert await sync_to_async(rows_naming)(control_graph) == control_rows
    after = await sync_to_async(db_snapshot)()
    assert [t for t in before if after[t][0] > before[t][0]] == []


async def test_every_installed_model_is_scanned():
    """The scan reads the model registry, so a new model is covered as soon as it exists."""
    scanned = {m._meta.db_table for m in _tables()}
    for app in ("console", "memory", "roleplay", "worldbook"):
        for model in apps.get_app_config(app).get_models():
            assert model._meta.db_table in scanned
