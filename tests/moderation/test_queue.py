"""Reports from the player app, the console's queue with its actions (each audited), the
operators' REST door, and a suspended player's /app/ pages."""

from __future__ import annotations

import pytest
from django.test import Client

from console.models import AuditEvent
from memory import services as message_store
from roleplay.models import Character, Conversation
from roleplay.moderation import services
from roleplay.moderation.models import Case, Sanction

pytestmark = pytest.mark.django_db


@pytest.fixture
def chat(player_client, character):
    """The signed-in player's conversation, with a player message and a reply."""
    player = player_client.account.player
    conversation = Conversation.objects.create(
        tenant=player.tenant, player=player, character=character
    )
    said = message_store.save_message(player.tenant, str(conversation.id), role="user",
                                      content="hello", kind="chat")  # fmt: skip
    reply = message_store.save_message(player.tenant, str(conversation.id), role="assistant",
                                       content="a rude reply", kind="chat")  # fmt: skip
    return conversation, said, reply


@pytest.fixture
def console(operator_user):
    client = Client()
    client.force_login(operator_user)
    return client


def test_a_player_reports_a_message_of_their_own_conversation(player_client, chat):
    conversation, _, reply = chat
    response = player_client.post(
        "/app/report/", {"message_id": str(reply.pk), "reason": "rude", "back": "/app/account/"}
    )
    assert response.status_code == 302 and response["Location"] == "/app/account/"
    case = Case.objects.get()
    assert (case.source, case.message_id, case.conversation_id) == (
        "report",
        reply.pk,
        conversation.pk,
    )
    assert case.reporter_id == player_client.account.player_id and case.player_id is None


def test_another_player_s_message_or_a_private_character_is_a_404(
    player_client, chat, make_account, sign_in, character
):
    _, said, _ = chat
    other = make_account("bob@example.com")
    client, _ = sign_in(other.email)
    assert (
        client.post("/app/report/", {"message_id": str(said.pk), "reason": "x"}).status_code == 404
    )
    assert (
        client.post("/app/report/", {"character_id": str(character.pk), "reason": "x"}).status_code
        == 404
    )
    assert client.post("/app/report/", {"reason": "x"}).status_code == 400
    assert client.post("/app/report/", {"message_id": "nope", "reason": "x"}).status_code == 400
    assert not Case.objects.exists()
    character.visibility = "listed"
    character.save()
    assert (
        client.post("/app/report/", {"character_id": str(character.pk), "reason": "x"}).status_code
        == 302
    )
    assert Case.objects.get().character_id == character.pk


def test_the_queue_shows_a_case_with_its_context_and_acts_on_it(console, player_client, chat):
    conversation, said, reply = chat
    case = services.report(player_client.account.player, reason="rude", message_id=reply.pk)
    page = console.get("/console/moderation/")
    assert page.status_code == 200 and str(case.pk) in page.content.decode()
    detail = console.get(f"/console/moderation/{case.pk}/").content.decode()
    assert "hello" in detail and "a rude reply" in detail and 'id="case-message"' in detail
    response = console.post(f"/console/moderation/{case.pk}/act/", {"action": "hide_message"})
    assert response.status_code == 302
    reply.refresh_from_db()
    assert reply.archived and reply.metadata["hidden"]["by"] == "operator"
    case.refresh_from_db()
    assert (case.status, case.resolution) == ("actioned", "hide_message")
    assert AuditEvent.objects.filter(action="moderation.hidden").count() == 1


def test_suspend_ban_unlist_and_dismiss_are_audited(console, player_client, chat, character):
    conversation, said, _ = chat
    player = player_client.account.player
    character.visibility = "listed"
    character.save()
    flagged = Case.objects.create(tenant=player.tenant, source="input", player=player,
                                  conversation=conversation, character=character)  # fmt: skip
    bad = console.post(
        f"/console/moderation/{flagged.pk}/act/", {"action": "suspend", "reason": "x"}
    )
    assert bad.status_code == 422 and not Sanction.objects.exists()  # hours needed
    ok = console.post(f"/console/moderation/{flagged.pk}/act/",
                      {"action": "suspend", "reason": "spam", "hours": 3})  # fmt: skip
    assert ok.status_code == 302
    sanction = Sanction.objects.get()
    assert sanction.kind == "suspend" and sanction.until is not None
    page = player_client.get("/app/account/")
    assert page.status_code == 403 and "suspended until" in page.content.decode()
    assert "spam" in page.content.decode()
    second = Case.objects.create(tenant=player.tenant, source="report", character=character)
    console.post(f"/console/moderation/{second.pk}/act/", {"action": "unlist_character"})
    assert Character.objects.get(pk=character.pk).visibility == "unlisted"
    third = Case.objects.create(tenant=player.tenant, source="report", player=player)
    console.post(f"/console/moderation/{third.pk}/act/", {"action": "dismiss"})
    assert Case.objects.get(pk=third.pk).status == "dismissed"
    console.post(f"/console/moderation/players/{player.pk}/lift/")
    assert player_client.get("/app/account/").status_code == 200
    actions = set(AuditEvent.objects.values_list("action", flat=True))
    assert {"moderation.sanction", "moderation.unlisted", "moderation.dismissed",
            "moderation.lifted"} <= actions  # fmt: skip


def test_a_viewer_cannot_open_the_queue_and_an_operator_not_the_policy(tenant, console):
    from console.services import ensure_console_user

    viewer, _ = ensure_console_user(tenant, "viewer", "pw-viewer-123", "viewer")
    client = Client()
    client.force_login(viewer)
    assert client.get("/console/moderation/").status_code == 403
    assert console.get("/console/moderation/policy/").status_code == 403


def test_an_admin_sets_the_policy_in_the_console(tenant):
    from console.services import ensure_console_user

    admin, _ = ensure_console_user(tenant, "adm", "pw-adm-123456", "admin")
    client = Client()
    client.force_login(admin)
    assert client.get("/console/moderation/policy/").status_code == 200
    bad = {"enabled": "on", "check_input": "on", "rules": '{"categories": {"x": {"action": "no"}}}'}
    assert client.post("/console/moderation/policy/", bad).status_code == 400
    good = {
        "enabled": "on",
        "check_input": "on",
        "rules": '{"categories": {"x": {"keywords": ["y"]}}}',
    }
    assert client.post("/console/moderation/policy/", good).status_code == 302
    row = services.selectors.settings_of(tenant)
    assert row.enabled and row.rules["categories"]["x"]["keywords"] == ["y"]
    assert AuditEvent.objects.filter(action="moderation.policy").exists()


def test_the_rest_door_lists_shows_and_acts(api, api_client_for, other_tenant, player, character):
    case = Case.objects.create(tenant=player.tenant, source="input", player=player,
                               category="spam", character=character)  # fmt: skip
    listed = api.get("/api/v1/moderation/cases/?status=open").json()
    assert [c["id"] for c in listed["results"]] == [str(case.pk)]
    assert api.get("/api/v1/moderation/cases/?status=bogus").status_code == 400
    assert api.get(f"/api/v1/moderation/cases/{case.pk}/").json()["context"] == []
    response = api.post(f"/api/v1/moderation/cases/{case.pk}/act",
                        {"action": "ban", "reason": "abuse"}, format="json")  # fmt: skip
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "actioned"
    assert Sanction.objects.get().kind == "ban"
    event = AuditEvent.objects.get(action="moderation.sanction")
    assert event.username.startswith("api token")
    foreign = api_client_for(other_tenant)
    assert foreign.get(f"/api/v1/moderation/cases/{case.pk}/").status_code == 404
    assert foreign.post(f"/api/v1/moderation/cases/{case.pk}/act", {"action": "dismiss"},
                        format="json").status_code == 404  # fmt: skip
    content = api_client_for(player.tenant, ["content"])
    assert content.get("/api/v1/moderation/cases/").status_code == 403


def test_visible_ratings_follow_age_confirmation_and_the_tenant(make_account, policy):
    from roleplay.accounts import services as accounts
    from roleplay.moderation.selectors import visible_ratings

    account = make_account()
    assert visible_ratings(account) == {"sfw"}
    accounts.confirm_age(account)
    account.refresh_from_db()
    assert visible_ratings(account) == {"sfw", "nsfw"}
    policy(show_nsfw=False)
    assert visible_ratings(account) == {"sfw"}
    assert visible_ratings(None) == {"sfw"}


def test_operators_set_a_character_s_content_rating(console, api, character):
    page = console.get(f"/console/characters/{character.pk}/").content.decode()
    assert 'name="content_rating"' in page and 'value="nsfw"' in page
    response = api.patch(f"/api/v1/characters/{character.pk}/", {"content_rating": "nsfw"},
                         format="json")  # fmt: skip
    assert response.status_code == 200, response.content
    assert Character.objects.get(pk=character.pk).content_rating == "nsfw"
