"""What an attacker puts around a body rather than in it: a ``Content-Type`` charset no
request can be read with (``fuzzing.ODD_CHARSETS``) on each door (REST, console, player
app) through the server as production runs it (``console.asgi``: Django's test client
builds its own requests, not the server's), and a valid API token on every page, API or
not, with a query string of escapes. No answer may be a server error.

Before ``console.http_request.Request``, a form sent with ``charset=zlib`` (a codec from
bytes to bytes) raised where Django read it, and the exception left the app; a form in
``charset=latin-1`` was refused with a 400 whose page read the form again (a 500); and
before ``console.context`` read the caller DRF authenticated, ``/api/docs/`` opened with a
token was a 500.
"""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.testing import HttpCommunicator

from tests.contract.fuzzing import ODD_CHARSETS, ODD_COOKIES, ODD_QUERY
from tests.matrix.routes import all_routes
from tests.matrix.tables import path_for

pytestmark = pytest.mark.django_db

TOKEN = "rpk_fuzz0002_" + "e" * 43


def test_only_charsets_that_read_ascii_as_ascii_are_taken():
    from console.http_request import readable

    assert all(readable(name) for name in ("utf-8", "UTF8", "latin-1", "cp1252", "ascii"))
    assert not any(readable(name) for name in ODD_CHARSETS)


@pytest.fixture
def token(world) -> str:
    from console.models import ApiToken, hash_token

    ApiToken.objects.create(
        tenant=world.tenant, name="server-fuzz", prefix="fuzz0002",
        token_hash=hash_token(TOKEN), scopes=["admin"],
    )  # fmt: skip
    return TOKEN


# A route of each door, as the server receives it: (method, path, content type, body). The
# caller is anonymous with a CSRF cookie (any visitor has one): the CSRF check reads a form
# body with the request's charset (for the token it lacks) before any view or sign-in.
CSRF = "c" * 32
FORM = b"email=a%40b.c&password=%FF"
PARTS = b'--B\r\nContent-Disposition: form-data; name="email"\r\n\r\na\r\n--B--\r\n'
DOORS = [
    ("PUT", "/v1/prompt-bindings?prompt_id=fuzz&" + ODD_QUERY, "application/json", b"{}"),
    ("GET", "/console/characters/?" + ODD_QUERY, "text/plain", b""),
    ("POST", "/app/login/?" + ODD_QUERY, "application/x-www-form-urlencoded", FORM),
    ("POST", "/console/login/", "multipart/form-data; boundary=B", PARTS),
    ("POST", "/no/such/page/", "application/x-www-form-urlencoded", FORM),
]
# A charset Django reads but refuses for a form (forms are UTF-8): a 400, whose page ran the
# CSRF check again and so read the form again, a 500 before (``console.errors._page``).
CHARSETS = [*ODD_CHARSETS, "latin-1"]


@pytest.mark.django_db(transaction=True)  # the server closes a request's connection
def test_a_charset_no_request_can_be_read_with_through_the_server():
    from console.asgi import application

    async def send(method: str, path: str, kind: str, body: bytes, charset: str) -> int:
        headers = [
            (b"host", b"testserver"),
            (b"cookie", f"csrftoken={CSRF}".encode()),
            (b"content-type", f"{kind}; charset={charset}".encode()),
        ]
        communicator = HttpCommunicator(application, method, path, body, headers)
        response = await communicator.get_response(timeout=20)
        return response["status"]

    failures = [
        f"{method} {path} charset={charset[:20]}: {status}"
        for charset in CHARSETS
        for method, path, kind, body in DOORS
        if (status := async_to_sync(send)(method, path, kind, body, charset)) >= 500
    ]
    assert not failures, "\n".join(failures)


def test_every_page_opened_with_a_token(world, token):
    """A token on any page, API or not, with a query of escapes and cookies no browser
    sends (``fuzzing.ODD_COOKIES``, in turn): never a server error."""
    from django.test import Client

    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}", raise_request_exception=False)
    failures = []
    for turn, route in enumerate(all_routes()):
        if route.kind in ("admin", "app") or route.key == "healthz":  # 503 with no worker
            continue
        path = path_for(route, world)
        cookie = ODD_COOKIES[turn % len(ODD_COOKIES)]
        path += ("&" if "?" in path else "?") + ODD_QUERY
        status = client.get(path, HTTP_COOKIE=cookie).status_code
        if status >= 500:
            failures.append(f"GET {path} cookie={cookie[:40]!r}: {status}")
    assert not failures, "\n".join(failures)
