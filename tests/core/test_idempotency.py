"""``run_idempotent``: same key + same body replays, another body is 409, a race has one winner."""

from __future__ import annotations

import threading
import uuid
from types import SimpleNamespace

import pytest
from django.db import connections

from console.errors import ApiError
from console.idempotency import MAX_KEY_LENGTH, run_idempotent
from console.models import IdempotencyRecord, Player


def _request(tenant, key: str | None):
    headers = {"Idempotency-Key": key} if key is not None else {}
    return SimpleNamespace(tenant=tenant, headers=headers)


def _creator(tenant, status=201):
    calls = []

    def work():
        player = Player.objects.create(tenant=tenant, external_id=f"p-{uuid.uuid4().hex}")
        calls.append(player.pk)
        return {"id": player.pk, "replayed": False}, status

    return work, calls


def test_same_key_and_body_replays_the_first_response(tenant):
    work, calls = _creator(tenant)
    first = run_idempotent(_request(tenant, "k1"), "players", {"a": 1}, work)
    again = run_idempotent(_request(tenant, "k1"), "players", {"a": 1}, work)
    assert len(calls) == 1 and Player.objects.count() == 1
    assert first.status_code == again.status_code == 201
    assert first.data == {"id": calls[0], "replayed": False}
    assert again.data == {"id": calls[0], "replayed": True}


def test_body_key_order_does_not_matter(tenant):
    work, calls = _creator(tenant)
    run_idempotent(_request(tenant, "k"), "players", {"a": 1, "b": [1, 2]}, work)
    run_idempotent(_request(tenant, "k"), "players", {"b": [1, 2], "a": 1}, work)
    assert len(calls) == 1


def test_same_key_with_another_body_is_a_conflict(tenant):
    work, calls = _creator(tenant)
    run_idempotent(_request(tenant, "k1"), "players", {"a": 1}, work)
    with pytest.raises(ApiError) as caught:
        run_idempotent(_request(tenant, "k1"), "players", {"a": 2}, work)
    assert caught.value.status_code == 409 and caught.value.code == "idempotency_conflict"
    assert len(calls) == 1


def test_keys_are_per_tenant_and_per_scope(tenant, other_tenant):
    work, calls = _creator(tenant)
    run_idempotent(_request(tenant, "k"), "players", {}, work)
    run_idempotent(_request(tenant, "k"), "imports", {}, work)
    run_idempotent(_request(other_tenant, "k"), "players", {}, work)
    assert len(calls) == 3 and IdempotencyRecord.objects.count() == 3


def test_no_key_runs_every_time_and_records_nothing(tenant):
    work, calls = _creator(tenant)
    for key in (None, "", "   "):
        run_idempotent(_request(tenant, key), "players", {}, work)
    assert len(calls) == 3 and not IdempotencyRecord.objects.exists()


def test_over_long_key_is_rejected_before_any_work(tenant):
    work, calls = _creator(tenant)
    with pytest.raises(ApiError) as caught:
        run_idempotent(_request(tenant, "k" * (MAX_KEY_LENGTH + 1)), "players", {}, work)
    assert caught.value.code == "invalid_idempotency_key" and calls == []


def test_failed_work_is_not_recorded(tenant):
    failing, calls = _creator(tenant, status=422)
    assert run_idempotent(_request(tenant, "k"), "players", {}, failing).status_code == 422
    assert not IdempotencyRecord.objects.exists()
    work, _ = _creator(tenant)
    assert run_idempotent(_request(tenant, "k"), "players", {}, work).status_code == 201


def test_work_that_raises_leaves_nothing(tenant):
    def work():
        Player.objects.create(tenant=tenant, external_id="half")
        raise ApiError("boom", "failed half way")

    with pytest.raises(ApiError):
        run_idempotent(_request(tenant, "k"), "players", {}, work)
    assert not Player.objects.exists() and not IdempotencyRecord.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_two_racing_calls_have_one_winner(tenant):
    """Both calls get past the lookup and do the work; the unique record decides, and the
    loser's work is rolled back and the winner's response replayed to it."""
    both_inside = threading.Barrier(2)
    results, errors = [], []

    def work():
        both_inside.wait(timeout=20)
        player = Player.objects.create(tenant=tenant, external_id=f"p-{uuid.uuid4().hex}")
        return {"id": player.pk, "replayed": False}, 201

    def call():
        try:
            results.append(run_idempotent(_request(tenant, "race"), "players", {"x": 1}, work))
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=call) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert Player.objects.count() == 1
    ids = {response.data["id"] for response in results}
    assert ids == {Player.objects.get().pk}
    assert sorted(response.data["replayed"] for response in results) == [False, True]
