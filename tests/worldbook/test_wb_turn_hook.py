"""The chat turn's worldbook hook reports worldbook's own errors by their stable code.

The hook is the one caller of worldbook that is not HTTP: a broken binding or a required
entry that cannot be placed must reach the turn as ``WorldbookTurnError(code)``, which the
turn turns into an ``error`` event, not as an HTTP exception it would have to unwrap.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from console.tokens import CL100K
from roleplay.prompting.assembly import ActorInputs, Card, capabilities
from roleplay.prompting.default_preset import default_preset
from roleplay.turns.settings import ScenarioSettings
from roleplay.worldbook_plugin.context import WorldbookTurnError, apply
from worldbook import services
from worldbook.engine.schema import BookIn
from worldbook.models import PromptBinding

pytestmark = pytest.mark.django_db


def _context():
    inputs = ActorInputs(card=Card(name="Mira"), persona_name="Ann")
    preset = default_preset()
    return SimpleNamespace(
        preset=preset,
        actor_inputs=lambda blocks=True: inputs,
        placement_capabilities=lambda: capabilities(preset, inputs),
        trace={},
        user_input="hello",
        history=[SimpleNamespace(role="user", content="earlier")],
        turn=SimpleNamespace(id="turn-1"),
        user_name="Ann",
        persona=SimpleNamespace(persona_id=None),
        blocks=[],
        record=True,
        scenario=None,
        settings=ScenarioSettings(None),
        agent_state=None,
        variables={},
        tokens=CL100K,
    )


def _conversation(tenant, character):
    return SimpleNamespace(tenant=tenant, character=character, session_id="hook-session")


def _book(tenant, entries):
    book, _ = services.create_book(
        tenant, BookIn.model_validate({"name": "Hook", "entries": entries})
    )
    return book


def test_a_broken_binding_fails_the_turn_with_its_code(tenant, character):
    book = _book(tenant, [{"id": "a", "content": "A."}])
    PromptBinding.objects.create(tenant=tenant, prompt_id=str(character.id), book=book, revision=9)
    with pytest.raises(WorldbookTurnError) as info:
        apply(_context(), _conversation(tenant, character))
    assert info.value.code == "binding_broken"


def test_a_required_entry_without_a_place_fails_the_turn(tenant, character):
    entry = {"id": "r", "content": "Must be read.", "required": True, "position": "outlet"}
    book = _book(tenant, [{**entry, "outlet_name": "scene"}])
    services.put_bindings(tenant, str(character.id), [{"book_id": str(book.id)}])
    with pytest.raises(WorldbookTurnError) as info:
        apply(_context(), _conversation(tenant, character))
    assert info.value.code == "required_unplaceable"


def test_a_working_binding_places_blocks(tenant, character):
    book = _book(tenant, [{"id": "c", "content": "Always.", "constant": True}])
    services.put_bindings(tenant, str(character.id), [{"book_id": str(book.id)}])
    ctx = _context()
    apply(ctx, _conversation(tenant, character))
    assert [block["content"] for block in ctx.blocks] == ["Always."]
    assert ctx.trace["worldbook"]["books"] == [{"book_id": str(book.id), "revision": 1}]


def test_the_scenarios_scope_order_overrides_the_tenants(tenant, character):
    from roleplay.models import Scenario

    scenario = Scenario.objects.create(
        tenant=tenant, name="Evenly", worldbook={"characterStrategy": "evenly"}
    )
    mine = _book(tenant, [{"id": "c", "content": "Mine.", "constant": True}])
    shared = _book(tenant, [{"id": "g", "content": "Everyone's.", "constant": True}])
    services.put_bindings(tenant, str(character.id), [{"book_id": str(mine.id)}])
    services.put_bindings(tenant, "", [{"book_id": str(shared.id)}], scope="global")
    services.set_scope_strategy(tenant, "global_first")
    ctx = _context()
    apply(ctx, _conversation(tenant, character))
    assert ctx.trace["worldbook"]["scopes"]["strategy"] == "global_first"
    assert [b["scope"] for b in ctx.trace["worldbook"]["scopes"]["books"]] == ["global", "prompt"]
    ctx = _context()
    ctx.scenario, ctx.settings = scenario, ScenarioSettings(scenario)
    apply(ctx, _conversation(tenant, character))
    scopes = ctx.trace["worldbook"]["scopes"]
    assert scopes["strategy"] == "evenly"
    assert [(b["scope"], b["tier"]) for b in scopes["books"]] == [("prompt", 2), ("global", 2)]


def test_a_scenarios_scope_order_is_checked_on_save(api):
    res = api.post(
        "/api/v1/scenarios/",
        {"name": "s", "worldbook": {"characterStrategy": "global_first"}},
        format="json",
    )
    assert res.status_code == 201, res.content
    assert res.json()["worldbook"]["characterStrategy"] == "global_first"
    res = api.post(
        "/api/v1/scenarios/", {"name": "t", "worldbook": {"characterStrategy": 1}}, format="json"
    )
    assert 400 <= res.status_code < 500, res.content
