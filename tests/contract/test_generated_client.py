"""An integrator's path: generate a Python client from ``/api/schema/`` and use it.

``openapi-python-client`` runs offline on the served document, with warnings as failures
(it drops an operation it cannot read, with only a warning). The generated package is then
imported and driven against daphne serving the real ASGI app: set up a model, create a
character and a player, start a conversation, chat one turn over the socket the API hands out
a ticket for, and read the conversation's messages back, all through generated code.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from console.schema import operations
from roleplay.llm.scripted_server import Reply

PACKAGE = "roleplay_client"
REPLY = "The lamp is lit. Sit down."


@pytest.fixture(scope="module")
def generated(served_document, tmp_path_factory) -> Path:
    """The generated package's parent directory (the package is ``roleplay_client``)."""
    workdir = tmp_path_factory.mktemp("generated")
    document = workdir / "openapi.json"
    document.write_text(json.dumps(served_document))
    config = workdir / "config.json"
    # Images (avatars, PNG cards) and backup archives are bytes to a client; the generator
    # reads only application/octet-stream as bytes unless told.
    overrides = {
        "image/png": "application/octet-stream",
        "application/zip": "application/octet-stream",
    }
    settings = {"package_name_override": PACKAGE, "post_hooks": []}
    config.write_text(json.dumps({**settings, "content_type_overrides": overrides}))
    result = subprocess.run(
        [sys.executable, "-m", "openapi_python_client", "generate", "--path", str(document),
         "--config", str(config), "--meta", "none", "--output-path", str(workdir / PACKAGE),
         "--fail-on-warning"],
        capture_output=True, text=True, timeout=300, cwd=workdir,
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "warning" not in output.lower(), output
    return workdir


@pytest.fixture(scope="module")
def client_module(generated):
    """``client_module(operation_id)``: the generated module of that operation."""
    sys.path.insert(0, str(generated))
    try:
        yield lambda name: importlib.import_module(f"{PACKAGE}.{name}")
    finally:
        sys.path.remove(str(generated))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def test_every_operation_is_generated(served_document, generated):
    modules = {path.stem for path in (generated / PACKAGE / "api").rglob("*.py")}
    for path, method, operation in operations(served_document):
        assert operation["operationId"] in modules, f"{method.upper()} {path} was not generated"


@pytest.mark.django_db(transaction=True)
def test_round_trip_through_the_generated_client(
    served_document, client_module, live_server_url, tenant, llm
):
    from websockets.sync.client import connect

    from console.services import create_api_token

    llm.enqueue(Reply(content=REPLY, chunks=3))
    _token, raw = create_api_token(tenant, "integrator", ["admin"])
    package = client_module("client")
    models = client_module("models")
    api = _operations(served_document, client_module)
    client = package.AuthenticatedClient(base_url=live_server_url, token=raw)

    config = _created(
        api["api_v1_model_configs_create"],
        client,
        models.ModelConfigRequest(
            name="scripted",
            provider=models.ProviderEnum.OPENAI_COMPATIBLE,
            model="scripted-model",
            base_url=llm.base_url,
            context_limit=4096,
            max_output_tokens=256,
            is_default=True,
        ),
    )
    character = _created(
        api["api_v1_characters_create"],
        client,
        models.CharacterRequest(name="Mira", first_message="Welcome.", model_config=config.id),
    )
    player = _created(api["api_v1_players_create"], client, models.PlayerRequest(external_id="p1"))
    conversation = _created(
        api["api_v1_conversations_create"],
        client,
        models.ConversationRequest(player=player.id, character=character.id),
    )
    assert conversation.character == character.id and conversation.player == player.id

    ticket = api["api_v1_conversations_ws_ticket_create"].sync(id=conversation.id, client=client)
    socket_url = live_server_url.replace("http://", "ws://", 1) + ticket.url
    with connect(socket_url, open_timeout=30) as socket:
        frame = {"type": "user_message", "client_message_id": "c1", "content": "Where am I?"}
        socket.send(json.dumps(frame))
        events = _events_until(socket, "turn.completed")
    assert events[-1]["type"] == "turn.completed", events

    listing = api["api_v1_conversations_messages_retrieve"].sync(id=conversation.id, client=client)
    assert [(m.role, m.content) for m in listing.results][-2:] == [
        ("user", "Where am I?"),
        ("assistant", REPLY),
    ]
    # Errors decode into the documented Error model.
    missing = api["api_v1_characters_retrieve"].sync_detailed(id=uuid.uuid4(), client=client)
    assert missing.status_code == 404
    assert missing.parsed.error.code == "not_found"


def _operations(document, client_module) -> dict:
    """The generated module of every operation, by operationId (its tag is its package)."""
    return {
        op["operationId"]: client_module(f"api.{op['tags'][0]}.{op['operationId']}")
        for _path, _method, op in operations(document)
    }


def _created(operation, client, body):
    response = operation.sync_detailed(client=client, body=body)
    assert response.status_code == 201, response.content[:500]
    return response.parsed


def _events_until(socket, kind: str, timeout: float = 30) -> list[dict]:
    events = []
    while True:
        event = json.loads(socket.recv(timeout=timeout))
        events.append(event)
        if event["type"] in (kind, "error"):
            return events
