"""Memory settings of a tenant and of a character: the pure rules (fields, ranges, which
override which), the REST doors, and what they change in a chat turn and in the caps."""

from __future__ import annotations

import pytest

from memory.engine.config import MemoryConfig, check_config, resolve
from memory.engine.preferences import HEADING
from memory.entries.services import add_entry
from memory.errors import MemoryConflict, MemoryInvalid
from memory.models import MemoryEntry
from tests.api.helpers import assert_error


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"colour": 1}, "colour"),
        ({"enabled": "yes"}, "enabled"),
        ({"max_entries": 5}, "max_entries"),
        ({"max_selected": 21}, "max_selected"),
        ({"temporary_days": True}, "temporary_days"),
        ({"consolidation": []}, "consolidation"),
        ([], "config"),
    ],
)
def test_bad_settings_name_their_field(data, field):
    with pytest.raises(MemoryInvalid) as refused:
        check_config(data)
    assert (refused.value.code, refused.value.details["field"]) == ("validation_error", field)


def test_a_character_overrides_the_tenant_but_not_the_per_player_caps():
    base = MemoryConfig()
    config = resolve(
        base,
        {"max_entries": 300, "max_selected": 3, "enabled": False},
        {"max_entries": 20, "max_selected": 2, "enabled": True},
    )
    assert (config.max_entries, config.max_selected, config.enabled) == (300, 2, True)
    assert resolve(base, None, None) == base == MemoryConfig(max_entries=200, max_selected=5)


pytestmark = pytest.mark.django_db


def test_rest_tenant_and_character_settings(api, api_client_for, tenant, character, other_tenant):
    answer = api.get("/api/v1/memory/settings").json()
    assert answer["version"] == 0 and answer["stored"] == {}
    assert answer["effective"]["max_selected"] == 5 and answer["effective"]["max_entries"] == 200
    put = api.put("/api/v1/memory/settings", {"max_selected": 3, "max_entries": 50}, format="json")
    assert put.status_code == 200, put.content
    assert put.json()["effective"]["max_selected"] == 3 and put.json()["version"] == 1
    bad = api.put("/api/v1/memory/settings", {"max_selected": 3, "oops": 1}, format="json")
    assert_error(bad, 400, "validation_error")
    bad = api.put("/api/v1/memory/settings", {"document_slot": "no spaces"}, format="json")
    assert assert_error(bad, 422, "validation_error")["details"]["field"] == "document_slot"
    assert api.get("/api/v1/memory/settings").json()["stored"] == {
        "max_selected": 3,
        "max_entries": 50,
    }
    content_only = api_client_for(tenant, scopes=["content"])
    assert content_only.get("/api/v1/memory/settings").status_code == 200
    assert content_only.put("/api/v1/memory/settings", {}, format="json").status_code == 403

    url = f"/api/v1/characters/{character.pk}/memory-settings/"
    mine = api.put(url, {"max_selected": 1, "max_entries": 11}, format="json").json()
    assert mine["effective"]["max_selected"] == 1 and mine["effective"]["max_entries"] == 50
    assert api.delete(url).status_code == 204
    assert api.get(url).json()["effective"]["max_selected"] == 3
    foreign = api_client_for(other_tenant)
    assert_error(foreign.get(url), 404, "not_found")
    theirs = foreign.get("/api/v1/memory/settings").json()  # each tenant its own settings
    assert theirs["version"] == 0 and theirs["effective"]["max_selected"] == 5


def test_a_lower_cap_refuses_sooner(api, tenant, player):
    api.put("/api/v1/memory/settings", {"max_entries": 10}, format="json")
    for n in range(10):
        add_entry(tenant, player, kind="fact", scope="shared", content=f"fact {n}")
    with pytest.raises(MemoryConflict) as full:
        add_entry(tenant, player, kind="fact", scope="shared", content="one more")
    assert (full.value.code, full.value.details["max_entries"]) == ("memory_full", 10)


@pytest.mark.django_db(transaction=True)
def test_the_characters_settings_shape_the_turn(api, tenant, player, character, conversation, llm):
    for n, text in enumerate(["Keep replies short.", "Use British spelling."]):
        add_entry(
            tenant, player, kind="preference", scope="shared", content=text, category_key=f"c{n}"
        )
    url = f"/api/v1/characters/{character.pk}/memory-settings/"

    def turn(n: int, content: str) -> str:
        res = api.post(
            f"/api/v1/conversations/{conversation.pk}/turns/run",
            {"client_message_id": f"m{n}", "content": content},
            format="json",
        )
        assert res.status_code == 201, res.content
        return "\n".join(m["content"] for m in llm.requests[-1]["messages"])

    api.put(url, {"max_selected": 1}, format="json")
    sent = turn(1, "Hello.")
    assert HEADING in sent and sum(t in sent for t in ("short.", "British")) == 1
    api.put(url, {"learn_from_rules": False}, format="json")
    turn(2, "Please call me Captain from now on.")
    assert not MemoryEntry.objects.filter(origin="rule").exists()
    api.put(url, {"enabled": False}, format="json")
    assert HEADING not in turn(3, "Hello again.")


@pytest.mark.django_db
def test_a_task_reads_the_settings_once_and_later_reads_see_a_change(
    tenant, django_assert_num_queries
):
    from memory.configs import services as config_writes
    from memory.configs.selectors import config_for, read_once

    config_writes.put_settings(tenant, {"max_selected": 3})
    with read_once():
        with django_assert_num_queries(2):  # the tenant's, then a character's
            first = config_for(tenant)
            assert config_for(tenant.pk) is first  # by instance or by key: one answer
            config_for(tenant, "c-1")
            config_for(tenant, "c-1")
        config_writes.put_settings(tenant, {"max_selected": 4})
        assert config_for(tenant).max_selected == 3  # one answer for the whole block
    assert config_for(tenant).max_selected == 4  # outside: read afresh
