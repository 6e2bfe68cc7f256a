"""``bench_cache`` on a short conversation: each turn's prompt starts with the whole prompt
of the turn before, the JSON has both runs, and only the cached run reports cached tokens.
No timing is asserted."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from roleplay.bench.prompt_cache import history, turn_messages
from roleplay.llm.bundled import local_model_available


def test_each_turn_starts_with_the_prompt_of_the_turn_before():
    base = history(600)
    assert len(base) > 5
    for turn in range(1, 10):
        earlier, later = turn_messages(base, turn), turn_messages(base, turn + 1)
        assert later[: len(earlier)] == earlier
        assert len(later) == len(earlier) + 2


@pytest.mark.skipif(not local_model_available(), reason="the bundled model is not installed")
def test_bench_cache_reports_both_runs_of_the_last_turn():
    out = io.StringIO()
    call_command("bench_cache", "--turns", "2", "--tokens", "300", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["turn"] == 2 and data["prompt_tokens"] > 200
    assert [t["turn"] for t in data["turns_cache_on"]] == [1, 2]
    assert [t["turn"] for t in data["turns_cache_off"]] == [2]
    assert data["cached_tokens"]["cache_off"] == 0
    assert data["cached_tokens"]["cache_on"] > data["prompt_tokens"] // 2
    assert set(data["ttft_ms"]) == {"cache_on", "cache_off"} and data["speedup"] > 0
