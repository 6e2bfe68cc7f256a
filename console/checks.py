"""System checks of the site's own settings (Django's ``check`` framework).

``console.E001``: the development ``SECRET_KEY`` fallback with ``DEBUG`` off. Anyone who has
read the code can forge session cookies and signed values under that key, so a server must
refuse to run with it, not merely warn under ``check --deploy``. The entry points never leave
it in place (they create ``var/secret_key``); this catches code that bypasses them.
"""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, register


@register(Tags.security)
def check_secret_key(app_configs=None, **kwargs) -> list[Error]:
    development_key = getattr(settings, "DEVELOPMENT_SECRET_KEY", None)
    if settings.DEBUG or not development_key or settings.SECRET_KEY != development_key:
        return []
    return [
        Error(
            "SECRET_KEY is the development fallback written in console/settings.py while "
            "DEBUG is off.",
            hint="Set SECRET_KEY to a long random value (for example "
            '`python -c "import secrets; print(secrets.token_urlsafe(50))"`), or start '
            "through manage.py, which keeps a random local key in var/secret_key.",
            id="console.E001",
        )
    ]
