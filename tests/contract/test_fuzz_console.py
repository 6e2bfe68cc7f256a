"""Every console page (read from the URL configuration) under an attacker's input, signed in
as the tenant's admin: the page with hostile query text (``fuzzing.HOSTILE_QUERY``), and
each POST form it shows sent back once per text box, that box set to one of
``fuzzing.HOSTILE_BOXES`` (taken in turn across boxes and pages, so every value meets
every kind of box over the run). No answer may be a server error that the page without
the hostile input does not give (``/healthz`` answers 503 where no worker runs).

A NUL in a list's search, and JSON nested 3,000 levels deep or holding ``\\ud800`` in a
form's JSON box, each answered 500 before (``tests/console/test_hostile_input.py``).
"""

from __future__ import annotations

from urllib.parse import urljoin, urlparse

import pytest

from tests.contract.fuzzing import HOSTILE_BOXES, HOSTILE_QUERY, page_forms
from tests.matrix.routes import routes_of
from tests.matrix.tables import path_for

pytestmark = pytest.mark.django_db

# Pages whose POST ends the session or destroys what the pages after them need; each is
# covered by its own tests and by the matrices.
LEFT_ALONE = ("logout", "delete", "revoke", "password", "restore", "discard")


def test_console_pages_under_hostile_input(world):
    from django.test import Client

    from console.services import ensure_console_user

    user, _ = ensure_console_user(world.tenant, "fuzz-admin", None, "admin")
    admin = Client()
    admin.force_login(user)
    admin.user = user  # path_for reads the signed-in user's own objects from it
    failures = []
    pages = sorted(routes_of("console"), key=lambda route: route.key)
    turn = 0
    for route in pages:
        if any(word in route.key for word in LEFT_ALONE):
            continue
        path = path_for(route, world, admin)
        page = admin.get(path)
        status = admin.get(path.split("?")[0], HOSTILE_QUERY).status_code
        if status >= 500 and status != page.status_code:
            failures.append(f"GET {path} {HOSTILE_QUERY!r}: {status}")
        if "text/html" not in page.get("Content-Type", ""):
            continue
        for action, values, boxes in page_forms(page.content.decode()):
            target = urljoin(path, action) if action else path
            if any(word in urlparse(target).path for word in LEFT_ALONE):
                continue
            for box in boxes:
                text, turn = HOSTILE_BOXES[turn % len(HOSTILE_BOXES)], turn + 1
                status = admin.post(target, {**values, box: text}).status_code
                if status >= 500:
                    failures.append(f"POST {target} {box}={text[:40]!r}: {status}")
    assert not failures, "\n".join(failures)
