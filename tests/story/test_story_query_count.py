"""Conversations without Story or Compact keep their query count: the two capabilities'
context hooks read nothing for a scenario that does not turn them on."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from roleplay.models import Scenario
from roleplay.turns import PLUGINS, begin_turn, load_context

pytestmark = pytest.mark.django_db


def _queries(conversation, client_id: str) -> list[str]:
    start = begin_turn(conversation, client_id, "Hello there.")
    with CaptureQueriesContext(connection) as captured:
        load_context(start.turn, "Hello there.")
    start.turn.delete()
    return [q["sql"] for q in captured.captured_queries]


@pytest.mark.parametrize("with_scenario", [False, True])
def test_a_plain_conversation_reads_no_more_with_story_and_compact_built(
    conversation, tenant, model_config, with_scenario
):
    if with_scenario:  # a scenario with neither capability on
        conversation.scenario = Scenario.objects.create(
            tenant=tenant, name="plain", model_config=model_config
        )
        conversation.save(update_fields=["scenario"])
    with_hooks = _queries(conversation, "q1")
    with PLUGINS.using(p for p in PLUGINS if p.name not in ("story", "compact")):
        without = _queries(conversation, "q2")
    assert len(with_hooks) == len(without)
    assert not any("story_story" in sql or "compactcheckpoint" in sql for sql in with_hooks)
