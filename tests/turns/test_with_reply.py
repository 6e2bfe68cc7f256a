"""The hooks' records that go with a turn's reply (the plug-ins' ``beside`` hooks): written in
the transaction that commits the reply, each in a savepoint of its own, so one that fails
(even in the database) is logged and neither stops the others nor costs the reply."""

from __future__ import annotations

import logging

import pytest
from django.db import connection

from memory.models import Message
from roleplay.models import Turn, TurnStatus
from roleplay.turns.records import begin_turn, finish_turn

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_failing_record_neither_stops_the_others_nor_costs_the_reply(conversation, caplog):
    turn = begin_turn(conversation, "w1", "Hello").turn
    written = []

    def failing() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 / 0")  # aborts what it runs in

    def recording() -> None:
        written.append(Turn.objects.filter(pk=turn.pk).values_list("status", flat=True).get())

    with caplog.at_level(logging.ERROR, logger="roleplay.turns.records"):
        finish_turn(
            turn, content="Hi there.", status=TurnStatus.COMPLETE, also=[failing, recording]
        )
    assert written == [TurnStatus.COMPLETE]  # in the same transaction, after the close
    assert Turn.objects.get(pk=turn.pk).status == TurnStatus.COMPLETE
    assert Message.objects.get(pk=turn.assistant_message_id).content == "Hi there."
    assert f"a record written with the reply of turn {turn.id} failed" in caplog.text
