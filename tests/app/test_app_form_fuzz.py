"""Hostile values in every field of every form of the player app (``/app/``).

The REST API is fuzzed from its OpenAPI document (``tests/contract``); the app's pages have
none, so their forms are read from the pages themselves: every ``/app/`` route of the URL
conf (``tests/matrix.routes``) is opened, as a signed-in player or signed out for the
public ones, and each ``<form method="post">`` gives its action and its fields with the
values the page filled in. Then every route is posted to, once per field and hostile value
(the other fields as the page filled them, or as a person would type them): a lone
surrogate and bytes that are not UTF-8, a NUL, 300,000 characters, two values where one is
expected, an empty value, a huge number. A new page, form or field is fuzzed the day it
exists.

Each answer must be below 500; a refusal (a 4xx, the form's page again, or a redirect with
an error message) must change no row of the product's tables (the audit log records
attempts by design and is left out; the sign-in throttle's table is not the product's).
The test client sends no CSRF token, which it does not enforce.
"""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import quote_from_bytes, urljoin, urlsplit

import pytest
from django.test import Client
from django.urls import resolve

from tests.api.helpers import db_snapshot, snapshot_diff
from tests.matrix.app_world import APP_PUBLIC, PASSWORD, build_player
from tests.matrix.routes import routes_of
from tests.matrix.tables import path_for

pytestmark = pytest.mark.django_db

PAGES = routes_of("app")
# Rows written by design on a refused request: attempts in the audit log and the throttle.
BOOKKEEPING = {"console_auditevent"}
# Fields every page may read beside its form's (where to go back to).
ALWAYS = ("next", "back")

# What a person would type where the page leaves a field empty, so that a hostile value in
# one field meets the others valid and reaches as deep as it can. Never the player's own
# password: the account's deletion asks for it.
TYPED = {
    "email": "fuzz-new@example.com",
    "password": "pw-fuzz-typed-123456",
    "password_again": "pw-fuzz-typed-123456",
}

HOSTILE: dict[str, object] = {
    "lone surrogate": "a\ud800b",
    "not utf-8": b"a\xff\xfeb",
    "nul": "a\x00b",
    "huge": "x" * 300_000,
    "list": ["one", "two"],
    "empty": "",
    "big number": "9" * 400,
    "negative": "-1",
}


class _Forms(HTMLParser):
    """The POST forms of a page: (action, [(field, value)]) in page order."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.forms: list[tuple[str, list[tuple[str, str]]]] = []
        self._fields: list[tuple[str, str]] | None = None
        self._select: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        attr = {k: v or "" for k, v in attrs}
        if tag == "form" and attr.get("method", "get").lower() == "post":
            self._fields = []
            self.forms.append((urljoin(self.page, attr.get("action") or self.page), self._fields))
        if self._fields is None or not attr.get("name"):
            return
        if tag == "input" and attr.get("type") not in ("submit", "button", "file", "image"):
            if attr.get("type") in ("checkbox", "radio") and "checked" not in attr:
                return
            self._fields.append((attr["name"], attr.get("value", "")))
        elif tag == "select":
            self._select = attr["name"]
        elif tag == "option" and self._select is not None:
            self._fields.append((self._select, attr.get("value", "")))
            self._select = None  # the first option stands for the choice
        elif tag == "textarea":
            self._textarea = attr["name"]
            self._fields.append((attr["name"], ""))

    def handle_data(self, data):
        if self._textarea is not None and self._fields:
            name, _ = self._fields[-1]
            self._fields[-1] = (name, data)

    def handle_endtag(self, tag):
        if tag == "form":
            self._fields = None
        elif tag == "select":
            self._select = None
        elif tag == "textarea":
            self._textarea = None


def _encode(value) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")


def _body(fields: list[tuple[str, object]]) -> bytes:
    """``application/x-www-form-urlencoded`` of ``fields``, any value as it is (a list: the
    field repeated; a lone surrogate or raw bytes: sent as such)."""
    pairs = []
    for name, value in fields:
        for one in value if isinstance(value, list) else [value]:
            pairs.append(quote_from_bytes(_encode(name)) + "=" + quote_from_bytes(_encode(one)))
    return "&".join(pairs).encode("ascii")


class Player:
    """The signed-in player; signed in again when a request signed them out (a device of
    theirs revoked, the sign-out page)."""

    def __init__(self, world) -> None:
        self.world = world

    @property
    def client(self) -> Client:
        client = self.world.client
        if "_auth_user_id" not in client.session:
            client = Client(REMOTE_ADDR="203.0.113.7", HTTP_USER_AGENT="fuzz-browser")
            answer = client.post("/app/login/", {"email": self.world.account.email,
                                                 "password": PASSWORD})  # fmt: skip
            assert answer.status_code == 302, answer.status_code
            self.world.client = client
        return client


@pytest.fixture
def player(tenant, settings, fast_hashing, tmp_path):
    from roleplay.accounts import services

    settings.PLAYER_APP_TENANT = tenant.name
    settings.MEDIA_ROOT = str(tmp_path)
    services.set_app_settings(tenant, signup_policy="open", player_characters=True)
    return Player(build_player(tenant, "fuzzer"))


_anonymous = iter(range(10**6))


def _anonymous_client() -> Client:
    """A signed-out client at an address of its own (the sign-in throttle counts per
    address: a lock would hide the form behind a 429)."""
    n = next(_anonymous)
    return Client(REMOTE_ADDR=f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}")


def _client(route, player: Player) -> Client:
    return _anonymous_client() if route.key in APP_PUBLIC else player.client


def _forms(player: Player) -> dict[str, list[tuple[str, str]]]:
    """Every POST form of every app page a player can open: the name of the route it posts
    to → its fields (with the values the page filled in)."""
    from tests.matrix.app_world import MAKERS

    for name in MAKERS:  # the player's objects first, so that the lists show them
        player.world.value(name)
    found: dict[str, list[tuple[str, str]]] = {}
    for route in PAGES:
        path = path_for(route, player.world)
        response = _client(route, player).get(path)
        if response.status_code != 200 or response.streaming:
            continue
        if "html" not in response.get("Content-Type", ""):
            continue
        parser = _Forms(path)
        parser.feed(response.content.decode("utf-8", "replace"))
        for action, fields in parser.forms:
            known = found.setdefault(resolve(urlsplit(action).path).url_name, [])
            known.extend(f for f in fields if f[0] not in {name for name, _ in known})
    return found


def _refused(response, *, has_form: bool) -> bool:
    """Whether the page said no: a 4xx, its form again (a 200 where the route has a form),
    or a redirect with an error message (a page that refuses with a flash)."""
    from django.contrib import messages

    if 400 <= response.status_code < 500 or (response.status_code == 200 and has_form):
        return True
    # What this request said (messages of earlier ones, never shown, wait in the storage).
    said = getattr(messages.get_messages(response.wsgi_request), "_queued_messages", [])
    return any(message.level >= messages.ERROR for message in said)


def _destroys(route) -> bool:
    """Whether a success of the route removes the object in its path (made again after)."""
    return any(word in route.name for word in ("delete", "revoke"))


def test_every_app_form_survives_hostile_values(player):
    forms = _forms(player)
    posted = {"app_login", "app_signup", "app_reset", "app_report", "app_chat_rename"}
    assert posted <= set(forms), sorted(forms)
    failures = []
    tried = 0
    for route in PAGES:
        fields = [
            (name, value or TYPED.get(name, "fuzz"))
            for name, value in forms.get(route.name, [])
            if name != "csrfmiddlewaretoken"
        ]
        names = [name for name, _ in fields] + [a for a in ALWAYS if a not in dict(fields)]
        for name in names:
            for label, value in HOSTILE.items():
                sent = [(n, v) for n, v in fields if n != name] + [(name, value)]
                client = _client(route, player)  # signed in again first: a device is made
                path = path_for(route, player.world)
                before = db_snapshot()
                response = client.post(
                    path, _body(sent), content_type="application/x-www-form-urlencoded"
                )
                tried += 1
                status = response.status_code
                where = f"POST {route.template} {name}={label}: {status}"
                if status >= 500:
                    failures.append(where)
                elif _refused(response, has_form=route.name in forms):
                    changed = set(snapshot_diff(before, db_snapshot())) - BOOKKEEPING
                    if changed:
                        failures.append(f"{where} refused, yet changed {sorted(changed)}")
                elif _destroys(route):
                    player.world.made.clear()
    assert tried > 200
    assert failures == [], "\n".join(failures)
