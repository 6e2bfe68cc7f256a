"""List pagination: ``?limit=&offset=``, checked and documented.

DRF's ``LimitOffsetPagination`` falls back to the default page for ``?limit=abc`` and cuts
``?limit=100000`` to the maximum without a word, so a client's mistake looked like success
and the documented integer parameters accepted anything. Here a bad value is a 400
``validation_error`` naming the parameter, and the schema states the bounds.
"""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination

MAX_OFFSET = 2**63 - 1  # PostgreSQL's OFFSET is a bigint


class Pagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 200

    def get_limit(self, request):
        return _bounded(request, self.limit_query_param, self.default_limit, 1, self.max_limit)

    def get_offset(self, request):
        return _bounded(request, self.offset_query_param, 0, 0, MAX_OFFSET)

    def get_schema_operation_parameters(self, view):
        bounds = {
            self.limit_query_param: {"minimum": 1, "maximum": self.max_limit},
            self.offset_query_param: {"minimum": 0, "maximum": MAX_OFFSET},
        }
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"].update(bounds.get(parameter["name"], {}))
        return parameters


def _bounded(request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        raise ValidationError({name: [f"must be an integer from {low} to {high}"]})
    return value
