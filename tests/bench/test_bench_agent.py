"""``bench_agent`` and ``bench_turns --agentic`` on tiny runs: the JSON shape, every planning
run ``updated`` with one revision a turn, no delta lost, the bench tenant gone afterwards.

Both commands start their own scripted model server (and ``bench_turns`` daphne children)
on the test database, so the tests need committed rows (``transaction=True``). No timing is
asserted.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from console.models import Tenant
from roleplay.agentic.engine import state
from roleplay.bench.agentic import ROLE_MODELS, route, state_text
from roleplay.bench.stats import agentic_comparison
from roleplay.bench.workload import reply_text

SUMMARY_KEYS = {"p50", "p95", "p99", "max"}


def _run(*args: str) -> dict:
    out = io.StringIO()
    call_command(*args, "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.django_db(transaction=True)
def test_bench_agent_small_run_updates_every_turn():
    data = _run("bench_agent", "--turns", "3", "--warmup", "1")

    assert (data["turns"], data["warmup_turns"]) == (3, 1)
    for key in ("overhead_ms", "model_ms", "task_ms", "total_ms", "execute_ms"):
        assert set(data[key]) == SUMMARY_KEYS
        assert data[key]["p50"] is not None, key
    assert set(data["stages_ms"]) == {"phase1_ms", "specialists_ms", "phase2_ms", "director_ms"}
    assert data["outcomes"] == {"updated": 3}
    assert data["revisions_committed"] == 3 and data["clean"] is True
    assert [t["revision"] for t in data["per_turn"]] == [1, 2, 3]
    assert all(t["outcome"] == "updated" for t in data["per_turn"])
    # The first turn adds the forced first-turn specialists; every turn calls the
    # orchestrator twice, a specialist at least once and the Director.
    assert data["model_calls_per_turn"]["p50"] >= 4
    assert data["celery_tasks_purged"] == 0  # a turn sends no planning task (the relay does)
    assert set(data["goal"]) == {"overhead_p50_ms", "goal_ms", "meets_goal"}
    assert data["goal"]["goal_ms"] == 100 and data["goal"]["overhead_p50_ms"] is not None
    assert not Tenant.objects.filter(name__startswith="bench-").exists()


def _assert_clean(report: dict, turns: int) -> None:
    assert report["turns"] == turns
    assert report["errors"] == 0, report["error_codes"]
    assert report["lost_deltas"] == report["reordered_deltas"] == 0
    assert report["text_mismatches"] == 0
    assert report["deltas"] == turns * 20
    assert set(report["ttfd_ms"]) == SUMMARY_KEYS


@pytest.mark.django_db(transaction=True)
def test_bench_turns_agentic_compare_is_clean():
    data = _run(
        "bench_turns",
        *("--players", "2", "--turns", "2", "--think-ms", "0", "--agentic", "compare"),
    )

    assert (data["players"], data["turns_per_player"]) == (2, 2)
    # each arm runs twice (A B B A): 2 rounds × 2 players × 2 turns
    _assert_clean(data["without"], 8)
    _assert_clean(data["with"], 8)
    for arm in ("without", "with"):  # each round's own figures, to show their spread
        assert len(data[arm]["rounds"]) == 2
        assert all(r["ttfd_p50_ms"] > 0 for r in data[arm]["rounds"])
    assert "agentic" not in data["without"]
    assert data["without"]["settings"]["agentic"] is False
    assert data["with"]["settings"]["agentic"] is True
    info = data["with"]["agentic"]
    # Every chat turn with Agent V2 (warm-up ones included) recorded its planning run with
    # its reply and sent no task (the relay sends them), and none ran (no relay, no worker).
    assert info["chat_turns"] == 8 + 1  # the warm-up player in the arm's first round only
    assert info["planning_runs_recorded"] == info["chat_turns"]
    assert info["planning_tasks_queued"] == 0
    assert info["planning_runs_executed"] == 0
    comparison = data["comparison"]
    assert comparison["ttfd_p50_ratio"] > 0
    assert comparison["lost_deltas"] == {"without": 0, "with": 0}
    assert comparison["goal"] == {"ttfd_p50_ratio_max": 1.1, "lost_deltas": 0}
    assert isinstance(comparison["meets_goal"], bool)
    assert not Tenant.objects.filter(name__startswith="bench-").exists()


@pytest.mark.django_db(transaction=True)
def test_bench_turns_agentic_alone_keeps_the_report_shape():
    data = _run("bench_turns", *("--players", "2", "--turns", "1", "--think-ms", "0", "--agentic"))

    _assert_clean(data, 2)
    assert {"baseline", "ratio", "ttfd_ratio", "targets", "saturation"} <= data.keys()
    assert data["settings"]["agentic"] is True
    assert data["agentic"]["planning_runs_recorded"] == data["agentic"]["chat_turns"] == 3
    assert not Tenant.objects.filter(name__startswith="bench-").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["bench_agent", "--turns", "0"],
        ["bench_agent", "--warmup", "-1"],
        ["bench_turns", "--agentic", "sometimes"],
    ],
)
def test_bad_arguments_are_refused(args):
    with pytest.raises(CommandError):
        call_command(*args)


def _request(model: str, user: str, *, tool_results: bool = False) -> dict:
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": user}]
    if tool_results:
        messages.append({"role": "tool", "tool_call_id": "c1", "content": "done"})
    return {"model": model, "messages": messages}


def test_route_answers_each_role_on_the_happy_path():
    orchestrator = ROLE_MODELS["orchestrator"]
    phase1 = route(_request(orchestrator, "materials"))
    phase2 = route(_request(orchestrator, "materials", tool_results=True))
    assert [c["name"] for c in phase1.tool_calls] == ["manage_callbacks"]
    assert [c["name"] for c in phase2.tool_calls] == ["update_director_state"]
    assert route(_request(ROLE_MODELS["specialist"], "materials")).content
    first = route(_request(ROLE_MODELS["director"], "TURN\n1")).content
    second = route(_request(ROLE_MODELS["director"], "TURN\n2")).content
    assert state.check_candidate(first, old=None, max_chars=8000).code == state.OK
    assert state.check_candidate(second, old=first, max_chars=8000).code == state.OK
    assert route(_request("scripted-model", "hello")).content == reply_text()
    assert state.check_candidate(state_text("x"), old=None, max_chars=8000).valid


def test_agentic_comparison_goal():
    def figures(ttfd: float, lost: int = 0) -> dict:
        return {"ttfd_ms": {"p50": ttfd}, "lost_deltas": lost, "errors": 0}

    assert agentic_comparison(figures(20.0), figures(21.0))["meets_goal"] is True
    assert agentic_comparison(figures(20.0), figures(21.0))["ttfd_p50_ratio"] == 1.05
    assert agentic_comparison(figures(20.0), figures(23.0))["meets_goal"] is False
    assert agentic_comparison(figures(20.0), figures(20.0, lost=1))["meets_goal"] is False
