"""List pagination refuses what its documented bounds exclude, on every paginated list.

The lists come from the served document (operations with a ``limit`` query parameter), the
bounds from the parameter's own schema: the test and the document cannot drift apart.
"""

from __future__ import annotations

import pytest

from console.schema import operations
from tests.api.helpers import assert_error
from tests.contract.documents import concrete_path


def _paginated(document: dict) -> list[tuple[str, dict]]:
    found = []
    for path, method, operation in operations(document):
        params = {p["name"]: p["schema"] for p in operation.get("parameters", [])}
        if method == "get" and {"limit", "offset"} <= set(params):
            found.append((path, params))
    return found


def test_every_paginated_list_keeps_its_documented_bounds(served_document, api, world):
    """(A list under an object, such as a conversation's story revisions, on the world's.)"""
    lists = _paginated(served_document)
    assert lists
    for template, params in lists:
        path = concrete_path(template, world)
        limit, offset = params["limit"], params["offset"]
        for query in (f"limit={limit['minimum']}", f"limit={limit['maximum']}", "offset=0"):
            assert api.get(f"{path}?{query}").status_code == 200, (path, query)
        for name, value in (
            ("limit", "abc"),
            ("limit", limit["minimum"] - 1),
            ("limit", limit["maximum"] + 1),
            ("offset", -1),
            ("offset", offset["maximum"] + 1),
            ("offset", "1.5"),
        ):
            error = assert_error(api.get(f"{path}?{name}={value}"), 400, "validation_error")
            assert [e["loc"] for e in error["details"]["errors"]] == [name], (path, name, value)


@pytest.mark.parametrize("limit", [1, 3])
def test_a_page_holds_limit_rows(api, tenant, limit):
    from console.models import Player

    for i in range(5):
        Player.objects.create(tenant=tenant, external_id=f"p{i}")
    page = api.get(f"/api/v1/players/?limit={limit}&offset=1").json()
    assert page["count"] == 5 and len(page["results"]) == limit
