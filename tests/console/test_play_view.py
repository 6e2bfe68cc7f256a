"""The play page as the server renders it: what each message carries for its controls, the
transcript alone (``?part=transcript``, which the page reads again after some events), the
running turn, and who gets the write controls."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from memory import alternatives
from memory import services as message_store
from roleplay.conversations.play_selectors import running_turn, transcript
from roleplay.models import Turn, TurnKind, TurnStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def exchange(conversation):
    save = message_store.save_message
    question = save(conversation.tenant, conversation.session_id, role="user", content="Hi?")
    answer = save(conversation.tenant, conversation.session_id, role="assistant", content="One.")
    return question, answer


def _item(page: str, message) -> str:
    match = re.search(rf'<li [^>]*data-id="{message.id}"[^>]*>', page)
    assert match, f"message {message.id} is not on the page"
    return match.group(0)


def test_each_message_carries_its_alternatives_selection_and_edited_flag(
    operator_client, conversation, exchange
):
    question, answer = exchange
    tenant = conversation.tenant
    alternatives.add_alternative(tenant, answer.id, content="Two.", status="complete")
    alternatives.add_alternative(tenant, answer.id, content="Three.", status="complete")
    alternatives.select_alternative(tenant, answer.id, 1)
    alternatives.edit_message(tenant, question.id, "Hello?", editor="user:op")

    page = operator_client.get(f"/play/{conversation.id}/").content.decode()

    reply = _item(page, answer)
    assert 'data-alternatives="3"' in reply and 'data-selected="1"' in reply
    assert "data-edited" not in reply
    asked = _item(page, question)
    assert 'data-alternatives="0"' in asked and 'data-edited="1"' in asked
    assert ">Two.</div>" in page and ">Hello?</div>" in page


def test_the_transcript_part_is_the_transcript_alone(operator_client, conversation, exchange):
    page = operator_client.get(f"/play/{conversation.id}/?part=transcript").content.decode()

    assert '<ol class="transcript" id="transcript"' in page
    assert 'id="composer"' not in page and "<html" not in page
    assert ">Welcome.</div>" in page  # the opening line stays first
    assert all(f'data-id="{m.id}"' in page for m in exchange)


def test_foreign_conversation_is_404_for_the_part_too(operator_client, foreign):
    response = operator_client.get(f"/play/{foreign['conversation'].id}/?part=transcript")
    assert response.status_code == 404


def test_a_running_turn_is_named_on_the_transcript(operator_client, conversation, exchange):
    turn = Turn.objects.create(
        tenant=conversation.tenant,
        conversation=conversation,
        client_message_id="r-1",
        kind=TurnKind.REGENERATE,
        assistant_message_id=exchange[1].id,
        lease_expires_at=timezone.now() + timedelta(seconds=30),
    )
    page = operator_client.get(f"/play/{conversation.id}/?part=transcript").content.decode()
    assert f'data-running-turn="{turn.id}"' in page
    assert 'data-running-kind="regenerate"' in page
    assert f'data-running-reply="{exchange[1].id}"' in page

    # A turn whose lease ran out was abandoned by a dead process: the page is not busy.
    Turn.objects.filter(pk=turn.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert running_turn(conversation) is None
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.COMPLETE, lease_expires_at=None)
    page = operator_client.get(f"/play/{conversation.id}/?part=transcript").content.decode()
    assert "data-running-turn" not in page


def test_write_controls_only_for_roles_that_may_write(
    operator_client, viewer_client, conversation, exchange
):
    writer = operator_client.get(f"/play/{conversation.id}/").content.decode()
    watcher = viewer_client.get(f"/play/{conversation.id}/").content.decode()

    for control in ("swipe-next", "msg-continue", "msg-edit", "msg-delete", "editor-template"):
        assert control in writer
        assert control not in watcher
    assert "swipe-count" in watcher  # the counter is information, not a control


def test_transcript_reads_are_three_queries_whatever_the_length(
    conversation, django_assert_num_queries
):
    """The session's lineage (a branch shares its parent's messages: ``memory.forks``),
    its messages, and their alternatives' counts."""
    for i in range(12):
        message_store.save_message(
            conversation.tenant, conversation.session_id, role="user", content=f"m{i}"
        )
    conversation.tenant  # noqa: B018 - loaded by the view's select_related
    with django_assert_num_queries(3):
        rows = transcript(conversation)
    assert [m.content for m in rows] == [f"m{i}" for i in range(12)]
    assert {m.alternative_count for m in rows} == {0}
