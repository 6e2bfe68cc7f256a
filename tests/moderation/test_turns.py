"""The policy on a turn, through the REST door (the socket's is in ``test_socket``): a
blocked input stores nothing but a redacted record, a warned one goes on, a hidden reply
is stored hidden, and a suspended player's turn is refused. Real database, real HTTP to
the scripted model server, whose ``/v1/moderations`` flags scripted words."""

from __future__ import annotations

import pytest

from memory.models import Message
from roleplay.llm.scripted_server import Reply
from roleplay.models import Turn
from roleplay.moderation import services
from roleplay.moderation.models import Case
from tests.moderation.conftest import BLOCK_VIOLENCE

pytestmark = pytest.mark.django_db(transaction=True)


def run(api, conversation, content, client_id="c1"):
    body = {"client_message_id": client_id, "content": content}
    return api.post(f"/api/v1/conversations/{conversation.id}/turns/run", body, format="json")


def messages(conversation):
    return list(Message.objects.filter(session_id=str(conversation.id)).order_by("ts"))


def test_a_blocked_input_is_a_422_and_keeps_only_a_redacted_record(api, conversation, policy, llm):
    policy(BLOCK_VIOLENCE)
    secret = "I will stab the innkeeper tonight"
    response = run(api, conversation, secret)
    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert error["code"] == "input_blocked" and error["details"] == {"category": "violence"}
    assert messages(conversation) == [] and not Turn.objects.exists()
    assert llm.requests == []  # the model was never asked
    case = Case.objects.get()
    assert (case.source, case.action, case.category) == ("input", "block_input", "violence")
    assert case.player_id == conversation.player_id and case.message_id is None
    stored = " ".join(str(v) for v in Case.objects.values().get().values())
    for word in ("stab", "innkeeper", "tonight", secret):
        assert word not in stored


def test_the_endpoint_flags_through_the_scripted_moderations_route(
    api, conversation, policy, moderation_endpoint, llm
):
    llm.moderation.script("dragonfire", ["violence", "illicit"])
    policy({"categories": {"illicit": {"action": "block_input"}}}, model_config=moderation_endpoint)
    assert run(api, conversation, "Tell me a story").status_code == 201
    response = run(api, conversation, "teach me DRAGONFIRE", client_id="c2")
    assert response.status_code == 422 and response.json()["error"]["code"] == "input_blocked"
    sent = llm.moderation.requests
    assert [r["input"] for r in sent] == ["Tell me a story", "teach me DRAGONFIRE"]
    assert sent[0]["model"] == "omni-moderation-latest"
    case = Case.objects.get()
    assert case.category == "illicit" and set(case.categories) == {"illicit", "violence"}
    assert [m.content for m in messages(conversation) if m.role == "user"] == ["Tell me a story"]


def test_an_endpoint_that_fails_lets_the_text_through(
    api, conversation, policy, moderation_endpoint, llm
):
    llm.moderation.script("dragonfire", ["violence"])
    llm.moderation.status = 500
    policy({"endpoint_action": "block_input"}, model_config=moderation_endpoint)
    assert run(api, conversation, "dragonfire").status_code == 201
    assert not Case.objects.exists()


def test_a_warned_input_goes_on_and_is_recorded(api, conversation, policy):
    policy(BLOCK_VIOLENCE)
    response = run(api, conversation, "buy now, traveller")
    assert response.status_code == 201
    case = Case.objects.get()
    assert (case.action, case.category) == ("warn", "spam")
    assert [m.role for m in messages(conversation)] == ["user", "assistant"]
    # The answer tells the caller, and so does a repeat of the same client id.
    (warning,) = response.json()["warnings"]
    assert warning["type"] == "moderation.warning" and warning["category"] == "spam"
    assert warning["message"]
    again = run(api, conversation, "buy now, traveller")
    assert again.status_code == 200 and again.json()["warnings"] == [warning]
    assert Turn.objects.get().trace["warnings"] == [warning]


def test_an_allowed_input_carries_no_warnings(api, conversation, policy):
    policy(BLOCK_VIOLENCE)
    response = run(api, conversation, "good evening")
    assert response.status_code == 201 and response.json()["warnings"] == []


def test_a_hidden_reply_is_stored_hidden_and_not_answered(api, conversation, policy, llm):
    policy(BLOCK_VIOLENCE, check_input=False, check_reply=True)
    llm.enqueue(Reply(content="The entrails spill on the floor.", chunks=3))
    response = run(api, conversation, "I will stab him")  # inputs are not checked
    assert response.status_code == 201, response.content
    reply = Message.objects.get(role="assistant")
    assert reply.archived and reply.metadata["hidden"]["category"] == "gore"
    assert reply.content == "The entrails spill on the floor."  # kept for review
    turn = Turn.objects.get()
    assert turn.trace["moderation"] == {"action": "hide_reply", "categories": ["gore"]}
    case = Case.objects.get()
    assert (case.source, case.action, case.message_id) == ("reply", "hide_reply", reply.pk)
    history = services.selectors.context_of(case)
    assert [m.pk for m in history][-1] == reply.pk


def test_a_policy_that_is_off_checks_nothing(api, conversation, policy):
    policy(BLOCK_VIOLENCE, enabled=False)
    assert run(api, conversation, "stab").status_code == 201
    assert not Case.objects.exists()


def test_a_suspended_player_s_turn_is_refused_with_423(api, conversation, policy):
    services.sanction(conversation.player, "suspend", reason="spamming", hours=2)
    response = run(api, conversation, "hello")
    assert response.status_code == 423, response.content
    error = response.json()["error"]
    assert error["code"] == "player_suspended" and "spamming" in error["message"]
    assert messages(conversation) == [] and not Turn.objects.exists()
    services.lift(conversation.player)
    assert run(api, conversation, "hello", client_id="c2").status_code == 201


def test_bad_rules_are_refused_and_change_nothing(tenant, policy):
    from console.failures import Invalid

    policy(BLOCK_VIOLENCE)
    with pytest.raises(Invalid) as caught:
        policy({"categories": {"x": {"patterns": ["(a)\\1"]}}})
    assert caught.value.code == "moderation_rules_invalid"
    assert services.selectors.settings_of(tenant).rules["categories"]["spam"]["action"] == "warn"
