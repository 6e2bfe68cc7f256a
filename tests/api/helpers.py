"""Helpers of the API tests: the route table from the URL resolver, error checks, DB snapshots.

The route table is read from Django's resolver rather than written by hand, so a route added
to ``/api/v1/`` later is enumerated (and therefore covered by the isolation, auth and fuzz
tests) without anyone remembering to list it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.apps import apps
from django.db import connection
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RegexPattern

API_PREFIX = "/api/v1/"
# Apps whose tables hold product data: every 4xx must leave all of them untouched.
PROJECT_APPS = ("console", "memory", "roleplay", "worldbook", "story", "images")
# ``last_used_at`` of a token moves on any authenticated call (at most once a minute): its
# table is compared by row count only.
COUNT_ONLY_TABLES = {"console_apitoken"}

_GROUP = re.compile(r"\(\?P<(\w+)>[^)]*\)")


@dataclass(frozen=True)
class Route:
    """One concrete API route: a path template like ``/api/v1/conversations/{pk}/turns``."""

    template: str
    name: str
    view_class: type
    methods: tuple[str, ...]
    actions: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def has_id(self) -> bool:
        return "{" in self.template

    @property
    def model(self):
        return getattr(self.view_class, "model", None)

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(re.findall(r"\{(\w+)\}", self.template))

    def path(self, **ids) -> str:
        return self.template.format(**{k: str(v) for k, v in ids.items()})

    def path_in(self, world) -> str:
        """The route on ``world``'s objects (its conversation's last message for a
        ``message_id``)."""
        return self.path(**world.ids_for(self)) if self.has_id else self.template

    def path_with(self, value) -> str:
        """The route with ``value`` for every id."""
        return self.path(**dict.fromkeys(self.params, value))

    def __str__(self) -> str:
        return f"{self.name} {self.template}"


def _pattern_text(pattern) -> str:
    if isinstance(pattern, RegexPattern):  # re_path / router
        return pattern._regex
    return str(pattern)  # RoutePattern (path): its route text, converters in <...>


def _to_template(raw: str, prefix: str) -> str | None:
    text = raw.replace("^", "").replace("$", "")
    if "(?P<format>" in text or "<drf_format_suffix" in text:
        return None  # the ``.json`` suffix twin of a route listed on its own
    text = _GROUP.sub(lambda m: "{" + m.group(1) + "}", text)
    text = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: "{" + m.group(1) + "}", text)
    text = "/" + text.replace("/?", "")
    if not text.startswith(prefix):
        return None
    if re.search(r"[\\()\[\]*+?|]", text):
        raise AssertionError(f"cannot turn URL pattern {raw!r} into a path template")
    return text


def _walk(patterns, prefix: str = ""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, prefix + _pattern_text(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + _pattern_text(entry.pattern), entry


def api_routes(prefix: str = API_PREFIX) -> list[Route]:
    """Every DRF route under ``prefix`` except the router's API root."""
    routes: dict[str, Route] = {}
    for raw, entry in _walk(get_resolver().url_patterns):
        view_class = getattr(entry.callback, "cls", None)
        if view_class is None:
            continue
        template = _to_template(raw, prefix)
        if template is None or template == prefix:
            continue
        # DRF adds ``head`` to a viewset's actions on its first request: not a route of ours.
        actions = {
            method: action
            for method, action in (getattr(entry.callback, "actions", None) or {}).items()
            if method not in ("head", "options")
        }
        if actions:
            methods = tuple(sorted(m.upper() for m in actions))
        else:
            methods = tuple(
                sorted(
                    m.upper()
                    for m in view_class.http_method_names
                    if m not in ("options", "head", "trace") and hasattr(view_class, m)
                )
            )
        routes.setdefault(template, Route(template, entry.name or "", view_class, methods, actions))
    return sorted(routes.values(), key=lambda r: r.template)


def takes_files_only(route: Route, method: str) -> bool:
    """A write whose body is a file upload (multipart only, never JSON): the JSON-body
    checks here do not apply to it. Its limits, tenancy and scopes are checked by
    ``tests/limits``, ``tests/matrix`` and the schema fuzzer of ``tests/contract``; its
    content by its own tests (``tests/characters``)."""
    from rest_framework.parsers import JSONParser

    if method not in ("POST", "PUT", "PATCH"):
        return False
    parsers = getattr(route.view_class, "parser_classes", ())
    return bool(parsers) and not any(issubclass(p, JSONParser) for p in parsers)


def route_cases(predicate=lambda route, method: True, prefix: str = API_PREFIX):
    """``(route, method)`` pairs for ``pytest.mark.parametrize`` with readable ids; the
    JSON-body checks of this package leave file uploads out (:func:`takes_files_only`)."""
    import pytest

    return [
        pytest.param(route, method, id=f"{method} {route.template}")
        for route in api_routes(prefix)
        for method in route.methods
        if predicate(route, method) and not takes_files_only(route, method)
    ]


def _receiver(world) -> dict:
    """Who accepts or closes the world's handoff: its receiving character, in its conversation."""
    return {"character": str(world.character.id), "conversation": str(world.conversation.id)}


def valid_body(route: Route, method: str, world) -> dict:
    """A body the route accepts for ``world``'s tenant (creates and PUTs need all fields)."""
    basename, _, kind = route.name.partition("-")
    if basename in ("preset", "scenario") and method in ("PUT", "PATCH") and kind == "detail":
        versioned = world.preset if basename == "preset" else world.scenario
        return {"name": "n", "version": versioned.version}  # compare-and-set
    if method in ("POST", "PUT", "PATCH") and kind in ("list", "detail"):
        return {
            "modelconfig": {"name": "n", "provider": "llama_cpp", "model": "m"},
            "character": {"name": "n"},
            "player": {"external_id": "n"},
            "conversation": {"player": world.player.id, "character": str(world.character.id)},
            "persona": {"player": world.player.id, "name": "n"},
            "preset": {"name": "n"},
            "plan": {"name": "n"},
            "scenario": {"name": "n"},
            "imageconfig": {
                "name": "n",
                "provider": "openai_compatible",
                "base_url": world.image_config.base_url,
            },
            "imagegeneration": {"prompt": "a key", "image_config": str(world.image_config.pk)},
            "httptoolendpoint": {"name": "n", "url_prefix": "https://lore.example/api"},
            "mcpserver": {"name": "n", "url": "https://tools.example/mcp", "allowed_tools": ["t"]},
            "regexscript": {
                "scope": "global",
                "script": {"scriptName": "n", "findRegex": "/a/g", "placement": [2]},
            },
            "instructtemplate": {
                "file": {"input_sequence": "U:", "output_sequence": "A:"},
                "name": "n",
            },  # fmt: skip
        }.get(basename, {})
    return {
        "conversation-archive": {"keep_recent": 0},
        "conversation-rollback": {"timestamps": [m.ts for m in world.messages]},
        "conversation-rollback-to": {"message_id": str(world.messages[-1].id)},
        "conversation-branches": {"message_id": str(world.messages[-1].id)},
        "conversation-bookmarks": {"message_id": str(world.messages[-1].id), "name": "n"},
        "conversation-update-message": {"content": "edited"},
        "conversation-select-alternative": {"index": 0},
        "conversation-opening": {"index": 0},
        "player-plan": {"plan": str(world.plan.pk)},
        "conversation-run-turn": {"client_message_id": "c-1", "content": "Hello."},
        "conversation-members": {"character": str(world.guest.pk)},
        "conversation-member": {"muted": True},
        "conversation-memory-document": {"expectedRevision": 0, "memory": {"scene": "gate"}},
        "conversation-visual-world": {"revision": 1, "state": {"scene": "noon"}},
        "conversation-visual-world-restore": {"revision": 1, "to": 1},
        "conversation-dio": {"instruction": "From now on, answer briefly."},
        "conversation-dio-revert": {"version": 1, "expectedVersion": 1},
        "conversation-dio-off": {"expectedVersion": 1},
        "player-memory-entries": {"kind": "preference", "scope": "shared", "content": "be warm"},
        "player-memory-entry": {"version": 1},  # PATCH (nothing but the version) and DELETE
        "player-memory-entry-accept": {"version": 1},
        "player-memory-entry-reject": {"version": 1},
        "player-memory-entry-pin": {"version": 1},
        "player-memory-entry-unpin": {"version": 1},
        "player-memory-clear": {},
        "player-memory-recall": {"query": "hello"},
        "player-memory-fetch": {"ids": [str(world.messages[-1].id)]},
        "player-memory-learn": {"content": "likes green tea"},
        "player-memory-forget": {"ids": [str(world.entry.pk)]},
        "player-memory-list": {},
        "player-memory-consolidate": {"conversation": str(world.conversation.id)},
        "player-memory-handoffs": {
            "from_character": "an-earlier-persona",
            "to_character": str(world.character.id),
            "conversation": str(world.conversation.id),
            "summary": "handed over",
        },
        "player-memory-handoff-accept": _receiver(world),
        "player-memory-handoff-close": {**_receiver(world), "version": 1},
        "preset-import": {"name": "n", "preset": {"prompts": []}},
        "regexscript-import": {
            "scope": "global",
            "file": [{"scriptName": "n", "findRegex": "/a/g", "placement": [2]}],
        },
        "character-regex-allow": {"allow": True},
        "moderationcase-act": {"action": "dismiss", "reason": "checked"},
        "conversation-agent-state-restore": {"revision": 1},
        "conversation-story-quarantine-resolve": {"note": "settled by hand"},
        "conversation-checkpoint-edit": {
            "summary": {
                "format": "structured_json",
                "canonical": ["edited by hand"],
                "interaction": [],
                "open_threads": [],
            },
            "expected_version": 1,
        },  # fmt: skip
        "conversation-checkpoint-regenerate": {"expected_version": 1},
        "conversation-checkpoint-delete": {"expected_version": 1},
        "conversation-auto-replies": {
            "assistant_message_id": str(world.messages[-1].id),
            "language": "en",
            "wait_ms": 0,
        },
    }.get(route.name, {})


def assert_error(response, status: int, code: str) -> dict:
    """The response is the one error format with this status and code; returns the error."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) >= {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "message", "details"}, error
    assert error["code"] == code, error
    assert isinstance(error["message"], str) and error["message"]
    return error


def error_locs(response) -> set[str]:
    """Field locations named by a ``validation_error``."""
    error = assert_error(response, 400, "validation_error")
    return {item["loc"] for item in error["details"]["errors"]}


def project_tables() -> list[str]:
    return sorted(
        model._meta.db_table
        for model in apps.get_models()
        if model._meta.app_label in PROJECT_APPS and model._meta.managed
    )


def db_snapshot() -> dict[str, tuple[int, str]]:
    """Row count and a content hash of every product table, in one query.

    Comparing snapshots before and after a rejected request proves it wrote nothing: not a
    row more or less, and no field of any row changed.
    """
    parts = []
    for table in project_tables():
        quoted = connection.ops.quote_name(table)
        digest = (
            "''"
            if table in COUNT_ONLY_TABLES
            else f"(SELECT coalesce(md5(string_agg(md5(t::text), '' ORDER BY md5(t::text))), '')"
            f" FROM {quoted} t)"
        )
        parts.append(f"(SELECT count(*) FROM {quoted}), {digest}")
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(parts))
        row = cursor.fetchone()
    tables = project_tables()
    return {table: (row[2 * i], row[2 * i + 1]) for i, table in enumerate(tables)}


def snapshot_diff(before: dict, after: dict) -> list[str]:
    return [table for table in before if before[table] != after.get(table)]
