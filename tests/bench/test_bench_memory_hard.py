"""The harder synthetic set of ``bench_memory`` (``memory.bench.hard``): the rules its
questions and turns follow, on small generated sets (pure; no figure is asserted)."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest

from memory.bench import hard, hard_en, hard_zh, locomo
from memory.bench.paraphrase import content_words, shared_content

CJK = re.compile(r"[\u4e00-\u9fff]")
TABLES = {"en": hard_en, "zh": hard_zh}


def _samples(lang: str, count: int = 3, seed: int = 7) -> list[dict]:
    return hard.generate(count, seed=seed, lang=lang)


def _turns(sample: dict) -> dict[str, dict]:
    conversation = sample["conversation"]
    return {
        turn["dia_id"]: turn
        for key, turns in conversation.items()
        if re.fullmatch(r"session_\d+", key)
        for turn in turns
    }


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_hard_set_is_deterministic_for_a_seed(lang):
    first = json.dumps(_samples(lang), ensure_ascii=False)
    assert first == json.dumps(_samples(lang), ensure_ascii=False)
    assert first != json.dumps(_samples(lang, seed=8), ensure_ascii=False)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_hard_set_has_the_locomo_layout(lang):
    raw = _samples(lang)
    samples = locomo.parse(raw)
    for sample, parsed in zip(raw, samples, strict=True):
        conversation = sample["conversation"]
        sessions = [k for k in conversation if re.fullmatch(r"session_\d+", k)]
        assert all(locomo.parse_when(conversation[f"{k}_date_time"]) for k in sessions)
        assert parsed.speaker_a == conversation["speaker_a"]
        known = {t.dia_id for t in parsed.turns}
        assert all(q.unknown_evidence == 0 for q in parsed.questions)
        assert all(set(q.evidence) <= known for q in parsed.questions)
    categories = {q.category for s in samples for q in s.questions}
    assert categories == {"single-hop", "multi-hop", "temporal", "open-domain", "adversarial"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_paraphrased_question_shares_no_content_word_with_its_evidence(lang):
    table = TABLES[lang]
    paraphrased = 0
    for sample in _samples(lang, count=6):
        turns = _turns(sample)
        names = frozenset(sample["conversation"][k].casefold() for k in ("speaker_a", "speaker_b"))
        for qa in sample["qa"]:
            if not qa.get("paraphrased"):
                continue
            paraphrased += 1
            said = [turns[d]["text"] for d in qa["evidence"]]
            assert not shared_content(qa["question"], said, table.STOPWORDS, names), qa
    assert paraphrased > 0


def test_content_words_are_compared_by_stem_and_by_bigram():
    stop = hard_en.STOPWORDS
    assert shared_content("Where did she move?", ["She moved to Porto."], stop, frozenset())
    assert not shared_content("Where did she relocate?", ["She moved to Porto."], stop, frozenset())
    assert shared_content("Who is volunteering?", ["I volunteer there"], stop, frozenset())
    assert content_words("林晓雨的狗叫什么？", hard_zh.STOPWORDS, frozenset({"林晓雨"})) == {"狗叫"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_multi_hop_evidence_spans_two_to_four_sessions(lang):
    spans = []
    for sample in _samples(lang, count=4):
        for qa in sample["qa"]:
            if qa["category"] == "multi-hop":
                sessions = {d.split(":")[0] for d in qa["evidence"]}
                assert len(sessions) == len(qa["evidence"])
                spans.append(len(sessions))
    assert spans and min(spans) >= 2 and max(spans) <= 4


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_relative_date_is_answered_from_the_session_date(lang):
    table = TABLES[lang]
    checked = 0
    for sample in _samples(lang, count=4):
        turns = _turns(sample)
        for qa in sample["qa"]:
            if qa["category"] != "temporal" or len(qa["evidence"]) != 1:
                continue
            dia = qa["evidence"][0]
            session = dia.split(":")[0][1:]
            when = locomo.parse_when(sample["conversation"][f"session_{session}_date_time"])
            word = next(
                w
                for w in sorted(table.RELATIVE_DAYS, key=len, reverse=True)
                if w.casefold() in turns[dia]["text"].casefold()
            )
            days, form = table.RELATIVE_DAYS[word]
            date = getattr(table, "format_date", hard.format_date)(when - timedelta(days=days))
            assert qa["answer"] == form.format(date=date)
            checked += 1
    assert checked


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_story_before_another_is_told_in_the_session_before(lang):
    found = 0
    for sample in _samples(lang, count=6):
        for qa in sample["qa"]:
            if qa["category"] == "temporal" and len(qa["evidence"]) == 2:
                first, second = (int(d.split(":")[0][1:]) for d in qa["evidence"])
                assert second == first + 1
                found += 1
    assert found


def test_distractors_share_the_question_words_but_are_not_evidence():
    sample = _samples("en", count=1)[0]
    texts = [t["text"] for t in _turns(sample).values()]
    distractors = {d for story in hard_en.STORIES for d in story.distractors}
    placed = [t for t in texts if t in distractors]
    assert placed
    evidence = {d for qa in sample["qa"] for d in qa["evidence"]}
    turns = _turns(sample)
    assert not any(turns[d]["text"] in distractors for d in evidence)


def test_an_echo_shares_no_content_word_with_its_story_questions():
    stories = {story.key: story for story in hard_en.STORIES}
    assert set(hard_en.ECHOES) <= set(stories)
    for key, echoes in hard_en.ECHOES.items():
        questions = [*stories[key].asked, *stories[key].paraphrased]
        for question in questions:
            shared = shared_content(question, list(echoes), hard_en.STOPWORDS, frozenset())
            assert not shared - {"name"}, (key, question, shared)


def test_the_chinese_set_is_chinese():
    for sample in _samples("zh", count=2):
        for turn in _turns(sample).values():
            assert CJK.search(turn["text"]), turn
        for qa in sample["qa"]:
            assert CJK.search(qa["question"]), qa
        assert all(CJK.search(sample["conversation"][k]) for k in ("speaker_a", "speaker_b"))


def test_an_unknown_language_is_refused():
    with pytest.raises(KeyError):
        hard.generate(1, lang="xx")
