"""The pure rules: matching by keywords and RE2 patterns, decisions, redaction."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from roleplay.moderation.engine import rules
from tests.moderation.conftest import BLOCK_VIOLENCE


def test_keywords_match_whole_words_in_any_case_and_patterns_by_re2():
    parsed = rules.parse(BLOCK_VIOLENCE)
    assert rules.matched("I will STAB you", parsed) == ["violence"]
    assert rules.matched("a stabilizer", parsed) == []
    assert rules.matched("he killls them", parsed) == ["violence"]
    assert rules.matched("Buy now! and stab", parsed) == ["violence", "spam"]


def test_the_most_severe_action_wins_and_endpoint_categories_get_their_action():
    parsed = rules.parse({**BLOCK_VIOLENCE, "endpoint_action": "hide_reply"})
    decision = rules.decide(parsed, ["spam", "violence"], [])
    assert decision.action == "block_input" and decision.category == "violence"
    assert decision.categories == ("violence", "spam")
    assert rules.decide(parsed, [], ["violence"]).action == "block_input"  # named: its own
    assert rules.decide(parsed, [], ["hate"]) == rules.Decision("hide_reply", ("hate",))
    assert rules.decide(parsed, [], []) is rules.ALLOW
    assert rules.hides_reply(rules.decide(parsed, ["violence"], []))


def test_a_pattern_re2_cannot_run_or_an_unknown_field_is_refused():
    with pytest.raises(ValidationError):
        rules.parse({"categories": {"x": {"patterns": ["(a)\\1"]}}})  # backreference
    with pytest.raises(ValidationError):
        rules.parse({"categories": {"x": {"action": "delete"}}})
    with pytest.raises(ValidationError):
        rules.parse({"categories": {}, "extra": 1})


def test_a_catastrophic_pattern_runs_in_linear_time():
    parsed = rules.parse({"categories": {"x": {"patterns": ["(a+)+$"]}}})
    assert rules.matched("a" * 50_000 + "b", parsed) == []


def test_the_redacted_excerpt_keeps_no_word_whole():
    excerpt = rules.redacted("kill them all tonight")
    assert excerpt == "k··· t··· a·· t······"
    for word in ("kill", "them", "tonight"):
        assert word not in excerpt
    assert len(rules.redacted("word " * 100)) <= rules.EXCERPT_CHARS
