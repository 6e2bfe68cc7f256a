"""``make run``: migrate, seed the demo, start daphne and a Celery worker (with beat).

The embedded PostgreSQL and Redis were started (or joined) when settings loaded; the children
get their URLs explicitly, so they share this process's servers. Ctrl-C stops the children
first, then this process exits and the embedded servers stop with it.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from console.embedded import VAR_DIR


class Command(BaseCommand):
    help = "Run the whole product on this machine (HTTP + WebSocket + background worker)."

    def add_arguments(self, parser):
        parser.add_argument("--no-worker", action="store_true")

    def handle(self, *args, no_worker=False, **options):
        call_command("migrate", interactive=False, verbosity=0)
        out = io.StringIO()
        call_command("seed_demo", stdout=out)
        facts = dict(part.split("=", 1) for part in out.getvalue().split())
        env = {**os.environ, "DATABASE_URL": settings.DATABASE_URL, "REDIS_URL": settings.REDIS_URL}
        python = sys.executable
        children = [
            subprocess.Popen(
                [
                    python,
                    "-m",
                    "daphne",
                    "-b",
                    settings.HOST,
                    "-p",
                    str(settings.PORT),
                    "console.asgi:application",
                ],
                env=env,
                start_new_session=True,
            )
        ]
        if not no_worker:
            children.append(
                subprocess.Popen(
                    [
                        python,
                        "-m",
                        "celery",
                        "-A",
                        "console.worker",
                        "worker",
                        "-B",
                        "--loglevel",
                        "WARNING",
                        "--concurrency",
                        "2",
                        "--schedule",
                        str(VAR_DIR / "celerybeat-schedule"),
                    ],
                    env=env,
                    start_new_session=True,
                )
            )
        url = f"http://{settings.HOST}:{settings.PORT}"
        self.stdout.write(
            "\n".join(
                [
                    "",
                    f"  Roleplay console: {url}/console/",
                    f"  Login: {facts['login']}  password: {facts['password']}",
                    f"  Play the demo:    {url}/play/{facts['conversation']}/",
                    "  (demo model: bundled gemma-3-270m, a tiny base model — configure a real",
                    "   model under Models for real use). Ctrl-C stops everything.",
                    "",
                ]
            )
        )
        stopping = False

        def stop(*_):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            while not stopping:
                if any(child.poll() is not None for child in children):
                    self.stderr.write("a child process exited; stopping")
                    break
                time.sleep(0.5)
        finally:
            for child in children:
                if child.poll() is None:
                    child.send_signal(signal.SIGTERM)
            deadline = time.time() + 15
            for child in children:
                try:
                    child.wait(max(deadline - time.time(), 0.1))
                except subprocess.TimeoutExpired:
                    child.kill()
            self.stdout.write("stopped.")
