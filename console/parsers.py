"""The JSON parser of every API view: DRF's, with limits (see BoundedJSONParser)."""

from __future__ import annotations

from rest_framework import parsers
from rest_framework.exceptions import ParseError

from console.storable import MAX_JSON_DEPTH, out_of_bounds


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
        problem = out_of_bounds(data)
        if problem is not None:
            raise ParseError(problem)
        return data
