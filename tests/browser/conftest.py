"""Live-server fixtures for browser tests: daphne in a subprocess, Debian's Chromium.

``live_server_url`` runs the real ASGI app (HTTP + WebSocket) with daphne on the pytest test
database, so tests must use ``transactional_db`` (``django_db(transaction=True)``) for the
server process to see their rows. ``browser_page`` is a fresh page whose relative URLs go to
that server; the ``login`` fixture is ``login(page, username, password)``, which signs in
through the console form.

Playwright's sync API marks its event loop as running in this thread between calls, so
Django refuses ORM calls while a page is open (``SynchronousOnlyOperation``). Create data
in fixtures requested *before* ``browser_page``, or run ORM code with the ``orm`` fixture,
``orm(fn, *args)``, which runs it in a worker thread. Playwright is started and stopped per
test, so no running loop leaks into the asyncio tests that follow in the same session.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest

from console.live_server import database_url_for, start_daphne

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT_MS = 15_000


@pytest.fixture(scope="session")
def live_server_url(django_db_setup) -> str:
    """``http://127.0.0.1:<port>`` of a daphne child serving the app on the test database."""
    from django.conf import settings
    from django.db import connection

    # The product app as deployed (it serves /static/ itself).
    server = start_daphne(database_url_for(connection.settings_dict), settings.REDIS_URL)
    yield server.url
    server.stop()


def run_orm(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``fn`` in a worker thread (ORM calls while Playwright is active) and return its
    result; the thread's database connection is closed so it cannot block the flush."""
    from django.db import connections

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, name="orm-call")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def login_as(page, username: str, password: str, next_path: str | None = None) -> None:
    """Sign in through ``/console/login/`` and wait until the form has redirected."""
    url = "/console/login/" + (f"?next={quote(next_path)}" if next_path else "")
    page.goto(url)
    form = page.locator("form:has(input[name='password'])")
    form.locator("input[name='username']").fill(username)
    form.locator("input[name='password']").fill(password)
    with page.expect_navigation():
        form.locator("button[type='submit']").click()
    if "/console/login/" in page.url:
        raise AssertionError(f"login as {username!r} failed: still on {page.url}")


@pytest.fixture
def browser_page(transactional_db, live_server_url):
    """A fresh Chromium page (own context, no cookies) whose base URL is the live server."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: `make chromium` (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(base_url=live_server_url)
            context.set_default_timeout(TIMEOUT_MS)
            page = context.new_page()
            yield page
            context.close()
        finally:
            browser.close()


@pytest.fixture
def login():
    """``login(page, username, password, next_path=None)``: sign in through the form."""
    return login_as


@pytest.fixture
def orm():
    """``orm(fn, *args, **kwargs)``: run ORM code while a page is open (see module doc)."""
    return run_orm
