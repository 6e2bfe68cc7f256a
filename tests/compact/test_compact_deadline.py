"""The compact phase's own deadline is a backstop that a valid ``maxCompactionMs`` never
reaches: the job stops at ``maxCompactionMs`` and degrades, instead of the turn failing."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from roleplay.compact import plugin
from roleplay.scenarios.config import MAX_COMPACTION_MS, Reliability


def test_the_phase_outlasts_the_longest_compaction_a_scenario_may_ask_for():
    phase = plugin.CompactPlugin.prepare
    assert phase.deadline_s * 1000 > MAX_COMPACTION_MS + 2000 * plugin.READ_BACK_S


def test_a_longer_compaction_than_the_backstop_covers_is_refused():
    assert Reliability.model_validate({"maxCompactionMs": MAX_COMPACTION_MS})
    with pytest.raises(ValidationError):
        Reliability.model_validate({"maxCompactionMs": MAX_COMPACTION_MS + 1})
