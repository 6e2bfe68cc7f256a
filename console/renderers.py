"""A JSON renderer on orjson: selection responses carry a decision for every entry (up to
5,000 dicts), where the standard library encoder is several times slower."""

from __future__ import annotations

import json
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

    orjson refuses two things that do reach responses, and a renderer that raises turns the
    answer into a 500:

    - a string holding a lone surrogate: an error message quotes the client's input
      (``"\\ud800" is not a valid choice``);
    - an integer beyond 64 bits: PostgreSQL's jsonb keeps a JSON field's ``1e20`` as the
      number ``100000000000000000000``, which reads back as a Python int, so the object
      that stored it failed on every later read.

    The rare failing body is encoded again by the standard library (any integer), with
    every lone surrogate replaced by U+FFFD, the replacement character.
    """

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        if data is None:
            return b""
        try:
            return orjson.dumps(data, default=_fallback, option=_OPTIONS)
        except orjson.JSONEncodeError:
            text = json.dumps(
                valid_unicode(data),
                cls=DjangoJSONEncoder,
                ensure_ascii=False,
                separators=(",", ":"),
            )
            return text.encode()


def valid_unicode(value):
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {valid_unicode(key): valid_unicode(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [valid_unicode(item) for item in value]
    return value  # numbers, dates, ids: nothing to repair
