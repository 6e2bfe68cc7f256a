"""``bench_memory``: the command on a tiny synthetic set and on a hand-made LoCoMo file (the
JSON shape, every figure computed, the bench tenant gone afterwards; no figure's value is
asserted), and the pure parts on hand-made examples: the generator's determinism and
layout, the LoCoMo reader, the metrics.

The command starts a Celery worker on the test database, so its tests need committed rows
(``transaction=True``).
"""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import CommandError, call_command

from console.models import Tenant
from memory.bench import locomo, metrics, report, scale, synthetic

SUMMARY_KEYS = {"n", "p50", "p95", "max"}
KS = ["1", "5", "10", "20"]


def _run(*args: str) -> dict:
    out = io.StringIO()
    call_command("bench_memory", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def _share(value) -> bool:
    return isinstance(value, int | float) and 0.0 <= value <= 1.0


def _assert_scores(figures: dict, *, pack: bool = False) -> None:
    assert figures["questions"] > 0
    if pack:
        assert _share(figures["recall"]) and figures["tokens"] > 0 and figures["items"] > 0
        return
    assert list(figures["recall_at"]) == KS
    assert all(_share(v) for v in figures["recall_at"].values())
    assert _share(figures["all_evidence_at_10"]) and _share(figures["mrr"])


@pytest.mark.django_db(transaction=True)
def test_bench_memory_on_a_tiny_synthetic_set():
    data = _run("--conversations", "2", "--searchable-turns", "2", "--worker-turns", "3")

    dataset = data["dataset"]
    assert dataset["conversations"] == 2 and dataset["source"].startswith("synthetic")
    assert dataset["messages"] > 0 and dataset["questions_with_evidence"] > 0
    assert set(dataset["categories"]) >= {"single-hop", "multi-hop", "temporal", "adversarial"}
    assert data["ks"] == [1, 5, 10, 20]
    _assert_scores(data["hybrid"]["overall"])
    assert data["hybrid"]["by_category"]
    for group in data["hybrid"]["by_category"].values():
        _assert_scores(group)
    assert "adversarial" not in data["hybrid"]["by_category"]  # no evidence: not scored
    _assert_scores(data["baselines"]["lexical"]["overall"])
    _assert_scores(data["baselines"]["vector"]["overall"])
    recency = data["baselines"]["recency"]
    assert recency["window_messages"] == 50 and _share(recency["overall"]["recall"])
    _assert_scores(data["pack"]["overall"], pack=True)
    assert data["pack"]["budget_tokens"] == 1500
    latency = data["latency_ms"]["recall"]
    assert {"k1", "k5", "k10", "k20", "k50", "all"} <= set(latency)
    assert set(latency["all"]) == SUMMARY_KEYS and latency["all"]["p50"] > 0
    assert data["ingest"]["messages"] == dataset["messages"]
    assert data["ingest"]["messages_per_s"] > 0 and data["ingest"]["indexed_per_s"] > 0
    worker = data["ingest"]["worker"]
    assert "error" not in worker, worker
    for way in ("turns", "imported"):
        assert (worker[way]["messages"], worker[way]["indexed"]) == (6, 6)
        assert worker[way]["messages_per_s"] > 0 and not worker[way]["timed_out"]
    assert worker["concurrency"] == 2 and worker["tasks_left_in_queue"] == 0
    searchable = data["commit_to_searchable_ms"]
    assert searchable["in_process"]["n"] > 0 and searchable["in_process"]["p95"] > 0
    celery = searchable["celery"]
    assert "error" not in celery, celery
    assert celery["commit_to_searchable_ms"]["n"] == 2 and celery["timeouts"] == 0
    assert 0 <= celery["found_by_recall"] <= 2
    assert data["scale"] is None
    assert set(data["goals"]) == {
        "hybrid_recall_at_10",
        "multi_hop_all_evidence_at_10",
        "recall_at_10_over_recency",
        "commit_to_searchable_p95_ms",
        "worker_ingest_messages_per_s",
    }
    assert all(isinstance(goal["meets_goal"], bool) for goal in data["goals"].values())
    assert data["goals"]["commit_to_searchable_p95_ms"]["measured"] == "celery"
    assert isinstance(data["meets_goal"], bool)
    assert isinstance(data["misses_at_10"], dict)
    _assert_bench_keys(data)
    assert not Tenant.objects.filter(name__startswith="bench-").exists()


STAGES = {"embed", "lexical", "vector", "fuse", "rerank"}


def _assert_bench_keys(data: dict) -> None:
    """The per-category baselines, the check, and the latency per stage (absent: None)."""
    for side in ("lexical", "vector", "recency"):
        assert set(data["baselines"][side]["by_category"]) == set(data["hybrid"]["by_category"])
    assert set(data["pack"]["by_category"]) == set(data["hybrid"]["by_category"])
    check = data["check"]
    assert isinstance(check["hybrid_beats_best_single"], bool)
    assert set(check["by_category"]) == {"overall", *data["hybrid"]["by_category"]}
    for row in check["by_category"].values():
        assert set(row) == {"hybrid", "best_single", "best_single_recall_at_10", "beats"}
        assert row["best_single"] in ("lexical", "vector")
    stages = data["latency_ms"]["stages"]
    assert set(stages) == {"measured_by", *STAGES}
    if stages["measured_by"] == "bench":
        assert stages["fuse"] is None and stages["rerank"] is None
    for stage in ("embed", "lexical", "vector"):
        assert set(stages[stage]) == SUMMARY_KEYS and stages[stage]["n"] > 0


@pytest.mark.django_db(transaction=True)
def test_bench_memory_prints_per_category_baselines_and_stages_as_text():
    out = io.StringIO()
    call_command(
        "bench_memory", "--conversations", "1", "--searchable-turns", "0", "--worker-turns", "0",
        "--lang", "zh",
        stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    assert "synthetic hard, zh" in text
    assert re.search(r"hybrid beats the best single retriever on every category: (yes|no)", text)
    assert "rerank absent" in text and "fuse absent" in text
    for line in ("  hybrid", "  lexical", "  vector", "  recency", "multi-hop", "temporal"):
        assert line in text


@pytest.mark.django_db(transaction=True)
def test_bench_memory_scale_prints_the_cost_curve_and_the_sizes_on_disk():
    data = _run(
        "--conversations", "1", "--searchable-turns", "0", "--worker-turns", "0", "--scale", "40"
    )  # fmt: skip

    scale = data["scale"]
    assert scale["added_owner_messages"] == 40 and scale["added_other_messages"] == 800
    assert [point["added_per_owner"] for point in scale["curve"]] == [40]
    point = scale["curve"][0]
    assert point["owner_messages"] >= 40 and point["table_messages"] >= 840
    assert set(point["recall_ms_k10"]) == SUMMARY_KEYS and point["fill_messages_per_s"] > 0
    assert set(scale["sizes"]) == {"memory_message", "memory_recallitem", "memory_recallterm"}
    for size in scale["sizes"].values():
        assert size["total_mb"] >= size["table_mb"] >= 0 and size["index_mb"]
    assert "scale_recall_p95_ms" in data["goals"]
    assert not Tenant.objects.filter(name__startswith="bench-").exists()


def test_the_scale_steps_are_the_curve_below_the_size_then_the_size():
    assert scale.steps(2000) == [1000, 2000]
    assert scale.steps(100_000) == [1000, 10_000, 100_000]
    assert scale.steps(500) == [500]


def _figures(recall_10: float) -> dict:
    return {"questions": 1, "recall_at": {10: recall_10}}


def test_the_check_compares_hybrid_with_the_best_single_retriever_per_category():
    def side(overall, multi, single):
        return {
            "overall": _figures(overall),
            "by_category": {"multi-hop": _figures(multi), "single-hop": _figures(single)},
        }

    data = {
        "hybrid": side(0.7, 0.5, 0.9),
        "baselines": {"lexical": side(0.6, 0.6, 0.8), "vector": side(0.5, 0.4, 0.9)},
    }
    check = report.check(data)
    assert not check["hybrid_beats_best_single"]
    rows = check["by_category"]
    assert rows["overall"]["beats"] and rows["single-hop"]["beats"]  # a tie is not below
    assert rows["multi-hop"] == {
        "hybrid": 0.5, "best_single": "lexical", "best_single_recall_at_10": 0.6, "beats": False,
    }  # fmt: skip
    data["hybrid"]["by_category"]["multi-hop"] = _figures(0.61)
    assert report.check(data)["hybrid_beats_best_single"]


LOCOMO_FILE = [
    {
        "sample_id": "hand-made",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben!"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Hey Ana, how was the trip?"},
                {"speaker": "Ana", "dia_id": "D1:3", "text": "I hiked up to a glacier in Iceland."},
                {
                    "speaker": "Ben",
                    "dia_id": "D1:4",
                    "text": "Look at my garden.",
                    "blip_caption": "a photo of sunflowers",
                },
            ],
            "session_2_date_time": "9:05 am on 1 June, 2023",
            "session_2": [
                {"speaker": "Ben", "dia_id": "D2:1", "text": "I adopted a kitten called Miso."},
                {"speaker": "Ana", "dia_id": "D2:2", "text": "Miso is a perfect name."},
            ],
        },
        "qa": [
            {"question": "Where did Ana hike?", "answer": "Iceland", "evidence": ["D1:3"],
             "category": 4},
            {"question": "What grows in Ben's garden?", "answer": "sunflowers",
             "evidence": ["D1:04; D9:9"], "category": "3"},
            {"question": "What did Ben adopt after Ana's trip?", "answer": "a kitten",
             "evidence": ["D1:3", "D2:1"], "category": 1},
            {"question": "What is Ben's horse called?", "adversarial_answer": "Miso",
             "evidence": [], "category": 5},
            {"question": "Which pet name did Ana praise?", "answer": "Miso",
             "evidence": ["D2:2"], "category": "preference"},
        ],
    }
]  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_bench_memory_reads_a_locomo_file(tmp_path):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(LOCOMO_FILE))

    data = _run("--dataset", str(path), "--searchable-turns", "0", "--worker-turns", "0")

    dataset = data["dataset"]
    assert dataset["source"] == str(path)
    assert (dataset["conversations"], dataset["sessions"], dataset["messages"]) == (1, 2, 6)
    assert dataset["questions_with_evidence"] == 4 and dataset["unknown_evidence_ids"] == 1
    assert dataset["categories"] == {
        "adversarial": 1, "multi-hop": 1, "open-domain": 1, "preference": 1, "single-hop": 1,
    }  # fmt: skip
    assert set(data["hybrid"]["by_category"]) == {
        "multi-hop", "open-domain", "preference", "single-hop",
    }  # fmt: skip
    _assert_scores(data["hybrid"]["overall"])
    assert data["commit_to_searchable_ms"]["celery"] is None
    assert data["goals"]["commit_to_searchable_p95_ms"]["measured"] == "in_process"
    assert not Tenant.objects.filter(name__startswith="bench-").exists()


@pytest.mark.parametrize(
    "args",
    [["--conversations", "0"], ["--scale", "-1"], ["--scale", "100001"],
     ["--searchable-turns", "-1"], ["--worker-turns", "-1"],
     ["--dataset", "/nonexistent/locomo.json"]],
)  # fmt: skip
def test_bad_arguments_are_refused(args):
    with pytest.raises(CommandError):
        call_command("bench_memory", *args)


# The generator and the reader (pure).


def test_the_synthetic_set_is_deterministic():
    assert json.dumps(synthetic.generate(2, seed=5)) == json.dumps(synthetic.generate(2, seed=5))
    assert json.dumps(synthetic.generate(2, seed=5)) != json.dumps(synthetic.generate(2, seed=6))
    assert synthetic.generate(3, seed=5)[:2] == synthetic.generate(2, seed=5)


def test_the_synthetic_set_has_the_locomo_layout():
    data = synthetic.generate(10)
    assert len(data) == 10
    questions = 0
    for sample in data:
        assert set(sample) == {"sample_id", "conversation", "qa"}
        conversation = sample["conversation"]
        a, b = conversation["speaker_a"], conversation["speaker_b"]
        sessions = [k for k in conversation if re.fullmatch(r"session_\d+", k)]
        assert synthetic.SESSIONS[0] <= len(sessions) <= synthetic.SESSIONS[1]
        texts = {}
        for key in sessions:
            number = int(key.split("_")[1])
            assert locomo.parse_when(conversation[f"{key}_date_time"]) is not None
            for position, turn in enumerate(conversation[key], start=1):
                assert turn["dia_id"] == f"D{number}:{position}"
                assert turn["speaker"] in (a, b) and turn["text"]
                texts[turn["dia_id"]] = turn["text"]
        assert len(sample["qa"]) == sum(synthetic.MIX.values())
        for qa in sample["qa"]:
            assert set(qa) == {"question", "answer", "evidence", "category"}
            assert all(dia in texts for dia in qa["evidence"])
            assert all(qa["question"] not in texts[dia] for dia in qa["evidence"])
            if qa["category"] == 5:
                assert qa["evidence"] == []
            if qa["category"] == 1:  # multi-hop: evidence in two or more sessions
                assert len({dia.split(":")[0] for dia in qa["evidence"]}) >= 2
        questions += len(sample["qa"])
    assert questions == 200
    parsed = locomo.parse(data)
    assert sum(len(s.turns) for s in parsed) > 2500
    categories = {q.category for s in parsed for q in s.questions}
    assert categories == {"single-hop", "multi-hop", "temporal", "preference", "adversarial"}


def test_temporal_answers_follow_the_session_date():
    sample = synthetic.generate(1)[0]
    conversation = sample["conversation"]
    for qa in sample["qa"]:
        if qa["category"] != 2:
            continue
        session = qa["evidence"][0].split(":")[0][1:]
        said = locomo.parse_when(conversation[f"session_{session}_date_time"])
        assert str(said.year) in qa["answer"]


def test_the_reader_normalises_categories_evidence_and_dates():
    (sample,) = locomo.parse(LOCOMO_FILE)
    assert (sample.speaker_a, sample.speaker_b) == ("Ana", "Ben")
    assert [t.role for t in sample.turns] == ["user", "assistant"] * 2 + ["assistant", "user"]
    assert sample.turns[3].text == "Look at my garden. [shares a photo: a photo of sunflowers]"
    assert sample.turns[0].when.isoformat() == "2023-05-08T13:56:00+00:00"
    assert sample.turns[4].when.isoformat() == "2023-06-01T09:05:00+00:00"
    garden = sample.questions[1]
    assert garden.evidence == ("D1:4",) and garden.unknown_evidence == 1
    assert garden.category == "open-domain"
    assert [q.category for q in sample.questions] == [
        "single-hop", "open-domain", "multi-hop", "adversarial", "preference",
    ]  # fmt: skip
    assert sample.questions[3].answer == "Miso" and sample.questions[3].evidence == ()
    assert locomo.parse_when("12:05 am on 1 Jan, 2024").isoformat() == "2024-01-01T00:05:00+00:00"
    assert locomo.parse_when("2023-02-03T04:05:00").isoformat() == "2023-02-03T04:05:00+00:00"
    assert locomo.parse_when("sometime") is None
    assert locomo.dia_ids("D30:05; D9:17") == ["D30:5", "D9:17"]


# The metrics (pure).

ITEMS = [["D1:1", "D1:2", "D1:3"], ["D2:4", "D2:5", "D2:6"], ["D3:1"]]


def test_evidence_recall_counts_a_widened_neighbour():
    evidence = ["D1:3", "D3:1"]
    assert metrics.recall_at(evidence, ITEMS, 1) == 0.5
    assert metrics.recall_at(evidence, ITEMS, 2) == 0.5
    assert metrics.recall_at(evidence, ITEMS, 3) == 1.0
    assert not metrics.all_found(evidence, ITEMS, 2) and metrics.all_found(evidence, ITEMS, 3)
    assert metrics.recall_at([], ITEMS, 3) == 0.0 and not metrics.all_found([], ITEMS, 3)


def test_reciprocal_rank_is_that_of_the_first_evidence_hit():
    assert metrics.reciprocal_rank(["D3:1", "D1:2"], ITEMS) == 1.0
    assert metrics.reciprocal_rank(["D2:5"], ITEMS) == 0.5
    assert metrics.reciprocal_rank(["D9:9"], ITEMS) == 0.0


def test_score_reads_each_k_from_its_own_list():
    by_k = {1: ITEMS[:1], 10: ITEMS}
    figures = metrics.score(["D2:6"], by_k)
    assert figures == {"recall_at": {1: 0.0, 10: 1.0}, "all_evidence_at_10": 1.0, "mrr": 0.5}
    assert metrics.prefixes(ITEMS, (1, 2)) == {1: ITEMS[:1], 2: ITEMS[:2]}


def test_the_pack_stops_at_the_token_budget_but_always_takes_the_first_item():
    def words(text: str) -> int:
        return len(text.split())

    items = [("one two three", ["D1:1"]), ("four five", ["D1:2"]), ("six", ["D1:3"])]
    assert metrics.pack(items, words, budget=5) == ({"D1:1", "D1:2"}, 5, 2)
    assert metrics.pack(items, words, budget=1) == ({"D1:1"}, 3, 1)
    assert metrics.score_set(["D1:2", "D9:9"], {"D1:1", "D1:2"}) == {
        "recall": 0.5,
        "all_evidence_at_10": 0.0,
    }


def test_widen_mirrors_the_products_neighbour_ranges():
    order = list("abcdefghij")
    widened = metrics.widen(["e", "d", "a", "zz", "j", "c"], order, neighbours=1, k=3)
    assert widened == [["d", "e", "f"], ["a", "b"], ["i", "j"]]
    assert metrics.widen(["e"], order, neighbours=1, k=0) == []


def test_summaries_are_per_question_means_by_category():
    rows = [
        ("single-hop", {"recall_at": {10: 1.0}, "mrr": 1.0}),
        ("single-hop", {"recall_at": {10: 0.0}, "mrr": 0.0}),
        ("temporal", {"recall_at": {10: 0.5}, "mrr": 0.5}),
    ]
    summary = metrics.summarise(rows)
    assert summary["overall"] == {"questions": 3, "recall_at": {10: 0.5}, "mrr": 0.5}
    assert summary["by_category"]["single-hop"] == {
        "questions": 2,
        "recall_at": {10: 0.5},
        "mrr": 0.5,
    }
    assert metrics.summarise([]) == {"overall": {"questions": 0}, "by_category": {}}


def test_goals_flag_each_target():
    def figures(recall: float, multi: float) -> dict:
        return {
            "overall": {"recall_at": {10: recall}},
            "by_category": {"multi-hop": {"all_evidence_at_10": multi}},
        }

    data = {
        "hybrid": figures(0.8, 0.4),
        "baselines": {"recency": {"overall": {"recall": 0.4}}},
        "commit_to_searchable_ms": {"in_process": {"p95": 12.0}, "celery": {"error": "x"}},
        "scale": {"recall_ms_k10": {"p95": 60.0}},
        "ingest": {"worker": {"error": "no broker"}},
    }
    goals = report.goals(data)
    assert "worker_ingest_messages_per_s" not in goals  # not measured: no goal to flag
    assert goals["hybrid_recall_at_10"]["meets_goal"] is True
    assert goals["multi_hop_all_evidence_at_10"]["meets_goal"] is True
    assert goals["recall_at_10_over_recency"] == {
        "value": 0.4,
        "target": 0.3,
        "meets_goal": True,
    }
    assert goals["commit_to_searchable_p95_ms"]["measured"] == "in_process"
    assert goals["scale_recall_p95_ms"]["meets_goal"] is False
    data["hybrid"] = figures(0.6, 0.1)
    missed = report.goals(data)
    for name in ("hybrid_recall_at_10", "multi_hop_all_evidence_at_10"):
        assert missed[name]["meets_goal"] is False
    assert missed["recall_at_10_over_recency"]["meets_goal"] is False
    data["ingest"]["worker"] = {"turns": {"messages_per_s": 150.0}}
    assert report.goals(data)["worker_ingest_messages_per_s"]["meets_goal"] is False
