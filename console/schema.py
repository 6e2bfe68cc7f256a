"""The OpenAPI document at ``/api/schema/``: our authentication, closed request bodies, and
the postprocessing hooks that make it a document integrators can use.

The document is OpenAPI 3.1, whose schema objects *are* JSON Schema 2020-12: the pydantic
models of the worldbook API emit that dialect (``anyOf`` with ``{"type": "null"}``,
``const``), and a 3.0 document embedding them was rejected by every validator and client
generator. What remains to adapt is general, so the hooks walk every schema and every
operation instead of naming components:

- :func:`drop_generated_titles`: pydantic titles every model and field. Client generators
  name classes after titles, so the request twin of a component (``BookInRequest``, titled
  ``BookIn``) collided with the response one and its operation was dropped from the client.
- :func:`name_shared_enums`: an enum that several components share under a field name that
  other enums use too is named by drf-spectacular with a hash of its values
  (``StatusAc7Enum``); a generated client's class would change name whenever a value is
  added. It is named after the components that use it instead (``IndexStatusEnum``).
- :func:`document_errors`: every operation lists the error statuses it can answer, each with
  the one error body (``Error``), so a client decodes errors and a fuzzer can check them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiSerializerExtension
from drf_spectacular.plumbing import list_hash
from drf_spectacular.views import SpectacularAPIView


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "console.auth.ApiTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A tenant-scoped API token (`create_api_token`, or the console).",
        }


class ClosedRequestBodies(OpenApiSerializerExtension):
    """Serializers that refuse unknown fields (a typo is an error) say so in their request
    schema: ``additionalProperties: false``. Without it a client, or a fuzzer, may send any
    extra property and read the 400 as the server breaking its own document."""

    target_class = "console.serializers.RejectUnknownFields"
    match_subclasses = True

    def get_name(self, auto_schema, direction):
        return None  # the serializer's own component name

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        if direction == "request":
            schema["additionalProperties"] = False
        return schema


class SchemaView(SpectacularAPIView):
    """``/api/schema/``; ``?format=json`` or ``?format=yaml`` picks the encoding (the global
    ``?format=`` override is off because worldbook export uses that parameter itself)."""

    def perform_content_negotiation(self, request, force=False):
        wanted = request.query_params.get("format")
        if wanted:
            for renderer in self.get_renderers():
                if renderer.format == wanted:
                    return renderer, renderer.media_type
        return super().perform_content_negotiation(request, force)


# --- walking JSON Schema ----------------------------------------------------------------

# Keywords of JSON Schema 2020-12 whose value is a schema, a list of schemas, or a mapping of
# names to schemas. Anything else (``enum``, ``const``, ``default``, ``example``) is data and
# is never walked: a property *named* ``title`` must survive.
_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains",
        "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema")  # fmt: skip
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
_NAMED = ("properties", "patternProperties", "$defs", "dependentSchemas")


def subschemas(schema: Any) -> Iterator[dict]:
    """``schema`` and every schema nested in it, depth first."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield node
        stack.extend(node.get(key) for key in _ONE)
        for key in _MANY:
            stack.extend(node.get(key) or ())
        for key in _NAMED:
            stack.extend((node.get(key) or {}).values())


def operations(document: dict) -> Iterator[tuple[str, str, dict]]:
    """``(path, method, operation)`` of every operation in the document."""
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            if method in ("get", "put", "post", "delete", "options", "head", "patch", "trace"):
                yield path, method, operation


def document_schemas(document: dict) -> Iterator[dict]:
    """The root schemas of a document: components, parameters, request and response bodies."""
    yield from document.get("components", {}).get("schemas", {}).values()
    for _path, _method, operation in operations(document):
        for parameter in operation.get("parameters", ()):
            yield parameter.get("schema")
        bodies = [operation.get("requestBody", {})] + list(operation.get("responses", {}).values())
        for body in bodies:
            for media in body.get("content", {}).values():
                yield media.get("schema")


# --- hooks --------------------------------------------------------------------------------


def drop_generated_titles(result, generator, request, public):
    """Remove ``title`` from every schema: pydantic derives them from class and field names
    (the component's name already says it), and generators would name classes after them."""
    for root in document_schemas(result):
        for node in subschemas(root):
            if isinstance(node.get("title"), str):
                del node["title"]
    return result


def _references(document: dict) -> Iterator[dict]:
    """Every ``{"$ref": ...}`` object in the document."""
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _common_words(names: list[str]) -> str:
    """The CamelCase words all ``names`` start with: ``IndexState``, ``IndexBuild`` → ``Index``."""
    split = [re.findall(r"[A-Z][a-z0-9]*", name) for name in names]
    common = []
    for words in zip(*split, strict=False):
        if len(set(words)) != 1:
            break
        common.append(words[0])
    return "".join(common) or sorted(names)[0]


def name_shared_enums(result, generator, request, public):
    """Rename enums that drf-spectacular named with a hash of their values (see module doc)."""
    schemas = result.get("components", {}).get("schemas", {})
    prefix = "#/components/schemas/"
    users: dict[str, set[str]] = {}
    for owner, component in schemas.items():
        for node in _references(component):
            users.setdefault(node["$ref"].removeprefix(prefix), set()).add(owner)
    renames = {}
    for name, component in schemas.items():
        values = [v for v in component.get("enum") or () if v not in ("", None)]
        digest = list_hash([(v, v) for v in values])[:3].capitalize() + "Enum"
        if not values or not name.endswith(digest) or not users.get(name):
            continue
        better = _common_words(sorted(users[name])) + name.removesuffix(digest) + "Enum"
        if better not in schemas and better not in renames.values():
            renames[name] = better
    for old, new in renames.items():
        schemas[new] = schemas.pop(old)
    for node in _references(result):
        target = node["$ref"].removeprefix(prefix)
        if target in renames:
            node["$ref"] = prefix + renames[target]
    return result


ERROR_SCHEMA = "Error"
ERROR_COMPONENTS = {
    ERROR_SCHEMA: {
        "type": "object",
        "description": "Every error answer of the API (the codes are stable).",
        "properties": {
            "error": {"$ref": "#/components/schemas/ErrorDetail"},
            "current_revision": {
                "type": ["integer", "null"],
                "description": "On a revision conflict: the revision to retry against.",
            },
        },
        "required": ["error"],
        "additionalProperties": False,
    },
    "ErrorDetail": {
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": "Stable, e.g. `validation_error`."},
            "message": {"type": "string"},
            "details": {"type": "object", "additionalProperties": True},
        },
        "required": ["code", "message", "details"],
        "additionalProperties": False,
    },
}

# Which operations can answer which error, by what the operation takes: authentication and
# scopes apply to all; any input can be malformed (400) or break a rule (422); a path id, a
# query id or a body can name an object that is not the caller's (404); a body can be too
# large (413) or of another media type (415); a write can meet a stale revision, a duplicate
# or a reused key (409); any call can find a dependency down (503,
# ``console.failures.Unavailable``).
_ERRORS = {
    400: ("The request is malformed.", lambda op: op["input"]),
    401: ("No valid API token.", lambda op: op["secured"]),
    403: ("The token lacks the scope this operation needs.", lambda op: op["secured"]),
    404: ("Not found in the caller's tenant.", lambda op: op["names_objects"]),
    409: ("Conflicts with the stored state.", lambda op: op["write"]),
    413: ("The request body is too large.", lambda op: op["body"]),
    415: ("The request body has an unsupported media type.", lambda op: op["body"]),
    422: ("Well formed, but breaks a rule.", lambda op: op["input"]),
    503: (
        "A dependency (database, task queue, model) cannot serve now; retry later.",
        lambda op: op["secured"],
    ),
}


def _traits(method: str, operation: dict) -> dict[str, bool]:
    body = "requestBody" in operation
    parameters = operation.get("parameters", [])
    return {
        "secured": any(operation.get("security", [])),
        "body": body,
        "input": body or bool(parameters),
        "names_objects": body or any(_names_object(p) for p in parameters),
        "write": method in ("post", "put", "patch", "delete"),
    }


def _names_object(parameter: dict) -> bool:
    """A path id, or a query parameter carrying an id (``?target_id=``, ``?character_id=``)."""
    where, name = parameter.get("in"), parameter.get("name", "")
    return where == "path" or (where == "query" and name.endswith("_id"))


def document_errors(result, generator, request, public):
    """Add the ``Error`` component and, to each operation, the error statuses it can answer."""
    result.setdefault("components", {}).setdefault("schemas", {}).update(ERROR_COMPONENTS)
    content = {"application/json": {"schema": {"$ref": f"#/components/schemas/{ERROR_SCHEMA}"}}}
    for _path, method, operation in operations(result):
        traits = _traits(method, operation)
        responses = operation.setdefault("responses", {})
        for status, (description, applies) in _ERRORS.items():
            if applies(traits):
                responses.setdefault(str(status), {"description": description, "content": content})
    return result
