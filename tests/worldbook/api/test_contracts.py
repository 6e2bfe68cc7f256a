"""The class that documents a body is the class that validates it, and every response matches
its documented model, the selection result being the engine's own type.

Both checks start from the code: the routes come from ``worldbook.api.urls`` and the models
from the OpenAPI document, so a new route or a new field that no check covers fails here.
"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from pydantic import BaseModel

from tests.worldbook.api.wb_api_helpers import book, create, entry, error, publish
from tests.worldbook.engine.wbsel_helpers import select
from worldbook import contracts
from worldbook.api import schemas
from worldbook.api import urls as api_urls
from worldbook.engine import results
from worldbook.engine.schema import BookIn, SelectRequest
from worldbook.engine.selection import LoadedBook, SelectionResult

pytestmark = pytest.mark.django_db

BODY_METHODS = ("post", "put", "patch")


@pytest.fixture
def document(openapi_document):
    return openapi_document


def _routes():
    """``(OpenAPI path, view class)`` of every worldbook API route."""
    for pattern in api_urls.urlpatterns:
        path = "/v1/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))
        yield path, pattern.callback.view_class


def _component(document, ref: str) -> dict:
    return document["components"]["schemas"][ref.rsplit("/", 1)[-1]]


def _models() -> dict[str, type[BaseModel]]:
    out = {}
    for module in (contracts, schemas, results):
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseModel):
                out[value.__name__] = value
    return out


def test_every_json_body_is_validated_by_the_class_it_documents(document):
    checked = 0
    for path, view in _routes():
        for method in BODY_METHODS:
            handler = getattr(view, method, None)
            if handler is None:
                continue
            body = document["paths"][path][method]["requestBody"]["content"]
            if "multipart/form-data" in body:
                continue  # files, not a JSON object
            model = getattr(handler, "body_model", None)
            assert model is not None, f"{method} {path} reads a body without @validates"
            schema = _component(document, body["application/json"]["schema"]["$ref"])
            own = model.model_json_schema()
            assert set(schema["properties"]) == set(own["properties"]), (path, method)
            assert set(schema.get("required", [])) == set(own.get("required", [])), path
            for name, field in own["properties"].items():
                assert schema["properties"][name].get("default") == field.get("default"), name
            checked += 1
    assert checked >= 7


def test_documented_limits_are_enforced(api):
    """Spot checks at the edges the document states (its defaults and maxima)."""
    book_id = create(api)["book_id"]
    search = {"query": "lighthouse", "books": [{"book_id": book_id}]}
    assert api.post("/v1/search", {**search, "limit": 50}, format="json").status_code == 200
    over = api.post("/v1/search", {**search, "limit": 51}, format="json")
    assert over.status_code == 422 and "limit" in error(over)["message"]
    assert api.post("/v1/search", search, format="json").json()["mode"] == "lexical"
    # revision: null is the head (documented), 0 is below the documented minimum.
    head = api.post(f"/v1/books/{book_id}/index", {"revision": None}, format="json")
    assert head.status_code == 202 and head.json()["revision"] == 1
    zero = api.post(f"/v1/books/{book_id}/index", {"revision": 0}, format="json")
    assert zero.status_code == 422 and "revision" in error(zero)["message"]
    # A binding's position defaults to its index in the list.
    other = create(api, book("Other"))["book_id"]
    url = "/v1/prompt-bindings?prompt_id=p"
    put = api.put(url, {"bindings": [{"book_id": book_id}, {"book_id": other}]}, format="json")
    assert [b["position"] for b in put.json()["bindings"]] == [0, 1]


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/books", book("B", entry("a", cooldown=True)), "cooldown"),
        ("/v1/books", book("B", entry("a", order="5")), "order"),
        ("/v1/imports", {"books": [book("B", entry("a", depth=False))]}, "depth"),
        ("/v1/context/select", {"books": [{"book_id": "x"}], "query": "q",
                                "token_budget": "100"}, "token_budget"),
    ],
)  # fmt: skip
def test_json_bodies_are_held_to_their_documented_types(api, path, body, field):
    """``true`` and ``"5"`` are not integers in the document, so not in the body either."""
    res = api.post(path, body, format="json")
    assert res.status_code == 422 and field in error(res)["message"]


def test_a_batch_names_the_book_that_cannot_be_published(api):
    cycle = book("Cycle", entry("a", requires=["b"]), entry("b", requires=["a"]))
    res = api.post("/v1/imports", {"books": [book("ok"), cycle]}, format="json")
    assert res.status_code == 422
    err = error(res)
    assert err["code"] == "dependency_cycle" and err["details"]["book_index"] == 1


# --- responses -------------------------------------------------------------------------------

OUTLET = entry("scene", "Fog on the quay.", constant=True, position="outlet", outlet_name="quay")
GATE = entry("gate", "The copper key opens the side door.", keys=["copper key"])


def _engine_result() -> SelectionResult:
    model = BookIn.model_validate(book("Engine", OUTLET, GATE))
    loaded = LoadedBook("b1", 1, "hash", model.entries)
    request = SelectRequest(
        books=[{"book_id": "b1", "revision": 1}],
        query="I hand over the copper key",
        strategy="hybrid",  # no scores supplied: a degraded note
        placement_capabilities=["before_character", "outlet:quay"],
        conversation_id="c",
        message_index=1,
    )
    return select(request, [loaded])


def test_the_engine_result_is_the_documented_selection_response():
    result = _engine_result()
    body = result.response()
    parsed = results.SelectResponse.model_validate(body)
    assert {b.entry_id for b in parsed.blocks} == {"scene", "gate"}
    assert any(b.outlet_name == "quay" for b in parsed.blocks)
    assert parsed.degraded and parsed.degraded[0].code == "hybrid_scores_unavailable"
    internal = {"timed_state", "timed_input"}
    fields = {f.name for f in dataclasses.fields(SelectionResult) if not f.name.startswith("_")}
    assert (fields | {"decisions"}) - internal == set(results.SelectResponse.model_fields)
    assert list(body) == list(results.RESPONSE_FIELDS)


def _calls(api):
    """One real request to every operation: ``(method, OpenAPI path, response)``."""
    book_id = create(api, book("Greyport", OUTLET, GATE))["book_id"]
    base = f"/v1/books/{book_id}"
    sel = {"books": [{"book_id": book_id}], "query": "copper key", "strategy": "hybrid"}
    sel["placement_capabilities"] = ["before_character", "outlet:quay"]
    search = {"books": [{"book_id": book_id}], "query": "copper key"}
    bindings = {"bindings": [{"book_id": book_id}]}
    st = json.dumps({"entries": {"0": {"uid": 0, "key": ["k"], "content": "c"}}}).encode()

    def upload(name):
        from django.core.files.uploadedfile import SimpleUploadedFile

        return SimpleUploadedFile(f"{name}.json", st, content_type="application/json")

    bp = "/v1/books/{book_id}"
    return [
        ("get", "/v1/books", api.get("/v1/books")),
        ("post", "/v1/books", api.post("/v1/books", book("Second"), format="json")),
        ("get", bp, api.get(base)),
        ("get", bp + "/index", api.get(f"{base}/index")),
        ("post", bp + "/index", api.post(f"{base}/index", {}, format="json")),
        ("post", bp + "/revisions", publish(api, book_id, book("Greyport", OUTLET, GATE), 1)),
        ("get", bp + "/revisions", api.get(f"{base}/revisions")),
        ("get", bp + "/revisions/{revision}", api.get(f"{base}/revisions/2")),
        ("get", bp + "/revisions/{revision}/export", api.get(f"{base}/revisions/2/export")),
        ("post", "/v1/imports", api.post("/v1/imports", {"books": [book()]}, format="json")),
        (
            "post",
            "/v1/imports/preview",
            api.post("/v1/imports/preview", {"file": upload("p")}, format="multipart"),
        ),
        (
            "post",
            "/v1/imports/files",
            api.post("/v1/imports/files", {"files": [upload("f")]}, format="multipart"),
        ),
        ("post", "/v1/context/select", api.post("/v1/context/select", sel, format="json")),
        (
            "post",
            "/v1/search",
            api.post("/v1/search", {**search, "mode": "hybrid"}, format="json"),
        ),
        (
            "put",
            "/v1/prompt-bindings",
            api.put("/v1/prompt-bindings?prompt_id=p", bindings, format="json"),
        ),
        ("get", "/v1/prompt-bindings", api.get("/v1/prompt-bindings?prompt_id=p")),
        ("get", "/v1/prompt-bindings/resolve", api.get("/v1/prompt-bindings/resolve?prompt_id=p")),
        (
            "put",
            "/v1/scope-bindings",
            api.put("/v1/scope-bindings?scope=global", bindings, format="json"),
        ),
        ("get", "/v1/scope-bindings", api.get("/v1/scope-bindings?scope=global")),
        (
            "put",
            "/v1/scope-settings",
            api.put("/v1/scope-settings", {"character_strategy": 2}, format="json"),
        ),
        ("get", "/v1/scope-settings", api.get("/v1/scope-settings")),
    ]


def test_every_response_matches_its_documented_model(api, document):
    models = _models()
    seen = set()
    for method, path, res in _calls(api):
        assert res.status_code < 300, (method, path, res.content)
        documented = document["paths"][path][method]["responses"][str(res.status_code)]
        schema = documented["content"]["application/json"]["schema"]
        seen.add((method, path))
        if "$ref" not in schema:
            continue  # a free-form object (the export file)
        model = models[schema["$ref"].rsplit("/", 1)[-1]]
        model.model_validate(res.json())
    routes = {(m, p) for p, view in _routes() for m in ("get", *BODY_METHODS) if hasattr(view, m)}
    assert routes == seen, routes ^ seen
