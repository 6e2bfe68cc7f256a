"""Running a command of the project in a child process with an environment of our choosing:
the settings read the environment once, at import."""

from __future__ import annotations

import os
import subprocess
import sys

from django.conf import settings

# Every variable these tests set or expect unset; the rest of the environment is kept.
OURS = (
    "DJANGO_SETTINGS_MODULE",
    "SECRET_KEY",
    "DEBUG",
    "ALLOWED_HOSTS",
    "TLS",
    "TRUSTED_PROXY_COUNT",
    "CSRF_TRUSTED_ORIGINS",
    "SECURE_SSL_REDIRECT",
    "HSTS_SECONDS",
    "HSTS_INCLUDE_SUBDOMAINS",
    "HSTS_PRELOAD",
)


def run(args: list[str], **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in OURS}
    return subprocess.run(
        [sys.executable, *args],
        cwd=settings.BASE_DIR,
        env={**base, "DJANGO_SETTINGS_MODULE": "console.settings", **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
