"""Background consolidation's pure checks (seed 004): settings, the batch window, the
answer's parsing, and every reason a whole batch is refused."""

from __future__ import annotations

import pytest

from memory.engine import config
from memory.engine import consolidation as engine
from memory.errors import MemoryInvalid

BATCH = [
    engine.source("m1", "Please keep your replies short from now on.", 10),
    engine.source("m2", "I moved to Lisbon last spring with my two cats.", 20),
    engine.source("m3", "For all characters: call me Sam.", 30),
]


def _candidate(**overrides):
    item = {
        "kind": "fact",
        "scope": "persona",
        "content": "The player lives in Lisbon with two cats.",
        "evidence": [{"message_id": "m2", "quote": "I moved to Lisbon last spring"}],
    }
    return item | overrides


def test_settings_default_off_and_are_checked_by_name():
    assert engine.settings_of(None) == engine.Settings()
    assert engine.Settings().enabled is False
    assert engine.settings_of({"enabled": True, "early_messages": 4}).early_messages == 4
    for bad, field in [
        ({"enabled": "yes"}, "consolidation.enabled"),
        ({"batch_messages": 13}, "consolidation.batch_messages"),
        ({"max_candidates": 0}, "consolidation.max_candidates"),
        ({"dedupe_similarity": 1.5}, "consolidation.dedupe_similarity"),
        ({"interval_minutes": True}, "consolidation.interval_minutes"),
        ({"surprise": 1}, "consolidation.surprise"),
    ]:
        with pytest.raises(MemoryInvalid) as caught:
            config.check_config({"consolidation": bad})
        assert caught.value.details["field"] == field
    assert config.check_config({"consolidation": None}) == {"consolidation": None}
    with pytest.raises(MemoryInvalid):
        config.check_config({"consolidation": []})


def test_the_batch_is_the_oldest_of_the_newest_waiting():
    waiting = [engine.source(f"m{n}", f"text {n}", n) for n in range(40)]
    batch = engine.pick_batch(waiting, engine.Settings())
    assert [s.ts for s in batch] == list(range(8, 20))  # newest 32 kept, oldest 12 of them
    assert engine.pick_batch(waiting[:3], engine.Settings()) == waiting[:3]
    assert engine.source("x", "y" * 5000, 1).text == "y" * engine.MAX_SOURCE_CHARS


def test_the_request_names_the_ids_and_asks_for_the_schema():
    messages, response_format = engine.request(BATCH, user="Ann", character="Mira",
                                               max_candidates=5)  # fmt: skip
    assert '[m2] "I moved to Lisbon last spring with my two cats."' in messages[1]["content"]
    schema = response_format["json_schema"]["schema"]
    assert schema["properties"]["candidates"]["maxItems"] == 5
    assert "every character" in messages[0]["content"]


def test_an_answer_is_parsed_with_or_without_a_fence():
    assert engine.parse('{"candidates": []}') == []
    assert engine.parse('```json\n{"candidates": [{"a": 1}]}\n```') == [{"a": 1}]
    for bad in ("", "nope", "[]", '{"candidates": {}}'):
        with pytest.raises(engine.Unparsable):
            engine.parse(bad)


def test_a_good_candidate_is_located_in_its_message():
    [found] = engine.check([_candidate()], BATCH)
    assert found.kind == "fact" and found.scope == "persona"
    assert found.spans == (engine.Span("m2", 0, len("I moved to Lisbon last spring")),)
    [cased] = engine.check([_candidate(evidence=[{"message_id": "m2", "quote": "LISBON"}])], BATCH)
    assert cased.spans[0].start == BATCH[1].text.index("Lisbon")


@pytest.mark.parametrize(
    "bad, code",
    [
        ({"evidence": [{"message_id": "m9", "quote": "Lisbon"}]}, "unknown_message"),
        ({"evidence": [{"message_id": "m2", "quote": "Porto"}]}, "quote_mismatch"),
        ({"evidence": []}, "missing_evidence"),
        ({"evidence": [{"message_id": "m2"}]}, "invalid_evidence"),
        ({"scope": "shared"}, "shared_without_statement"),
        ({"kind": "belief"}, "invalid_candidate"),
        ({"kind": "agreement", "scope": "shared"}, "invalid_candidate"),
        ({"content": "  "}, "invalid_candidate"),
        ({"content": "x" * 241, "kind": "preference"}, "invalid_candidate"),
        ({"extra": 1}, "invalid_candidate"),
    ],
)
def test_one_bad_candidate_refuses_the_whole_batch(bad, code):
    with pytest.raises(engine.Rejected) as caught:
        engine.check([_candidate(), _candidate(**bad)], BATCH)
    assert caught.value.code == code


def test_a_citation_elsewhere_is_named_for_what_it_is():
    item = _candidate(evidence=[{"message_id": "other", "quote": "Lisbon"}])
    for code in ("cross_conversation", "cross_persona"):
        with pytest.raises(engine.Rejected) as caught:
            engine.check([item], BATCH, elsewhere={"other": code})
        assert caught.value.code == code
    assert engine.cited_ids([item, "junk", {"evidence": "x"}]) == {"other"}


def test_shared_needs_an_explicit_statement_for_everyone():
    shared = _candidate(
        kind="preference",
        scope="shared",
        content="Call the player Sam.",
        evidence=[{"message_id": "m3", "quote": "call me Sam"}],
    )
    assert engine.check([shared], BATCH)[0].scope == "shared"
    for text in ("tell every character", "以后所有角色都叫我小王", "Everyone should know"):
        assert engine.says_for_everyone(text)
    for text in ("call me Sam", "you are all right", "每天"):
        assert not engine.says_for_everyone(text)


def test_too_many_candidates_refuse_the_batch():
    with pytest.raises(engine.Rejected) as caught:
        engine.check([_candidate()] * 6, BATCH, max_candidates=5)
    assert caught.value.code == "too_many_candidates"
