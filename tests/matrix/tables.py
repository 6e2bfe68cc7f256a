"""The few facts about routes that the URL configuration cannot tell, keyed by URL name.

Everything else the matrices derive: a path parameter named ``book_id`` or
``conversation_id`` names that object (``world.BY_PARAMETER``), a DRF view says its model,
its scope and whether its POST only reads. A route whose parameters cannot be derived and
that is missing here fails ``test_every_route_is_covered`` with a message saying what to
add, so a new route is never skipped silently.
"""

from __future__ import annotations

import json
import re

from console.models import ApiToken, Player
from images.models import ImageConfig
from roleplay.accounts.models import Invite
from roleplay.models import Character, Conversation, ModelConfig, Persona, Preset, Scenario
from roleplay.moderation.models import Case
from roleplay.quotas.models import Plan
from roleplay.regex_scripts.models import RegexScript
from roleplay.textgen.models import InstructTemplate
from roleplay.workflows.tool_models import HttpToolEndpoint, McpServer
from tests.matrix.world import BY_PARAMETER, PROMPT_ID

# Routes anyone may open without signing in.
PUBLIC = {"/", "login", "logout", "healthz", "schema", "docs", "admin:login"}

# What ``pk`` names on console pages.
PK_MODELS = {
    "character_edit": Character,
    "character_delete": Character,
    "character_avatar": Character,
    "character_export": Character,
    "character_chat": Character,
    "conversation_export": Conversation,
    "conversation_export_group": Conversation,
    "conversation_persona": Conversation,
    "conversation_author_note": Conversation,
    "player_personas": Player,
    "persona_edit": Persona,
    "persona_make_default": Persona,
    "persona_delete": Persona,
    "persona_avatar": Persona,
    "conversation_detail": Conversation,
    "conversation_agent": Conversation,
    "conversation_agent_restore": Conversation,
    "conversation_agent_run": Conversation,
    "conversation_story": Conversation,
    "conversation_story_quarantine": Conversation,
    "conversation_summaries": Conversation,
    "conversation_summary": Conversation,
    "conversation_visual_world": Conversation,
    "conversation_workflow_runs": Conversation,
    "conversation_dio": Conversation,
    "memory_documents": Conversation,
    "memory_document": Conversation,
    "conversation_memory_pack": Conversation,
    "play_bookmarks": Conversation,
    "play_bookmark_delete": Conversation,
    "play_branch": Conversation,
    "memory_next_turn": Player,
    "model_config_edit": ModelConfig,
    "model_config_delete": ModelConfig,
    "model_config_make_default": ModelConfig,
    "model_config_test": ModelConfig,
    "image_config_edit": ImageConfig,
    "image_config_delete": ImageConfig,
    "image_config_test": ImageConfig,
    "workflow_http_edit": HttpToolEndpoint,
    "workflow_http_delete": HttpToolEndpoint,
    "workflow_mcp_edit": McpServer,
    "workflow_mcp_delete": McpServer,
    "workflow_mcp_test": McpServer,
    "token_revoke": ApiToken,
    "preset_edit": Preset,
    "preset_delete": Preset,
    "preset_export": Preset,
    "preset_preview": Preset,
    "regex_script_edit": RegexScript,
    "regex_script_delete": RegexScript,
    "instruct_template_delete": InstructTemplate,
    "character_regex_allow": Character,
    "scenario_edit": Scenario,
    "scenario_delete": Scenario,
    "wb_scenario_bindings": Scenario,
    "wb_persona_bindings": Persona,
    "player_app_invite_revoke": Invite,
    "plan_edit": Plan,
    "plan_delete": Plan,
    "moderation_case": Case,
    "moderation_act": Case,
    "moderation_lift": Player,
}


def stage_import(client, world) -> str:
    """A staged worldbook import of ``client``'s session: the wizard's token."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    data = json.dumps({"name": f"{world.label} staged", "entries": []}).encode()
    upload = SimpleUploadedFile("staged.json", data, content_type="application/json")
    response = client.post("/console/worldbooks/import/", {"file": upload})
    assert response.status_code == 302, response.content[:500]
    return re.search(r"/import/([^/]+)/", response["Location"]).group(1)


# Parameters that need the client's session (route name → parameter → maker).
SESSION_PARAMETERS = {"wb_import_preview": {"token": stage_import}}


def playground_body(world, **overrides) -> dict:
    """The playground form as its page offers it, on the world's book."""
    from worldbook.forms import PlaygroundForm

    form = PlaygroundForm(book_choices=[(world.book_id, "book")])
    body = {name: field.initial for name, field in form.fields.items() if field.initial is not None}
    body.update(books=[world.book_id], query="lighthouse", **overrides)
    return {key: value for key, value in body.items() if value != ""}


# Console pages whose POST a viewer may send, because it only reads: (body, status) pairs.
# Each must still write nothing; a body that would write must be refused.
VIEWER_POSTS = {
    "wb_playground": [
        (lambda w: playground_body(w), 200),
        (
            lambda w: playground_body(
                w, conversation_id=str(w.objects.conversation.pk), message_index=1
            ),
            403,
        ),
    ],
    # The page renders for any method; a player writes over the socket, where a viewer is
    # read-only (see the socket matrix).
    "play": [(lambda w: {}, 200)],
    # The preset editor's preview assembles a prompt and stores nothing; a viewer's
    # previews the saved prompts whatever it posts.
    "preset_preview": [(lambda w: {"preview_conversation": str(w.objects.conversation.pk)}, 200)],
    "preset_default_preview": [(lambda w: {}, 200)],
}

# API views whose POST only reads (``read_only_post``): a body that reaches the work.
READ_POST_BODIES = {
    "/v1/context/select": lambda w: {
        "books": [{"book_id": w.book_id}],
        "query": "lighthouse",
        "conversation_id": str(w.objects.conversation.pk),
        "message_index": 1,
    },
    "/v1/search": lambda w: {"query": "lighthouse", "books": [{"book_id": w.book_id}]},
    "/v1/imports/preview": None,  # multipart: the empty body is refused before any work
}

# API writes that validate their body before looking the path's object up: a valid body, so
# the lookup (and the tenancy check) is what answers.
WRITE_BODIES = {
    ("/v1/books/{book_id}/revisions", "POST"): lambda w: {
        "name": w.label,
        "entries": [],
        "expected_revision": w.revision,
    },
}


class _Findings(dict):
    """Known defects that a matrix case finds, each kept visible as a strict xfail (a fix
    turns it into a failure that asks for the entry's removal)."""

    def mark(self, route):
        import pytest

        reason = self.get(route.key)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        return pytest.param(route, marks=marks, id=str(route))


KNOWN_FINDINGS = _Findings({})

# Pages that find their object by a query parameter too.
QUERIES = {
    "wb_entry_row": lambda w: "key=e1",
    "/v1/prompt-bindings": lambda w: f"prompt_id={PROMPT_ID}",
    "/v1/prompt-bindings/resolve": lambda w: f"prompt_id={PROMPT_ID}",
    "/v1/scope-bindings": lambda w: f"scope=chat&target_id={w.objects.conversation.pk}",
    "dio-active-prompt": lambda w: _dio_identity(w.objects.conversation),
}


def _dio_identity(conversation) -> str:
    from urllib.parse import urlencode

    from roleplay.dio.identity import identity_for

    identity = identity_for(conversation)
    return urlencode({"userId": identity.user_id, "conversationId": identity.conversation_id,
                      "targetPromptId": identity.target_prompt_id})  # fmt: skip


# Django admin path parameters: the admin refuses non-staff users before any lookup.
ADMIN_VALUES = {"app_label": "console", "url": "anything"}


class Uncovered(LookupError):
    """A route parameter that neither its name nor these tables explain."""


def _source(route, name: str):
    """``source(world, client)`` giving the value of path parameter ``name`` of ``route``."""
    if route.kind == "admin":
        return lambda world, client: ADMIN_VALUES.get(name, "1")
    if route.kind == "app":
        from tests.matrix.app_world import app_source

        return app_source(route, name)
    maker = SESSION_PARAMETERS.get(route.key, {}).get(name)
    if maker is not None:  # without a session (anonymous), any well-formed token
        return lambda world, client: maker(client, world) if client else "x" * 24
    model = PK_MODELS.get(route.key) or getattr(route.view_class, "model", None)
    if name in BY_PARAMETER or model is not None:
        return lambda world, client: world.value(name, model)
    raise Uncovered(
        f"route {route.key!r} ({route.template}): parameter {name!r} names an unknown "
        "object: add the route to PK_MODELS or SESSION_PARAMETERS in tests/matrix/tables.py, "
        "or the parameter to BY_PARAMETER in tests/matrix/world.py"
    )


def path_for(route, world, client=None) -> str:
    """The route's path (and query) with every parameter set to ``world``'s object."""
    path = route.path(**{name: _source(route, name)(world, client) for name in route.params})
    query = QUERIES.get(route.key)
    return f"{path}?{query(world)}" if query else path


def uncovered(route) -> list[str]:
    """Why the matrices cannot build a path for ``route`` (empty when they can)."""
    problems = []
    for name in route.params:
        try:
            _source(route, name)
        except Uncovered as exc:
            problems.append(str(exc))
    return problems
