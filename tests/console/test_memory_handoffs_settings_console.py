"""Console pages of memory handoffs and memory settings.

Handoffs: operators create one for a player (a conversation of theirs, the receiving
character, a summary, shareable entries), accept it and close it at the version they read,
all through ``memory.handoffs.services``; a stale version is a 409 that changes nothing.
Settings: the tenant's are an admin's, a character's override an operator's, viewers read;
a save stores only the fields filled in, a bad value is a 422 naming the field and stores
nothing. Another tenant's ids are a 404 everywhere; a viewer's POST is a 403 everywhere."""

from __future__ import annotations

import re

import pytest

from memory.configs import selectors as config_reads
from memory.configs import services as config_writes
from memory.entries import services as entries
from memory.handoffs import services as handoffs
from memory.models import MemoryHandoff, MemorySettings

pytestmark = pytest.mark.django_db

HANDOFFS = "/console/memory/handoffs/"
SETTINGS = "/console/memory/settings/"


def _receiver(tenant, name="Juno"):
    from roleplay.models import Character

    return Character.objects.create(tenant=tenant, name=name)


def shareable_entries(tenant, player, conversation):
    """(a shared preference, an entry of the conversation shared in it, a private fact)."""
    shared = entries.add_entry(
        tenant, player, kind="preference", scope="shared", content="Use metric units.",
        category_key="units",
    )  # fmt: skip
    session = entries.add_entry(
        tenant, player, kind="fact", scope="session", content="The storm reached the bay.",
        session_id=conversation.session_id, share_in_session=True,
    )  # fmt: skip
    private = entries.add_entry(
        tenant, player, kind="fact", scope="shared", content="Private fact, never offered."
    )
    return shared, session, private


def _handoff(tenant, player, conversation, to, **fields):
    fields = {
        "from_character_id": str(conversation.character_id),
        "to_character_id": str(to.pk),
        "session_id": conversation.session_id,
        "summary": "We found the key.",
        "memory_ids": [],
    } | fields
    return handoffs.create_handoff(tenant, player, **fields)


def _state(handoff):
    row = MemoryHandoff.objects.get(pk=handoff.pk)
    return row.status, row.version


def _settings(tenant):
    return {
        row.character_id: (row.data, row.version)
        for row in MemorySettings.objects.filter(tenant=tenant)
    }


# --- handoffs ---------------------------------------------------------------------------


def test_an_operator_creates_accepts_and_closes_a_handoff(
    operator_client, tenant, player, character, conversation
):
    juno = _receiver(tenant)
    shared, session, private = shareable_entries(tenant, player, conversation)

    page = operator_client.get(f"{HANDOFFS}?player={player.pk}")
    html = page.content.decode()
    assert page.status_code == 200 and 'id="handoff-create-form"' in html
    offered = re.findall(r'<option value="([0-9a-f-]+)"', html.split('id="handoff-entries"')[1])
    assert set(offered) == {str(shared.pk), str(session.pk)} and str(private.pk) not in offered
    assert 'href="/console/memory/settings/"' in html  # the memory sub-navigation

    res = operator_client.post(
        HANDOFFS,
        {
            "player": player.pk,
            "conversation": str(conversation.pk),
            "from_character": str(character.pk),
            "to_character": str(juno.pk),
            "summary": "We found the key under the lamp.",
            "memory_ids": [str(shared.pk), str(session.pk)],
        },
    )
    assert res.status_code == 302, res.content.decode()[:2000]
    handoff = MemoryHandoff.objects.get(tenant=tenant)
    assert (handoff.to_character_id, handoff.session_id) == (str(juno.pk), str(conversation.pk))
    assert handoff.from_character_id == str(character.pk) and _state(handoff) == ("pending", 1)

    html = operator_client.get(res["Location"]).content.decode()
    row = re.search(rf'<tr id="handoff-{handoff.pk}">.*?</tr>', html, re.S).group(0)
    assert "Juno" in row and "We found the key under the lamp." in row
    assert "Use metric units." in row and "The storm reached the bay." in row
    assert f'href="/console/conversations/{conversation.pk}/"' in row
    assert f'href="?player={player.pk}"' in row and ">Ann</a>" in row

    action = f"{HANDOFFS}{handoff.pk}/"
    assert operator_client.post(action, {"action": "accept"}).status_code == 302
    assert _state(handoff) == ("accepted", 2)
    assert operator_client.post(action, {"action": "close", "version": 2}).status_code == 302
    assert _state(handoff) == ("closed", 3)
    # Filters: by status, by player.
    closed = operator_client.get(f"{HANDOFFS}?status=closed").content.decode()
    assert f'id="handoff-{handoff.pk}"' in closed
    assert (
        f'id="handoff-{handoff.pk}"'
        not in operator_client.get(f"{HANDOFFS}?status=pending").content.decode()
    )


def test_a_stale_close_is_a_conflict_that_changes_nothing(
    operator_client, tenant, player, conversation
):
    handoff = _handoff(tenant, player, conversation, _receiver(tenant))
    handoffs.accept_handoff(
        tenant, handoff, character_id=handoff.to_character_id, session_id=handoff.session_id
    )
    action = f"{HANDOFFS}{handoff.pk}/"
    res = operator_client.post(action, {"action": "close", "version": 1})
    assert res.status_code == 409
    assert "it is now at version 2" in res.content.decode()
    assert _state(handoff) == ("accepted", 2)
    # A version that is not an integer, an unknown action: a clear 4xx, nothing changed.
    res = operator_client.post(action, {"action": "close", "version": "two"})
    assert res.status_code == 422 and "version must be" in res.content.decode()
    res = operator_client.post(action, {"action": "reopen", "version": 2})
    assert res.status_code == 400 and "Unknown action" in res.content.decode()
    assert _state(handoff) == ("accepted", 2)
    # Closed: accepting again is refused.
    handoffs.close_handoff(
        tenant, handoff, 2, character_id=handoff.to_character_id, session_id=handoff.session_id
    )
    res = operator_client.post(action, {"action": "accept"})
    assert res.status_code == 409 and "cannot be accepted" in res.content.decode()


@pytest.mark.parametrize(
    ("change", "status", "shown"),
    [
        ({"player": "abc"}, 404, "no such player"),
        ({"player": "9" * 30}, 404, "no such player"),
        ({"conversation": "not-a-uuid"}, 404, "no such conversation"),
        ({"to_character": "00000000-0000-0000-0000-000000000000"}, 404, "no such character"),
        ({"from_character": ""}, 422, "from persona id"),
        ({"from_character": "x" * 65}, 422, "from persona id"),
        ({"from_character": "a\x00b"}, 422, "NUL"),
        ({"memory_ids": ["nope"]}, 422, "not a valid id"),
        ({"summary": "x" * 2001}, 422, "at most 2000"),
        ({"to_character": "SELF"}, 422, "from one persona to another"),
        ({"memory_ids": ["PRIVATE"]}, 422, "a handoff may reference"),
    ],
)
def test_bad_create_input_is_refused_and_creates_nothing(
    operator_client, tenant, player, character, conversation, change, status, shown
):
    _shared, _session, private = shareable_entries(tenant, player, conversation)
    body = {
        "player": player.pk,
        "conversation": str(conversation.pk),
        "from_character": "persona-a",
        "to_character": str(character.pk),
        "summary": "Hello.",
    } | change
    if body["to_character"] == "SELF":
        body["to_character"] = body["from_character"] = str(character.pk)
    if body.get("memory_ids") == ["PRIVATE"]:
        body["memory_ids"] = [str(private.pk)]
    res = operator_client.post(HANDOFFS, body)
    assert res.status_code == status and shown in res.content.decode()
    assert not MemoryHandoff.objects.exists()


def test_another_tenants_ids_are_not_found(operator_client, tenant, player, conversation, foreign):
    theirs = _handoff(
        foreign["player"].tenant,
        foreign["player"],
        foreign["conversation"],
        foreign["character"],
        from_character_id="persona-x",
    )
    for body in ({"action": "accept"}, {"action": "close", "version": 1}):
        assert operator_client.post(f"{HANDOFFS}{theirs.pk}/", body).status_code == 404
    assert _state(theirs) == ("pending", 1)
    assert str(theirs.pk) not in operator_client.get(HANDOFFS).content.decode()
    assert operator_client.get(f"{HANDOFFS}?player={foreign['player'].pk}").status_code == 404
    assert operator_client.get(f"{HANDOFFS}?player={'9' * 30}").status_code == 404
    base = {
        "player": player.pk,
        "conversation": str(conversation.pk),
        "from_character": "persona-a",
        "to_character": str(_receiver(tenant).pk),
        "summary": "Hello.",
    }
    for change in (
        {"player": foreign["player"].pk},
        {"conversation": str(foreign["conversation"].pk)},
        {"to_character": str(foreign["character"].pk)},
    ):
        assert operator_client.post(HANDOFFS, base | change).status_code == 404, change
    # Another tenant's entry id is not this player's: refused, nothing created.
    their_entry = entries.add_entry(
        foreign["player"].tenant, foreign["player"], kind="preference", scope="shared",
        content="Theirs.",
    )  # fmt: skip
    res = operator_client.post(HANDOFFS, base | {"memory_ids": [str(their_entry.pk)]})
    assert res.status_code == 422 and "is not this player" in res.content.decode()
    assert MemoryHandoff.objects.filter(tenant=tenant).count() == 0
    # Settings: another tenant's character is not found either.
    for action in ("save", "remove"):
        body = {"character": str(foreign["character"].pk), "action": action, "max_selected": 3}
        assert operator_client.post(SETTINGS, body).status_code == 404
    assert _settings(tenant) == {}


# --- viewers ------------------------------------------------------------------------------


def test_a_viewer_reads_both_pages_and_every_post_is_refused(
    viewer_client, tenant, player, character, conversation
):
    handoff = _handoff(tenant, player, conversation, _receiver(tenant))
    config_writes.put_settings(tenant, {"max_selected": 4}, character_id=str(character.pk))
    before = (_state(handoff), _settings(tenant))
    for url in (HANDOFFS, f"{HANDOFFS}?player={player.pk}", SETTINGS):
        page = viewer_client.get(url)
        html = page.content.decode()
        assert page.status_code == 200, url
        assert "handoff-accept" not in html and "handoff-create-form" not in html
        assert "settings-save" not in html and "settings-remove" not in html
    posts = [
        (f"{HANDOFFS}{handoff.pk}/", {"action": "accept"}),
        (f"{HANDOFFS}{handoff.pk}/", {"action": "close", "version": 1}),
        (
            HANDOFFS,
            {
                "player": player.pk,
                "conversation": str(conversation.pk),
                "from_character": "a",
                "to_character": str(character.pk),
                "summary": "mine",
            },
        ),
        (SETTINGS, {"character": "", "action": "save", "max_selected": 2}),
        (SETTINGS, {"character": str(character.pk), "action": "save", "max_selected": 2}),
        (SETTINGS, {"character": str(character.pk), "action": "remove"}),
    ]
    for url, body in posts:
        assert viewer_client.post(url, body).status_code == 403, (url, body)
    assert (_state(handoff), _settings(tenant)) == before
    assert MemoryHandoff.objects.count() == 1


# --- settings -----------------------------------------------------------------------------


def test_an_operator_saves_and_removes_a_characters_override(operator_client, tenant, character):
    config_writes.put_settings(tenant, {"max_selected": 7, "enabled": True})
    page = operator_client.get(SETTINGS)
    html = page.content.decode()
    assert page.status_code == 200
    new = html.split('id="settings-new-override"')[1]
    assert f'<option value="{character.pk}"' in new
    # The tenant's values are the placeholders of a character's form; ranges are min/max.
    assert 'name="max_selected" id="settings-new-override-max_selected" value="" min="0" ' in new
    assert 'placeholder="7"' in new and 'name="max_entries"' not in new  # per player
    assert 'name="consolidation"' in new and 'name="set_document_tools"' in new

    cid = str(character.pk)
    res = operator_client.post(
        SETTINGS,
        {
            "character": cid,
            "action": "save",
            "max_selected": " 3 ",
            "max_selected_chars": "",
            "set_enabled": "on",  # set here, unchecked: stored as false
            "learn_from_rules": "on",  # not "set here": not stored
            "document_slot": "notes",
            "consolidation": '{"enabled": true, "early_messages": 10}',
        },
    )
    assert res.status_code == 302
    stored = {"max_selected": 3, "enabled": False, "document_slot": "notes"}
    stored["consolidation"] = {"enabled": True, "early_messages": 10}
    assert config_reads.stored(tenant, cid).data == stored
    in_force = config_reads.config_for(tenant, cid)
    assert in_force.max_selected == 3 and in_force.learn_from_rules is True
    html = operator_client.get(SETTINGS).content.decode()
    section = html.split(f'id="settings-{cid}"')[1].split("</section>")[0]
    assert "Override of Mira" in section and 'value="3"' in section
    assert "Remove override" in section

    res = operator_client.post(SETTINGS, {"character": cid, "action": "remove"})
    assert res.status_code == 302 and config_reads.stored(tenant, cid) is None
    # Removing again: nothing to remove, a 404 that says so.
    res = operator_client.post(SETTINGS, {"character": cid, "action": "remove"})
    assert res.status_code == 404 and "has no override" in res.content.decode()


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [
        ("max_selected", "21", "max_selected: must be an integer from 0 to 20"),
        ("max_selected_chars", "-1", "max_selected_chars: must be an integer from 0 to 4000"),
        ("temporary_days", "1.5", "temporary_days: must be an integer from 1 to 365"),
        ("consolidation", "{not json", "consolidation: not valid JSON"),
        ("consolidation", "[1, 2]", "consolidation: must be an object or null"),
        ("consolidation", '{"a": NaN}', "consolidation: not valid JSON"),
        ("consolidation", '{"a": "\\u0000"}', "NUL"),
        ("document_slot", "no spaces", "document_slot: a slot is"),
    ],
)
def test_a_bad_value_names_the_field_and_stores_nothing(
    operator_client, tenant, character, field, value, shown
):
    cid = str(character.pk)
    config_writes.put_settings(tenant, {"max_selected": 4}, character_id=cid)
    before = _settings(tenant)
    res = operator_client.post(
        SETTINGS, {"character": cid, "action": "save", "max_selected": "2", field: value}
    )
    html = res.content.decode()
    assert res.status_code == 422 and shown in html
    assert _settings(tenant) == before
    # The typed values are kept in the form.
    section = html.split(f'id="settings-{cid}"')[1].split("</section>")[0]
    assert f'name="{field}"' in section


def test_tenant_settings_are_an_admins(admin_client, operator_client, tenant):
    body = {"character": "", "action": "save", "max_entries": "300", "max_selected": "6"}
    res = operator_client.post(SETTINGS, body)
    assert res.status_code == 403 and "Only an admin" in res.content.decode()
    assert _settings(tenant) == {}
    html = operator_client.get(SETTINGS).content.decode()
    tenant_form = html.split('id="settings-tenant"')[1].split("</section>")[0]
    assert "settings-save" not in tenant_form and "readonly" in tenant_form

    res = admin_client.post(SETTINGS, body)
    assert res.status_code == 302
    assert _settings(tenant) == {"": ({"max_entries": 300, "max_selected": 6}, 1)}
    assert config_reads.config_for(tenant).max_entries == 300
    # Out of range: named, nothing stored.
    res = admin_client.post(SETTINGS, body | {"max_entries": "5"})
    assert res.status_code == 422
    assert "max_entries: must be an integer from 10 to 2000" in res.content.decode()
    assert _settings(tenant) == {"": ({"max_entries": 300, "max_selected": 6}, 1)}
    # The tenant's settings cannot be removed; an unknown action is a 400.
    assert admin_client.post(SETTINGS, {"character": "", "action": "remove"}).status_code == 400
    assert admin_client.post(SETTINGS, {"character": "", "action": "wipe"}).status_code == 400
    assert _settings(tenant) == {"": ({"max_entries": 300, "max_selected": 6}, 1)}
    # A malformed or unknown character id: 404, nothing stored.
    for cid in ("zzz", "00000000-0000-0000-0000-000000000000"):
        res = admin_client.post(SETTINGS, {"character": cid, "max_selected": "3"})
        assert res.status_code == 404 and "no such character" in res.content.decode()
    assert len(_settings(tenant)) == 1


def test_the_memory_pages_share_a_sub_navigation(operator_client):
    for url in ("/console/memory/", "/console/memory/queue/", HANDOFFS, SETTINGS):
        html = operator_client.get(url).content.decode()
        nav = re.search(r'<nav class="memory-subnav.*?</nav>', html, re.S).group(0)
        for link in ("/console/memory/", "/console/memory/queue/", HANDOFFS, SETTINGS):
            assert f'href="{link}"' in nav, (url, link)
        assert nav.count('aria-current="page"') == 1, url
