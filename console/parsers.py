"""The JSON parser of every API view: DRF's, with limits (see BoundedJSONParser)."""

from __future__ import annotations

import math

from rest_framework import parsers
from rest_framework.exceptions import ParseError

MAX_JSON_DEPTH = 64
_INT64 = 2**63


class BoundedJSONParser(parsers.JSONParser):
    """JSON bodies with limits: nesting depth, 64-bit integers, finite numbers.

    Without them a body of 100k nested brackets raised RecursionError inside the parser, a
    ``1e400`` became ``inf`` (which PostgreSQL's jsonb refuses), and a 30-digit integer went
    into a JSON field and then broke the (orjson) renderer: all 500s. Each is a 400 now.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise ParseError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from exc
        _check_bounds(data)
        return data


def _check_bounds(data) -> None:
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > MAX_JSON_DEPTH:
                raise ParseError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int) and not -_INT64 <= value < _INT64:
            raise ParseError("JSON integer outside the 64-bit range")
        elif isinstance(value, float) and not math.isfinite(value):
            raise ParseError("JSON number out of range")
