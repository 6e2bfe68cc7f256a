"""The chat burst limits in a benchmark.

A benchmark's players are many people from one address (127.0.0.1), or one player faster
than anyone types: the chat burst limits (``settings.RATE_LIMITS``, a guard against people,
``console.ratelimit``) would refuse their turns. They are off in a benchmark's process while
it runs (:func:`off`) and in its daphne children (:data:`OFF_ENV`); the plans' quotas stay (a
bench tenant's players have none).
"""

from __future__ import annotations

from django.conf import settings
from django.test.utils import override_settings

CHAT_LIMITS = {
    "chat_account": "RATE_CHAT_PER_ACCOUNT_10S",
    "chat_address": "RATE_CHAT_PER_ADDRESS_10S",
}
OFF_ENV = dict.fromkeys(CHAT_LIMITS.values(), "0")


def off() -> override_settings:
    """The chat burst limits off in this process, within ``with limits.off():``."""
    limits = dict(settings.RATE_LIMITS)
    for name in CHAT_LIMITS:
        limits[name] = (0, limits[name][1])
    return override_settings(RATE_LIMITS=limits)
