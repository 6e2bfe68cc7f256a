"""``console.rows.insert`` writes what ``save(force_insert=True)`` writes (DESIGN: a fast
path is pinned to its slow path by a test), and leaves a duplicate alone: the planning run a
turn records beside its reply (``roleplay.agentic.services.planning.start``)."""

from __future__ import annotations

import uuid

import pytest
from django.forms.models import model_to_dict

from console import rows
from roleplay.models import ModelConfig, PlanningRun, Turn
from roleplay.scenarios.services import create_scenario

pytestmark = pytest.mark.django_db


def _run(tenant, conversation, scenario, turn, **fields):
    return PlanningRun(
        tenant=tenant, turn=turn, conversation=conversation, scenario=scenario,
        assistant_message_id=uuid.uuid4(), source_turn=3,
        snapshot={"inputs": {"query": "Hi \u2603", "entries": [{"a": [1, None]}]}, "head": 2},
        **fields,
    )  # fmt: skip


def _turn(tenant, conversation, name):
    return Turn.objects.create(
        tenant=tenant, conversation=conversation, client_message_id=name,
        user_message_id=uuid.uuid4(), assistant_message_id=uuid.uuid4(), status="complete",
    )  # fmt: skip


def _stored(pk):
    row = PlanningRun.objects.get(pk=pk)
    return {f.attname: getattr(row, f.attname) for f in PlanningRun._meta.concrete_fields}


def test_a_raw_insert_stores_what_the_orm_stores(tenant, conversation):
    config = ModelConfig.objects.create(tenant=tenant, name="a", provider="llama_cpp", model="m")
    scenario = create_scenario(tenant, name="S", model_config=config)
    fast = _run(tenant, conversation, scenario, _turn(tenant, conversation, "t1"))
    slow = _run(tenant, conversation, scenario, _turn(tenant, conversation, "t2"))
    assert rows.insert(fast, unique="turn_id") is True
    slow.save(force_insert=True)
    assert not fast._state.adding and fast.created_at is not None
    skip = {"id", "turn_id", "assistant_message_id", "created_at"}
    fast_row, slow_row = _stored(fast.pk), _stored(slow.pk)
    assert {k: v for k, v in fast_row.items() if k not in skip} == {
        k: v for k, v in slow_row.items() if k not in skip
    }
    assert fast_row["created_at"] == fast.created_at
    assert model_to_dict(PlanningRun.objects.get(pk=fast.pk)) == model_to_dict(fast)


def test_a_duplicate_is_left_alone(tenant, conversation):
    config = ModelConfig.objects.create(tenant=tenant, name="a", provider="llama_cpp", model="m")
    scenario = create_scenario(tenant, name="S", model_config=config)
    turn = _turn(tenant, conversation, "t1")
    first = _run(tenant, conversation, scenario, turn)
    assert rows.insert(first, unique="turn_id")
    again = _run(tenant, conversation, scenario, turn, outcome="other")
    assert rows.insert(again, unique="turn_id") is False and again._state.adding
    assert list(PlanningRun.objects.values_list("pk", "outcome")) == [(first.pk, "")]
