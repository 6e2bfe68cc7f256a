"""Production settings: ``manage.py check --deploy`` passes with the environment the README
documents, and the local defaults only warn.

The commands run in a child process with a clean environment, because the settings are
read from the environment once, at import.
"""

from __future__ import annotations

import json
import secrets

import pytest

from tests.security.environment import run

# The production environment of the README (behind one TLS-terminating proxy).
PRODUCTION = {
    "SECRET_KEY": secrets.token_urlsafe(50),
    "DEBUG": "false",
    "ALLOWED_HOSTS": "roleplay.example.com",
    "TLS": "true",
    "TRUSTED_PROXY_COUNT": "1",
}

LOCAL_WARNINGS = {"security.W004", "security.W008", "security.W012", "security.W016"}

SHOW_SETTINGS = """
import json, django
django.setup()
from django.conf import settings as s
print(json.dumps({name: getattr(s, name) for name in [
    "SECURE_SSL_REDIRECT", "SECURE_PROXY_SSL_HEADER", "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD", "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE", "SESSION_COOKIE_NAME", "CSRF_COOKIE_NAME", "CSRF_TRUSTED_ORIGINS",
    "TRUSTED_PROXY_COUNT",
]}))
"""


def show_settings(**env: str) -> dict:
    done = run(["-c", SHOW_SETTINGS], **env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_check_deploy_passes_with_the_production_environment():
    done = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], **PRODUCTION)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_the_tls_switch_turns_on_every_tls_setting():
    assert show_settings(**PRODUCTION) == {
        "SECURE_SSL_REDIRECT": True,
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
        "SECURE_HSTS_SECONDS": 31536000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_HSTS_PRELOAD": True,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SESSION_COOKIE_NAME": "__Host-sessionid",
        "CSRF_COOKIE_NAME": "__Host-csrftoken",
        "CSRF_TRUSTED_ORIGINS": ["https://roleplay.example.com"],
        "TRUSTED_PROXY_COUNT": 1,
    }


def test_local_defaults_serve_plain_http_and_only_warn_under_check_deploy():
    """``make run`` over http://127.0.0.1: no redirect, no secure-only cookies; check
    --deploy names what production needs, as warnings that stop nothing."""
    local = {"SECRET_KEY": secrets.token_urlsafe(50), "DEBUG": "false"}
    values = show_settings(**local)
    assert values["SECURE_SSL_REDIRECT"] is False and values["SECURE_HSTS_SECONDS"] == 0
    assert values["SESSION_COOKIE_SECURE"] is False and values["SECURE_PROXY_SSL_HEADER"] is None
    assert values["SESSION_COOKIE_NAME"] == "sessionid"
    assert "http://127.0.0.1:8000" in values["CSRF_TRUSTED_ORIGINS"]

    done = run(["manage.py", "check", "--deploy"], **local)
    assert done.returncode == 0, done.stdout + done.stderr
    reported = {word.strip("():") for word in done.stderr.split() if word.startswith("(security.")}
    assert reported == LOCAL_WARNINGS
    assert "ERRORS" not in done.stderr


@pytest.mark.django_db
def test_headers_and_cookies_that_hold_without_tls(client, operator_user):
    page = client.get("/console/login/")
    assert page["X-Frame-Options"] == "DENY"
    assert page["X-Content-Type-Options"] == "nosniff"
    assert page["Referrer-Policy"] == "same-origin"
    assert page["Cross-Origin-Opener-Policy"] == "same-origin"
    csrf = page.cookies["csrftoken"]
    assert csrf["httponly"] and csrf["samesite"] == "Lax"
    done = client.post("/console/login/", {"username": "op", "password": "pw-op-123456"})
    assert done.status_code == 302
    session = done.cookies["sessionid"]
    assert session["httponly"] and session["samesite"] == "Lax"
    assert int(session["max-age"]) == 12 * 3600
