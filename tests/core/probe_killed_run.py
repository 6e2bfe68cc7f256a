"""Not collected by default: ``test_run_isolation`` runs it as a test run of its own and
kills that run outright. It starts what a test run starts (a Celery worker, a daphne, the
local model process, the run's private Redis and test database), writes their pids to
``$PROBE_OUT``, then waits to be killed."""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest
from django.conf import settings
from django.db import connection

from console import embedded
from console.live_server import database_url_for, start_daphne
from tests.background.processes import start_worker


@pytest.mark.skipif(not os.environ.get("PROBE_OUT"), reason="run by test_run_isolation only")
@pytest.mark.django_db(transaction=True)
def test_probe(tmp_path):
    worker = start_worker(tmp_path)
    daphne = start_daphne(database_url_for(connection.settings_dict), settings.REDIS_URL)
    facts = {
        "pytest": os.getpid(),
        "worker": worker.process.pid,
        "daphne": daphne.process.pid,
        "redis": int((embedded.run_dir() / "redis" / "redis.pid").read_text()),
        "database": connection.settings_dict["NAME"],
    }
    from roleplay.llm.providers.llama_local import LlamaLocalProvider, local_model_available
    from roleplay.llm.types import ModelRequest, ProviderConfig

    if local_model_available():
        provider = LlamaLocalProvider(
            ProviderConfig(provider="llama_cpp", model="gemma-3-270m", context_limit=512)
        )
        request = ModelRequest([{"role": "user", "content": "Hi"}], max_tokens=2)
        asyncio.run(provider.complete(request))
        state = provider.service.state()
        facts.update(supervisor=state["supervisor"], model=state["model_pid"])
    out = os.environ["PROBE_OUT"]
    with open(out + ".tmp", "w") as handle:
        json.dump(facts, handle)
    os.replace(out + ".tmp", out)
    time.sleep(600)
