"""Content-Security-Policy: the exact header on console, play and login pages, and no
template that needs an exception to it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.test import Client

from tests.security.csp import expected_policy, inline_code, parse_policy, template_files

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_hashing")]


def policy_of(response) -> dict[str, list[str]]:
    assert "Content-Security-Policy" in response, response
    return parse_policy(response["Content-Security-Policy"])


def test_login_page(client):
    response = client.get("/console/login/")
    assert response.status_code == 200
    assert policy_of(response) == expected_policy("ws://testserver")


def test_console_and_play_pages(operator_user, conversation):
    client = Client()
    client.force_login(operator_user)
    for url in ["/console/", "/console/characters/", f"/play/{conversation.id}/"]:
        response = client.get(url)
        assert response.status_code == 200, url
        assert policy_of(response) == expected_policy("ws://testserver"), url


def test_the_socket_origin_follows_the_page(operator_user, conversation, settings):
    settings.ALLOWED_HOSTS = ["chat.example.org"]
    client = Client()
    client.force_login(operator_user)
    plain = client.get(f"/play/{conversation.id}/", HTTP_HOST="chat.example.org")
    assert policy_of(plain)["connect-src"] == ["'self'", "ws://chat.example.org"]
    tls = client.get(f"/play/{conversation.id}/", HTTP_HOST="chat.example.org", secure=True)
    assert policy_of(tls)["connect-src"] == ["'self'", "wss://chat.example.org"]


def test_a_foreign_host_gets_no_socket_origin(client):
    response = client.get("/console/login/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert "evil" not in response.get("Content-Security-Policy", "")


def test_the_lockout_page(tenant, client):
    from console.services import ensure_console_user

    ensure_console_user(tenant, "demo", "pw-demo-123456", "operator")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        response = client.post("/console/login/", {"username": "demo", "password": "nope"})
    assert response.status_code == 429
    assert policy_of(response) == expected_policy("ws://testserver")


def test_api_docs_page_gets_only_its_viewer_sources(client):
    from drf_spectacular.settings import spectacular_settings

    policy = policy_of(client.get("/api/docs/"))
    dist = re.match(r"https?://[^/]+", spectacular_settings.SWAGGER_UI_DIST).group(0)
    assert policy["script-src"] == ["'self'", dist, "'unsafe-inline'"]
    assert policy["style-src"] == ["'self'", dist, "'unsafe-inline'"]
    for directive in ("object-src", "base-uri", "form-action", "frame-ancestors"):
        assert policy[directive] == expected_policy("")[directive]


def test_htmx_runs_without_eval(client):
    page = client.get("/console/login/").content.decode()
    meta = re.search(r"<meta name=\"htmx-config\" content='([^']*)'>", page)
    assert meta, "base.html lost its htmx-config"
    config = json.loads(meta.group(1))
    assert config == {"allowEval": False, "allowScriptTags": False, "includeIndicatorStyles": False}
    assert re.search(r"<script src=\"/static/js/htmx\.min\.js\"", page)


def our_template_dirs() -> list[Path]:
    """Every template directory of the project: settings' DIRS and our apps' own."""
    base = Path(settings.BASE_DIR)
    dirs = [Path(d) for d in settings.TEMPLATES[0]["DIRS"]]
    for config in apps.get_app_configs():
        candidate = Path(config.path) / "templates"
        ours = base in candidate.parents and "site-packages" not in candidate.parts
        if candidate.is_dir() and ours:
            dirs.append(candidate)
    return dirs


def test_no_template_has_inline_script_handler_or_style():
    files = template_files(our_template_dirs())
    assert len(files) > 20  # the scan found the templates
    problems = [
        f"{path.relative_to(settings.BASE_DIR)}: {rule}: {tag}"
        for path in files
        for rule, tag in inline_code(path.read_text())
    ]
    assert problems == []


@pytest.mark.parametrize(
    "snippet",
    [
        "<script>alert(1)</script>",
        "<script type='module'>x()</script>",
        '<button onclick="go()">',
        "<form class=\"inline\" onSubmit='return confirm(1)'>",
        '<a href="javascript:void(0)">',
        '<div hx-on:click="x()">',
        '<div hx-on::after-request="x()">',
        '<div data-hx-on-click="x()">',
        """<div hx-vals='js:{a: b()}'>""",
        '<div hx-vars="a:b()">',
        "<style>p{}</style>",
        '<span style="width: 5%">',
        '<a {% if x %}class="a"{% endif %}onclick="x()">',
    ],
)
def test_the_scanner_finds_each_kind_of_inline_code(snippet):
    assert inline_code(snippet)


@pytest.mark.parametrize(
    "snippet",
    [
        '<script src="/static/js/play.js" defer></script>',
        '<form data-confirm="Revoke?">',
        '<input name="online" value="1">',
        "<div hx-vals='{\"a\": 1}'>",
        '<meta name="htmx-config" content=\'{"allowEval":false}\'>',
    ],
)
def test_the_scanner_passes_clean_markup(snippet):
    assert inline_code(snippet) == []
