"""A JSON renderer on orjson: selection responses carry a decision for every entry (up to
5,000 dicts), where the standard library encoder is several times slower."""

from __future__ import annotations

import re

import orjson
from django.core.serializers.json import DjangoJSONEncoder
from rest_framework.renderers import JSONRenderer

_fallback = DjangoJSONEncoder().default
_OPTIONS = orjson.OPT_NON_STR_KEYS
# A UTF-16 surrogate on its own is not a Unicode character: it has no UTF-8 encoding.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class FastJSONRenderer(JSONRenderer):
    """orjson, and a response that always renders.

    orjson refuses a string holding a lone surrogate. Such a string reaches a response when
    an error message quotes the client's input (``"\\ud800" is not a valid choice``), and a
    renderer that raises turns the client's 400 into a 500. The rare failing body is encoded
    again with every lone surrogate replaced by U+FFFD, the replacement character.
    """

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        if data is None:
            return b""
        try:
            return orjson.dumps(data, default=_fallback, option=_OPTIONS)
        except orjson.JSONEncodeError:
            return orjson.dumps(valid_unicode(data), default=_fallback, option=_OPTIONS)


def valid_unicode(value):
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {valid_unicode(key): valid_unicode(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [valid_unicode(item) for item in value]
    return value  # numbers, dates, ids: nothing to repair
