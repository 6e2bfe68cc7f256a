"""Compact's trigger counts the Actor's prompt with the Actor's model config's tokenizer:
the same history passes the trigger in cl100k tokens and stays under it in a tokenizer that
counts it as fewer, and the trace names the tokenizer."""

from __future__ import annotations

import uuid

import pytest

from memory import services as message_store
from roleplay.compact.plugin import _due
from roleplay.llm.configs.services import update_model_config
from roleplay.models import Turn, TurnKind
from roleplay.turns.context import load_context
from tests.llm.tokenizer_files import word_level_json

pytestmark = pytest.mark.django_db

LINE = "灯塔 " * 80  # 80 words, several times that in cl100k tokens


def _context(conversation):
    turn = Turn(
        id=uuid.uuid4(),
        tenant_id=conversation.tenant_id,
        conversation=conversation,
        kind=TurnKind.CHAT,
        client_message_id="counted",
        user_message_id=uuid.uuid4(),
    )
    return load_context(turn, "灯塔?", record=False)


def test_the_trigger_fires_under_one_tokenizer_and_not_the_other(compact_conversation, tenant):
    for role in ("user", "assistant", "user", "assistant"):
        message_store.save_message(tenant, compact_conversation.session_id, role=role, content=LINE)

    ctx = _context(compact_conversation)
    assert _due(ctx) is True
    trace = ctx.trace["compact"]
    assert trace["tokenizer"] == "cl100k_base" and trace["tokens_before"] > trace["trigger"]

    update_model_config(compact_conversation.model_config, tokenizer_json=word_level_json())
    ctx = _context(compact_conversation)
    assert ctx.tokens.name.startswith("hf:")
    assert _due(ctx) is False
    trace = ctx.trace["compact"]
    assert trace["tokenizer"] == ctx.tokens.name and trace["outcome"] == "not_due"
    assert trace["tokens_before"] <= trace["trigger"]
    assert ctx.trace["read"]["tokenizer"] == ctx.tokens.name
