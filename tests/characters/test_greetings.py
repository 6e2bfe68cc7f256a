"""Starting a conversation on one of the character's openings: the API field and the console
choice, checked against the character by the service; the selector gives its text."""

from __future__ import annotations

import pytest

from roleplay.characters.selectors import greeting_choices, greeting_for
from roleplay.conversations.services import conversations
from roleplay.errors import FieldErrors
from roleplay.models import Conversation
from tests.api.helpers import assert_error, db_snapshot, snapshot_diff

pytestmark = pytest.mark.django_db

GREETINGS = ["The lamp needs trimming.", "You again?"]


@pytest.fixture
def mira(character):
    character.alternate_greetings = GREETINGS
    character.save()
    return character


def start(api, mira, player, **extra):
    body = {"player": player.pk, "character": str(mira.pk), **extra}
    return api.post("/api/v1/conversations/", body, format="json")


@pytest.mark.parametrize(
    ("index", "text"), [(None, "Welcome."), (0, "Welcome."), (1, GREETINGS[0]), (2, GREETINGS[1])]
)
def test_the_api_starts_on_the_chosen_opening(api, mira, player, index, text):
    extra = {} if index is None else {"greeting_index": index}
    response = start(api, mira, player, **extra)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["greeting_index"] == (index or 0) and body["greeting"] == text
    assert greeting_for(Conversation.objects.get(pk=body["id"])) == text


@pytest.mark.parametrize("index", [3, 101, -1, "x", 1.5])
def test_an_opening_the_character_does_not_have_is_refused(api, mira, player, index):
    before = db_snapshot()
    error = assert_error(start(api, mira, player, greeting_index=index), 400, "validation_error")
    assert "greeting_index" in {item["loc"] for item in error["details"]["errors"]}
    assert snapshot_diff(before, db_snapshot()) == []


def test_a_conversation_may_have_no_opening(api, mira, player):
    response = start(api, mira, player, greeting_index=None)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["greeting_index"] is None and body["greeting"] == ""
    assert greeting_for(Conversation.objects.get(pk=body["id"])) == ""


def test_changing_the_opening_is_checked_too(api, conversation):
    response = api.patch(
        f"/api/v1/conversations/{conversation.pk}/", {"greeting_index": 1}, format="json"
    )
    assert_error(response, 400, "validation_error")  # the character has no alternates
    conversation.character.alternate_greetings = ["Hi again."]
    conversation.character.save()
    response = api.patch(
        f"/api/v1/conversations/{conversation.pk}/", {"greeting_index": 1}, format="json"
    )
    assert response.status_code == 200 and response.json()["greeting"] == "Hi again."


def test_the_service_checks_the_opening_for_every_door(tenant, mira, player):
    with pytest.raises(FieldErrors) as caught:
        conversations.start_conversation(tenant, character=mira, player=player, greeting_index=3)
    assert "greeting_index" in caught.value.by_field


def test_a_removed_greeting_falls_back_to_the_first_message(tenant, mira, player):
    conversation = conversations.start_conversation(
        tenant, character=mira, player=player, greeting_index=2
    )
    mira.alternate_greetings = GREETINGS[:1]
    mira.save()
    conversation.refresh_from_db()
    assert greeting_for(conversation) == "Welcome."


def test_greeting_choices_list_every_opening(mira):
    assert greeting_choices(mira) == [(0, "Welcome."), (1, GREETINGS[0]), (2, GREETINGS[1])]


def test_the_console_offers_the_characters_openings(operator_client, mira, tenant):
    page = operator_client.get(f"/console/conversations/new/?character={mira.pk}").content.decode()
    assert 'name="greeting_index"' in page
    assert "Alternate greeting 2: You again?" in page
    assert 'hx-get="/console/conversations/new/"' in page and 'id="conversation-fields"' in page
    response = operator_client.post(
        "/console/conversations/new/", {"character": str(mira.pk), "greeting_index": "2"}
    )
    assert response.status_code == 302
    conversation = Conversation.objects.get(tenant=tenant, character=mira)
    assert conversation.greeting_index == 2
    detail = operator_client.get(response["Location"]).content.decode()
    assert "Alternate greeting 2" in detail and "You again?" in detail


def test_the_console_refuses_an_opening_the_character_lacks(operator_client, character, tenant):
    response = operator_client.post(
        "/console/conversations/new/", {"character": str(character.pk), "greeting_index": "1"}
    )
    assert response.status_code == 200
    assert not Conversation.objects.filter(tenant=tenant).exists()
