"""Beliefs (seed 003): built in the background from a player's facts and episodes by the
scripted model, each with its supporters; a belief citing an unknown entry or standing on
one refuses the answer; a repeat gains supporters instead of a row; a person's change
meanwhile makes the build stale; deleting a supporter demotes the belief to a candidate;
the sweep sends builds through a real worker."""

from __future__ import annotations

import json
import time

import pytest

from memory.configs.services import put_settings
from memory.engine import beliefs as engine
from memory.engine.consolidation import Rejected
from memory.entries.services import add_entry, delete_entry, forget_entries
from memory.models import BeliefBuild, MemoryEntry
from roleplay.llm.scripted_server import Reply
from roleplay.memory_plugin.services import beliefs

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_answer_is_checked_whole():
    known = {"a": "x", "b": "y", "c": "z"}
    assert engine.check([{"content": " Ann  fears water. ", "supporters": ["a", "b", "a"]}],
                        known) == [("Ann fears water.", ("a", "b"))]  # fmt: skip
    for bad, code in [
        ([{"content": "x", "supporters": ["a", "zz"]}], "unknown_supporter"),
        ([{"content": "x", "supporters": ["a", "a"]}], "too_few_supporters"),
        ([{"content": "", "supporters": ["a", "b"]}], "invalid_belief"),
        ([{"content": "x", "supporters": "a"}], "invalid_belief"),
        ([{"content": "x", "supporters": ["a", "b"]}] * 6, "too_many_beliefs"),
    ]:
        with pytest.raises(Rejected) as caught:
            engine.check(bad, known)
        assert caught.value.code == code


def _facts(tenant, player):
    return [
        add_entry(tenant, player, kind="fact", scope="shared", content=text)
        for text in ("Ann cannot swim.", "Ann refused the boat trip.", "Ann likes tea.")
    ]


def _answer(*beliefs_):
    return Reply(content=json.dumps({"beliefs": list(beliefs_)}))


def test_off_means_no_model_call(tenant, player, model_config, llm):
    _facts(tenant, player)
    assert beliefs.build(player.pk) == "disabled" and llm.requests == []


def test_a_belief_is_written_with_its_supporters_once(tenant, player, model_config, llm):
    put_settings(tenant, {"beliefs": True})
    swim, boat, _tea = _facts(tenant, player)
    belief = {"content": "Ann is afraid of deep water.", "supporters": [str(swim.pk), str(boat.pk)]}
    llm.default = _answer(belief)
    assert beliefs.build(player.pk) == "done"
    entry = MemoryEntry.objects.get(kind="belief")
    assert (entry.status, entry.origin, entry.scope) == ("active", "inference", "shared")
    assert {str(s) for s in entry.supports.values_list("supporter_id", flat=True)} == {
        str(swim.pk), str(boat.pk)
    }  # fmt: skip
    sent = llm.requests[-1]["messages"][1]["content"]
    assert "Ann cannot swim." in sent and str(swim.pk) in sent
    assert beliefs.build(player.pk) == "done"
    assert MemoryEntry.objects.filter(kind="belief").count() == 1
    assert BeliefBuild.objects.get(player=player).added == 0


def test_a_refused_or_failed_answer_writes_nothing(tenant, player, model_config, llm):
    put_settings(tenant, {"beliefs": True})
    swim, *_ = _facts(tenant, player)
    llm.default = _answer({"content": "x", "supporters": [str(swim.pk), "made-up"]})
    assert beliefs.build(player.pk) == "failed"
    assert BeliefBuild.objects.get(player=player).error_code == "unknown_supporter"
    llm.default = Reply(status=500)
    assert beliefs.build(player.pk) == "failed"
    assert not MemoryEntry.objects.filter(kind="belief").exists()


def test_a_change_by_a_person_meanwhile_makes_it_stale(tenant, player, model_config, llm):
    put_settings(tenant, {"beliefs": True})
    swim, boat, tea = _facts(tenant, player)

    def answer(_request):
        delete_entry(tenant, MemoryEntry.objects.get(pk=tea.pk), tea.version)
        return _answer({"content": "Ann fears water.", "supporters": [str(swim.pk), str(boat.pk)]})

    llm.default = Reply.from_callable(answer)
    assert beliefs.build(player.pk) == "stale"
    assert not MemoryEntry.objects.filter(kind="belief").exists()


def test_deleting_a_supporter_demotes_the_belief(tenant, player, model_config, llm):
    put_settings(tenant, {"beliefs": True})
    swim, boat, _tea = _facts(tenant, player)
    llm.default = _answer(
        {"content": "Ann fears water.", "supporters": [str(swim.pk), str(boat.pk)]}
    )
    beliefs.build(player.pk)
    belief = MemoryEntry.objects.get(kind="belief")
    delete_entry(tenant, swim, swim.version)
    belief.refresh_from_db()
    assert belief.status == "candidate" and belief.version == 2
    assert list(belief.supports.values_list("supporter_id", flat=True)) == [boat.pk]
    MemoryEntry.objects.filter(pk=belief.pk).update(status="active")
    forget_entries(tenant, player, [boat.pk])
    belief.refresh_from_db()
    assert belief.status == "candidate"


def test_the_sweep_builds_through_the_worker(celery_worker, tenant, player, model_config, llm):
    put_settings(tenant, {"beliefs": True})
    swim, boat, _tea = _facts(tenant, player)
    llm.default = _answer(
        {"content": "Ann fears water.", "supporters": [str(swim.pk), str(boat.pk)]}
    )
    assert beliefs.sweep() == 1
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not MemoryEntry.objects.filter(kind="belief"):
        time.sleep(0.2)
    assert MemoryEntry.objects.filter(kind="belief").count() == 1
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and BeliefBuild.objects.get(player=player).status != "done":
        time.sleep(0.1)
    assert beliefs.sweep() == 0  # nothing changed since
