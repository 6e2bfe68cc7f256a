"""PostgreSQL or Redis restarted in the middle of a streamed turn, under a real daphne.

PostgreSQL: the reply cannot be saved while the database is down, so the player gets an
``error`` event (``storage_unavailable``) at once; when the database is back the turn is
closed as ``failed`` with the partial reply kept, and the next turn succeeds on the same
socket, with no process restarted (the connection pool replaces its dead connections).
The database is a cluster of the test's own, so no other user of the shared server sees it
go down.

Redis: the player's own stream does not go through Redis (the turn runs in the process of
the socket that sent the message), so the turn ends normally; the next turn succeeds once
Redis is back, and nothing is left running.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
import websockets
from asgiref.sync import sync_to_async
from django.conf import settings

from console import embedded
from console.live_server import database_url_for, start_daphne
from console.tickets import issue_ticket
from roleplay.llm.scripted_server import Reply

SLOW = Reply(content=" ".join(f"word{i}" for i in range(20)), chunks=20, chunk_delay=0.2)
SETUP = """
import json
from console.services import create_tenant
from console.models import Player
from console.tickets import issue_ticket
from roleplay.models import Character, Conversation, ModelConfig
tenant = create_tenant("faults")
ModelConfig.objects.create(tenant=tenant, name="scripted", provider="openai_compatible",
    model="scripted-model", base_url=BASE_URL, timeout_ms=20000, is_default=True)
player = Player.objects.create(tenant=tenant, external_id="p", display_name="Ann")
character = Character.objects.create(tenant=tenant, name="Mira")
conversation = Conversation.objects.create(tenant=tenant, player=player, character=character)
print(json.dumps({"conversation": str(conversation.id), "ticket": issue_ticket(conversation)[0]}))
"""


def manage(database_url: str, *args: str) -> str:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": settings.REDIS_URL,
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "SECRET_KEY": settings.SECRET_KEY,
    }
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def frame(client_id: str) -> str:
    return json.dumps({"type": "user_message", "client_message_id": client_id, "content": "Hi"})


async def until_end(socket, on_first_delta=None) -> list[dict]:
    events: list[dict] = []
    while True:
        event = json.loads(await asyncio.wait_for(socket.recv(), 60))
        events.append(event)
        if event["type"] == "delta" and on_first_delta is not None and event["seq"] == 0:
            await asyncio.to_thread(on_first_delta)
        if event["type"] in ("turn.completed", "error"):
            return events


@pytest.fixture
def own_database(embedded_servers):
    """A PostgreSQL cluster of this test's own, migrated: (server, url). Not under pytest's
    base directory, which pytest keeps private to root (the server runs as another user)."""
    directory = Path(tempfile.mkdtemp(prefix="rp-pg-"))
    server = embedded.EmbeddedPostgres(directory / "pgdata")
    try:
        url = server.join()
        manage(url, "migrate", "--no-input", "-v0")
        yield server, url
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


def test_a_database_restart_mid_turn(own_database, llm):
    server, url = own_database
    script = f"BASE_URL={llm.base_url!r}\n" + SETUP
    facts = json.loads(manage(url, "shell", "-v0", "-c", script).splitlines()[-1])
    daphne = start_daphne(url, settings.REDIS_URL)
    conninfo = url.replace("postgres://", "postgresql://", 1)
    try:
        path = f"/ws/conversations/{facts['conversation']}/?ticket={quote(facts['ticket'])}"
        llm.enqueue(SLOW)

        async def scenario():
            async with websockets.connect(daphne.ws_url + path) as socket:
                await socket.send(frame("pg-1"))
                events = await until_end(socket, on_first_delta=server.stop)
                error = events[-1]
                assert error["type"] == "error" and error["code"] == "storage_unavailable", error
                await socket.send(frame("pg-down"))  # while it is still down
                refused = json.loads(await asyncio.wait_for(socket.recv(), 60))
                assert refused["type"] == "error" and refused["code"] == "storage_unavailable"
                await asyncio.to_thread(server.start)
                await asyncio.to_thread(wait_closed, conninfo, error["turn_id"])
                assert daphne.process.poll() is None
                await socket.send(frame("pg-2"))
                return error, await until_end(socket)

        error, events = asyncio.run(scenario())
        assert events[-1]["type"] == "turn.completed", events[-1]
        with psycopg.connect(conninfo) as conn:
            status, content = conn.execute(
                "SELECT status, content FROM memory_message WHERE id = %s",
                (error["assistant_message_id"],),
            ).fetchone()
            assert status == "failed" and content.startswith("word0")
            running = conn.execute(
                "SELECT count(*) FROM roleplay_turn WHERE status = 'running'"
            ).fetchone()[0]
            assert running == 0
    finally:
        daphne.stop()


def wait_closed(conninfo: str, turn_id: str, timeout: float = 90) -> None:
    """Until the turn is no longer ``running`` (closed by the background retry)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with psycopg.connect(conninfo, connect_timeout=2) as conn:
                row = conn.execute(
                    "SELECT status FROM roleplay_turn WHERE id = %s", (turn_id,)
                ).fetchone()
                if row and row[0] != "running":
                    return
        except psycopg.OperationalError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"turn {turn_id} was never closed")


@pytest.fixture
def own_redis():
    """A Redis of this test's own: restarting it disturbs nothing else of the run."""
    directory = Path(tempfile.mkdtemp(prefix="rp-redis-"))
    server = embedded.EmbeddedRedis(directory / "redis", persist=False)
    try:
        yield server, server.join()
    finally:
        server.leave()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.django_db(transaction=True)
def test_a_redis_restart_mid_turn(own_redis, conversation, llm):
    from django.db import connection

    from roleplay.models import Turn

    redis, redis_url = own_redis
    daphne = start_daphne(database_url_for(connection.settings_dict), redis_url)
    llm.enqueue(SLOW)

    def restart() -> None:
        redis.stop()
        redis.start()

    async def scenario():
        ticket, _ = await sync_to_async(issue_ticket)(conversation)
        path = f"/ws/conversations/{conversation.id}/?ticket={quote(ticket)}"
        async with websockets.connect(daphne.ws_url + path) as socket:
            await socket.send(frame("redis-1"))
            first = await until_end(socket, on_first_delta=restart)
            await socket.send(frame("redis-2"))
            return first, await until_end(socket)

    try:
        first, second = asyncio.run(scenario())
        assert daphne.process.poll() is None
    finally:
        daphne.stop()
    assert first[-1]["type"] == "turn.completed", first[-1]
    assert len([e for e in first if e["type"] == "delta"]) == 20
    assert second[-1]["type"] == "turn.completed", second[-1]
    assert not Turn.objects.filter(conversation=conversation, status="running").exists()
