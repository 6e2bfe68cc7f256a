"""Lorebook scopes through the REST door: global, scenario, chat and persona bindings (the
same body as ``/prompt-bindings``), the 20-book limit over every scope together, tenant
isolation, the scope strategy setting, and bad input as coded 4xx."""

from __future__ import annotations

import pytest

from roleplay.models import Conversation, Persona, Scenario
from tests.worldbook.api.wb_api_helpers import book, create, error
from worldbook import services
from worldbook.models import PromptBinding

pytestmark = pytest.mark.django_db

URL = "/v1/scope-bindings"


def put(api, scope: str, target: str | None, bindings):
    query = f"?scope={scope}" + (f"&target_id={target}" if target else "")
    return api.put(URL + query, {"bindings": bindings}, format="json")


def books(api, n: int) -> list[str]:
    return [create(api, book(f"b{i}"))["book_id"] for i in range(n)]


@pytest.fixture
def persona(tenant, player):
    return Persona.objects.create(tenant=tenant, player=player, name="Ann")


@pytest.fixture
def scenario(tenant):
    return Scenario.objects.create(tenant=tenant, name="Harbour")


def test_each_scope_round_trips(api, tenant, conversation, persona, scenario):
    (a,) = books(api, 1)
    for scope, target in (
        ("global", None),
        ("scenario", str(scenario.pk)),
        ("chat", str(conversation.pk)),
        ("persona", str(persona.pk)),
    ):
        res = put(api, scope, target, [{"book_id": a, "revision": 1, "position": 3}])
        assert res.status_code == 200, res.content
        body = res.json()
        assert body == {
            "tenant_id": str(tenant.id),
            "scope": scope,
            "target_id": target or "",
            "bindings": [{"book_id": a, "revision": 1, "position": 3, "enabled": True}],
        }
        query = f"?scope={scope}" + (f"&target_id={target}" if target else "")
        assert api.get(URL + query).json() == body
    scopes = set(PromptBinding.objects.filter(tenant=tenant).values_list("scope", flat=True))
    assert scopes == {"global", "scenario", "chat", "persona"}


def test_the_limit_counts_every_scope_of_a_conversation(api, tenant, conversation, character):
    ids = books(api, 21)
    assert put(api, "global", None, [{"book_id": b} for b in ids[:10]]).status_code == 200
    services.put_bindings(tenant, str(character.id), [{"book_id": b} for b in ids[10:15]])
    # The chat's 6 would make 21 books for this conversation.
    res = put(api, "chat", str(conversation.pk), [{"book_id": b} for b in ids[15:21]])
    assert res.status_code == 422
    err = error(res)
    assert err["code"] == "too_many_books"
    assert err["details"] == {"limit": 20, "books": 21, "scope": "chat"}
    assert not PromptBinding.objects.filter(scope="chat").exists()  # nothing written
    # A book bound in two scopes is read once: 5 of the character's again, plus 5 new.
    again = ids[10:15] + ids[15:20]
    assert (
        put(api, "chat", str(conversation.pk), [{"book_id": b} for b in again]).status_code == 200
    )
    # Now global books would push it over: the write that would is refused too.
    res = put(api, "global", None, [{"book_id": b} for b in ids[:10] + ids[20:]])
    assert error(res)["code"] == "too_many_books"
    # And so is the character's, through its own door.
    res = api.put(
        f"/v1/prompt-bindings?prompt_id={character.id}",
        {"bindings": [{"book_id": b} for b in ids[10:15] + ids[20:]]},
        format="json",
    )
    assert res.status_code == 422 and error(res)["code"] == "too_many_books"


def test_a_persona_limit_reaches_conversations_played_with_the_default_persona(
    api, tenant, conversation, persona
):
    Persona.objects.filter(pk=persona.pk).update(is_default=True)
    ids = books(api, 21)
    assert put(api, "global", None, [{"book_id": b} for b in ids[:15]]).status_code == 200
    res = put(api, "persona", str(persona.pk), [{"book_id": b} for b in ids[15:]])
    assert error(res)["code"] == "too_many_books"
    Conversation.objects.filter(pk=conversation.pk).delete()
    assert (
        put(api, "persona", str(persona.pk), [{"book_id": b} for b in ids[15:]]).status_code == 200
    )


def test_another_tenants_targets_and_books_are_404(
    api, other_api, other_tenant, make_tenant, conversation, persona, scenario
):
    (mine,) = books(api, 1)
    for scope, target in (
        ("scenario", scenario.pk),
        ("chat", conversation.pk),
        ("persona", persona.pk),
    ):
        res = put(other_api, scope, str(target), [])
        assert res.status_code == 404, (scope, res.content)
        assert error(res)["code"] == "scope_target_not_found"
        assert other_api.get(f"{URL}?scope={scope}&target_id={target}").status_code == 404
    # Their global list does not take my book, and mine never shows theirs.
    res = put(other_api, "global", None, [{"book_id": mine}])
    assert res.status_code == 422 and error(res)["code"] == "binding_book_missing"
    theirs = create(other_api, book("theirs"))["book_id"]
    assert put(other_api, "global", None, [{"book_id": theirs}]).status_code == 200
    assert api.get(f"{URL}?scope=global").json()["bindings"] == []


@pytest.mark.parametrize(
    ("query", "status", "code"),
    [
        ("", 422, "invalid_scope"),
        ("?scope=prompt", 422, "invalid_scope"),
        ("?scope=../etc", 422, "invalid_scope"),
        ("?scope=chat", 422, "validation_error"),
        ("?scope=global&target_id=x", 422, "validation_error"),
        ("?scope=chat&target_id=not-a-uuid", 404, "scope_target_not_found"),
        ("?scope=persona&target_id=00000000-0000-0000-0000-000000000000", 404, None),
        ("?scope=scenario&target_id=%00", 404, None),
    ],
)
def test_bad_targets_are_coded_4xx(api, query, status, code):
    for res in (api.get(URL + query), api.put(URL + query, {"bindings": []}, format="json")):
        assert res.status_code == status, res.content
        if code:
            assert error(res)["code"] == code


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"bindings": "x"},
        {"bindings": [{"book_id": 5}]},
        {"bindings": [{"book_id": "a"}] * 21},
        {"bindings": [], "extra": 1},
        [],
    ],
)
def test_bad_bodies_are_422(api, body):
    res = api.put(URL + "?scope=global", body, format="json")
    assert res.status_code == 422, res.content
    assert error(res)["code"]


def test_scope_settings(api, tenant, other_api):
    res = api.get("/v1/scope-settings")
    assert res.json() == {"tenant_id": str(tenant.id), "character_strategy": "character_first"}
    assert (
        api.put("/v1/scope-settings", {"character_strategy": "global_first"}, format="json").json()[
            "character_strategy"
        ]
        == "global_first"
    )
    # SillyTavern's number for it works too; another tenant keeps its own.
    res = api.put("/v1/scope-settings", {"character_strategy": 0}, format="json")
    assert res.json()["character_strategy"] == "evenly"
    assert other_api.get("/v1/scope-settings").json()["character_strategy"] == "character_first"
    for bad in ({"character_strategy": "random"}, {"character_strategy": 3}, {}, {"x": 1}):
        res = api.put("/v1/scope-settings", bad, format="json")
        assert res.status_code == 422, (bad, res.content)
        assert error(res)["code"]


def test_deleting_a_target_unbinds_its_books(api, tenant, conversation, persona, scenario):
    from roleplay.conversations.services.conversations import delete_conversations
    from roleplay.players.services.personas import delete_persona
    from roleplay.scenarios.services import delete_scenario

    (a,) = books(api, 1)
    for scope, target in (
        ("scenario", scenario.pk),
        ("chat", conversation.pk),
        ("persona", persona.pk),
    ):
        assert put(api, scope, str(target), [{"book_id": a}]).status_code == 200
    delete_scenario(scenario)
    delete_persona(persona)
    delete_conversations(tenant, Conversation.objects.filter(pk=conversation.pk))
    assert not PromptBinding.objects.filter(tenant=tenant).exists()
