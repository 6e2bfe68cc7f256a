"""The selection playground: results with a reason for every entry, and clear errors."""

from __future__ import annotations

import re

import pytest

from tests.worldbook.console.conftest import BACKGROUND, GATE

pytestmark = pytest.mark.django_db

URL = "/console/worldbooks/playground/"


def _form(book, **overrides):
    data = {
        "books": [str(book.pk)],
        "query": "I hand the copper key to the guard.",
        "history": "user: hello\nassistant: Halt! Who goes there?",
        "state": "",
        "template_vars": '{"char": "Guard", "user": "Ann"}',
        "audience": "actor",
        "strategy": "rules",
        "scan_depth": "4",
        "token_budget": "1500",
        "constant_budget_ratio": "0.35",
        "max_entries": "50",
        "max_recursion_rounds": "2",
        "seed": "turn-1",
        "placement_capabilities": ["before_character", "after_character", "at_depth"],
        "outlets": "",
        "hybrid_threshold": "0.3",
    }
    data.update(overrides)
    return data


def _decision(html: str, entry_id: str) -> str:
    match = re.search(rf'<tr class="wb-decision" data-entry="{entry_id}" data-reason="(\w+)"', html)
    assert match, entry_id
    return match.group(1)


def test_result_has_blocks_decisions_and_tokens(operator, tenant, book, make_book):
    off = make_book(
        tenant,
        [
            {"id": "lamp", "content": "Gas lamps.", "keys": ["lamp"]},
            {"id": "off", "content": "Disabled.", "keys": ["key"], "enabled": False},
        ],
        name="Extra",
    )
    response = operator.post(URL, _form(book, books=[str(book.pk), str(off.pk)]))
    assert response.status_code == 200
    html = response.content.decode()
    assert _decision(html, "gate") == "keyword"
    assert _decision(html, "background") == "constant"
    assert _decision(html, "lamp") == "not_triggered"
    assert _decision(html, "off") == "disabled"
    blocks = html.split('id="wb-blocks"')[1].split("</section>")[0]
    assert f"{book.pk}:1:gate" in blocks and "The copper key opens only the side door" in blocks
    tokens = re.search(r'id="wb-tokens">(\d+) / 1500<', html)
    assert tokens and 0 < int(tokens.group(1)) <= 1500
    assert re.search(r'id="wb-fingerprint">[0-9a-f]{16,}<', html)
    assert "keyword × 1" in html and "cl100k_base" in html
    gate_row = html.split('data-entry="gate"')[1].split("</tr>")[0]
    assert "{&quot;keys&quot;: [&quot;copper key&quot;" in gate_row


def test_htmx_gets_the_fragment_only(operator, book):
    response = operator.post(URL, _form(book), HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="wb-playground"') and "<html" not in html
    assert 'data-reason="keyword"' in html


def test_hybrid_without_an_index_is_degraded(operator, book):
    html = operator.post(URL, _form(book, strategy="hybrid")).content.decode()
    assert 'id="wb-degraded"' in html and "vector_index_not_ready" in html


def test_form_and_request_errors_are_next_to_the_fields(operator, book):
    response = operator.post(URL, _form(book, state="{broken", scan_depth="500"))
    assert response.status_code == 422
    html = response.content.decode()
    assert "invalid JSON" in html
    response = operator.post(URL, _form(book, scan_depth="500"))
    assert response.status_code == 422
    html = response.content.decode()
    scan = html.split('for="id_scan_depth"')[1].split("</div>")[0]
    assert "less than or equal to 100" in scan
    htmx = operator.post(URL, _form(book, scan_depth="500"), HTTP_HX_REQUEST="true")
    assert htmx.status_code == 200 and "less than or equal to 100" in htmx.content.decode()


def test_selection_errors_show_their_code(operator, tenant, make_book):
    big = make_book(tenant, [{"id": "law", "content": "word " * 400, "required": True}], name="Law")
    response = operator.post(URL, _form(big, token_budget="10"))
    html = response.content.decode()
    assert response.status_code == 422
    assert 'data-error-code="required_over_budget"' in html


def test_history_state_and_template_vars_reach_the_engine(operator, tenant, make_book):
    book = make_book(
        tenant,
        [
            {
                "id": "night",
                "content": "{{char}} lights the lamps for {{user}}.",
                "keys": ["lantern"],
                "conditions": [{"path": "time", "op": "eq", "value": "night"}],
            },
            BACKGROUND,
            GATE,
        ],
    )
    data = _form(book, query="hello", history="user: I lift the lantern.")
    day = operator.post(URL, {**data, "state": '{"time": "day"}'}).content.decode()
    assert _decision(day, "night") == "condition_failed"
    night = operator.post(URL, {**data, "state": '{"time": "night"}'}).content.decode()
    assert _decision(night, "night") == "keyword"
    assert "Guard lights the lamps for Ann." in night
    no_history = operator.post(URL, {**data, "history": "", "state": '{"time": "night"}'})
    assert _decision(no_history.content.decode(), "night") == "not_triggered"


def test_viewer_may_run_but_not_write_timed_state(viewer, book):
    assert viewer.post(URL, _form(book)).status_code == 200
    response = viewer.post(URL, _form(book, conversation_id="c-1", message_index="3"))
    assert response.status_code == 403


def test_operator_with_a_conversation_keeps_timed_state(operator, tenant, make_book):
    from worldbook.models import TimedEffectState

    sticky = make_book(tenant, [{**GATE, "sticky": 2}], name="Sticky")
    response = operator.post(URL, _form(sticky, conversation_id="c-1", message_index="3"))
    assert response.status_code == 200
    assert TimedEffectState.objects.filter(tenant=tenant, conversation_id="c-1").exists()


def test_a_foreign_book_is_not_a_choice(operator, foreign_book):
    response = operator.post(URL, _form(foreign_book))
    assert response.status_code == 422 and "Select a valid choice" in response.content.decode()
