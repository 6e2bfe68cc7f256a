"""``console.E001``: the development SECRET_KEY is an error when DEBUG is off."""

from __future__ import annotations

import secrets

import pytest
from django.core.checks import run_checks

from tests.security.environment import run

# ``check`` without manage.py: the entry point would have made var/secret_key.
CHECK = (
    "import django; django.setup(); "
    "from django.core import management; management.call_command('check')"
)


def test_bypassing_the_entry_points_with_debug_off_stops_at_the_check():
    done = run(["-c", CHECK], DEBUG="false")  # no SECRET_KEY: the development fallback
    assert done.returncode != 0
    assert "console.E001" in done.stderr and "SECRET_KEY" in done.stderr


def test_the_development_key_is_accepted_with_debug_on():
    done = run(["-c", CHECK], DEBUG="true")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("debug", "development_key", "expected"),
    [(False, True, ["console.E001"]), (True, True, []), (False, False, [])],
)
def test_secret_key_check(settings, debug, development_key, expected):
    settings.DEBUG = debug
    settings.SECRET_KEY = (
        settings.DEVELOPMENT_SECRET_KEY if development_key else secrets.token_urlsafe(50)
    )
    ids = [message.id for message in run_checks() if message.id.startswith("console.")]
    assert ids == expected
