"""Shared fixtures: real PostgreSQL + Redis (embedded by default), a scripted model server."""

from __future__ import annotations

import pytest

from roleplay.llm.scripted_server import Reply, ScriptedOpenAIServer
from tests import servers


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """Start (or join) PostgreSQL and the run's private Redis before the test database is
    made: the first test that needs the database starts them, engine tests start nothing."""
    servers.start()


@pytest.fixture(scope="session")
def embedded_servers():
    """For tests that use Redis without the database."""
    servers.start()


@pytest.fixture(scope="session", autouse=True)
def _test_database_can_be_dropped(django_db_setup, django_db_blocker):
    """At the end of the session, before the test database is dropped: end the sessions
    still open on it. Worker threads of this process (``sync_to_async``, the database thread
    pool) keep the connections they borrowed, and a daphne child stopped a moment ago may
    not have left yet; either would make the drop fail ("being accessed by other users")."""
    yield
    from django.db import connections

    from roleplay.turns import heartbeat

    heartbeat.stop()  # before the run's Redis stops under it

    with django_db_blocker.unblock():
        connection = connections["default"]
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        connections.close_all()
        if hasattr(connection, "close_pool"):
            connection.close_pool()


@pytest.fixture(scope="module")
def daphne_child(django_db_setup, django_db_blocker):
    """A daphne child serving the app on the test database and the run's Redis."""
    from django.conf import settings
    from django.db import connection

    from console.live_server import database_url_for, start_daphne

    with django_db_blocker.unblock():
        server = start_daphne(database_url_for(connection.settings_dict), settings.REDIS_URL)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def scripted_server():
    server = ScriptedOpenAIServer(default=Reply(content="Hello from the scripted model.", chunks=4))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def llm(scripted_server):
    """The scripted OpenAI-compatible server, with an empty script for this test."""
    scripted_server.clear()
    scripted_server.default = Reply(content="Hello from the scripted model.", chunks=4)
    return scripted_server


@pytest.fixture
def make_tenant(db):
    from console.models import Tenant

    counter = iter(range(1, 10_000))

    def make(name: str | None = None):
        return Tenant.objects.create(name=name or f"tenant-{next(counter)}")

    return make


@pytest.fixture
def fast_hashing(settings):
    """Passwords hashed quickly, for tests in this process only (a live server child keeps
    the real hashers)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def tenant(make_tenant):
    return make_tenant("acme")


@pytest.fixture
def other_tenant(make_tenant):
    return make_tenant("globex")


@pytest.fixture
def api_client_for(db):
    """``api_client_for(tenant, scopes=[...])`` → an APIClient with a fresh bearer token."""
    from rest_framework.test import APIClient

    from console.services import create_api_token

    def make(tenant, scopes=("admin",)):
        _token, raw = create_api_token(tenant, "test", list(scopes))
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        client.raw_token = raw
        return client

    return make


@pytest.fixture
def api(api_client_for, tenant):
    return api_client_for(tenant)


@pytest.fixture
def model_config(tenant, llm):
    from roleplay.models import ModelConfig

    return ModelConfig.objects.create(
        tenant=tenant,
        name="scripted",
        provider="openai_compatible",
        model="scripted-model",
        base_url=llm.base_url,
        context_limit=4096,
        max_output_tokens=256,
        timeout_ms=5000,
        is_default=True,
    )


@pytest.fixture
def character(tenant):
    from roleplay.models import Character

    return Character.objects.create(
        tenant=tenant, name="Mira", description="A lighthouse keeper.", first_message="Welcome."
    )


@pytest.fixture
def player(tenant):
    from console.models import Player

    return Player.objects.create(tenant=tenant, external_id="p-1", display_name="Ann")


@pytest.fixture
def conversation(tenant, player, character, model_config):
    from roleplay.models import Conversation

    return Conversation.objects.create(tenant=tenant, player=player, character=character)


@pytest.fixture
def operator_user(tenant):
    from console.services import ensure_console_user

    user, _ = ensure_console_user(tenant, "op", "pw-op-123456", "operator")
    return user


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, tmp_path_factory):
    """A ``--pool solo`` worker on a private queue, for the whole session.

    Depends on ``django_db_setup`` so it starts after the test database exists and is
    stopped before that database is dropped.
    """
    from tests.background.processes import start_worker

    worker = start_worker(tmp_path_factory.mktemp("celery"))
    try:
        yield worker
    finally:
        worker.stop()


@pytest.fixture
def celery_worker(celery_worker_process):
    """The session's worker; tasks sent with ``.delay()`` during this test go to its queue.
    Outside such tests they go to the default queue nobody here consumes, so a turn of
    another test never has background work run against the scripted model meanwhile."""
    from console.celery import app

    previous = app.conf.task_default_queue
    app.conf.task_default_queue = celery_worker_process.queue
    try:
        yield celery_worker_process
    finally:
        app.conf.task_default_queue = previous
        _drain(celery_worker_process)


def _drain(worker, timeout: float = 60.0) -> None:
    """Wait until the worker has nothing queued or running: a turn's background work (recall
    indexing, the memory pack, a planning run) must not write while the test's database is
    flushed, nor into the next test."""
    import time

    from console.celery import app

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with app.connection_for_write() as connection:
            waiting = connection.default_channel.client.llen(worker.queue)
        inspect = app.control.inspect([worker.hostname], timeout=1.0)
        # A solo worker running a task does not answer: no answer is "busy".
        busy = [
            (answer or {}).get(worker.hostname) is None or answer[worker.hostname]
            for answer in (inspect.active(), inspect.reserved())
        ]
        if not waiting and not any(busy):
            return
        time.sleep(0.1)
