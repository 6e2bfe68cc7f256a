"""The model calls page: the tenant's calls only, newest first, filtered by purpose, outcome
and ids; a malformed filter is a 400 page; the consolidation runs and Agent V2 runs link
to their calls there."""

from __future__ import annotations

import uuid

import pytest

from memory.models import ConsolidationRun
from roleplay.models import ModelCall

pytestmark = pytest.mark.django_db

PAGE = "/console/models/calls/"


def _call(tenant, purpose="chat", outcome="ok", **fields):
    return ModelCall.objects.create(
        tenant=tenant, purpose=purpose, model="scripted-model", outcome=outcome,
        input_tokens=12, output_tokens=30, total_tokens=42, latency_ms=81.5, **fields,
    )  # fmt: skip


def _rows(response) -> set[str]:
    html = response.content.decode()
    return {part.split('"', 1)[0] for part in html.split('id="call-')[1:]}


def test_the_tenants_calls_newest_first_and_nobody_elses(viewer_client, tenant, other_tenant):
    older = _call(tenant, purpose="chat")
    newer = _call(tenant, purpose="memory_consolidate", outcome="error", error_code="timeout")
    foreign = _call(other_tenant, purpose="chat")
    response = viewer_client.get(PAGE)
    assert response.status_code == 200
    html = response.content.decode()
    assert _rows(response) == {str(older.pk), str(newer.pk)}
    assert f'id="call-{foreign.pk}"' not in html
    assert html.index(f'id="call-{newer.pk}"') < html.index(f'id="call-{older.pk}"')
    assert "timeout" in html and "81.5" in html


def test_filters_by_purpose_outcome_and_ids(viewer_client, tenant, other_tenant):
    chat = _call(tenant, purpose="chat")
    failed = _call(tenant, purpose="memory_consolidate", outcome="error")
    foreign = _call(other_tenant)
    assert _rows(viewer_client.get(PAGE, {"purpose": "chat"})) == {str(chat.pk)}
    assert _rows(viewer_client.get(PAGE, {"outcome": "error"})) == {str(failed.pk)}
    picked = viewer_client.get(PAGE, {"ids": f"{failed.pk}, {foreign.pk}"})
    assert _rows(picked) == {str(failed.pk)}  # another tenant's id finds nothing


@pytest.mark.parametrize("ids", ["1,x", "-3", "1;DROP", ",".join(["1"] * 101), "9" * 40])
def test_a_malformed_ids_filter_is_a_400_page(viewer_client, tenant, ids):
    _call(tenant)
    response = viewer_client.get(PAGE, {"ids": ids})
    assert response.status_code == 400
    assert 'id="calls-problem"' in response.content.decode()


def test_a_consolidation_run_links_to_its_calls(viewer_client, tenant, player):
    call = _call(tenant, purpose="memory_consolidate")
    ConsolidationRun.objects.create(
        tenant=tenant, player=player, session_id="s-1", conversation_id=uuid.uuid4(),
        status="done", model_call_ids=[str(call.pk)],
    )  # fmt: skip
    html = viewer_client.get("/console/memory/jobs/").content.decode()
    assert f'href="{PAGE}?ids={call.pk}"' in html


def test_the_models_page_links_here(viewer_client):
    html = viewer_client.get("/console/models/").content.decode()
    assert f'href="{PAGE}"' in html


def test_an_anonymous_visitor_is_sent_to_log_in(client):
    response = client.get(PAGE)
    assert response.status_code == 302 and "/login" in response["Location"]
