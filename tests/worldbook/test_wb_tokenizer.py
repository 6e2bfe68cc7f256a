"""The turn's worldbook budget counts with the model config's tokenizer: an entry that
fits the budget in one tokenizer's tokens and not in another's is selected under the first
only, and the trace names the tokenizer that counted."""

from __future__ import annotations

import pytest

from console import tokenizers
from console.tokens import CL100K
from roleplay.worldbook_plugin.context import apply
from tests.llm.tokenizer_files import word_level_json
from tests.worldbook.test_wb_turn_hook import _book, _context, _conversation
from worldbook import services

pytestmark = pytest.mark.django_db

BUDGET = 2400  # the scenario's default worldbook budget
CONSTANT_CAP = 840  # of which constant entries may take 35%
LORE = "灯塔 " * 600  # 600 words; several times that in cl100k tokens


def _selected(tenant, character, counter) -> tuple[list[str], dict]:
    ctx = _context()
    ctx.tokens = counter
    apply(ctx, _conversation(tenant, character))
    return [block["content"] for block in ctx.blocks], ctx.trace["worldbook"]


def test_a_budget_that_fits_in_one_tokenizer_and_not_another_selects_differently(tenant, character):
    hf = tokenizers.hf(word_level_json())
    assert hf.count_tokens(LORE) + 100 < CONSTANT_CAP < CL100K.count_tokens(LORE)
    entries = [
        {"id": "fog", "content": "The fog rolls in.", "constant": True, "order": 200},
        {"id": "lore", "content": LORE, "constant": True, "order": 100},
    ]
    book = _book(tenant, entries)
    services.put_bindings(tenant, str(character.id), [{"book_id": str(book.id)}])

    under_cl100k, trace = _selected(tenant, character, CL100K)
    assert under_cl100k == ["The fog rolls in."]
    assert trace["tokenizer"] == "cl100k_base" and trace["token_count"] <= BUDGET
    assert [(d["entry_id"], d["reason"]) for d in trace["excluded"]] == [("lore", "budget_dropped")]

    under_hf, trace = _selected(tenant, character, hf)
    assert sorted(under_hf) == sorted(["The fog rolls in.", LORE])
    assert trace["tokenizer"] == hf.name
    assert hf.count_tokens(LORE) <= trace["token_count"] <= BUDGET
    # Counted again with cl100k from the same prepared revision: its cached counts are per
    # tokenizer, so nothing of the hf counts leaks into it.
    assert _selected(tenant, character, CL100K)[0] == under_cl100k
