"""``bench_prefix`` at a small size: every arm plays its scripted chat over the socket with
both layouts, and the report holds every figure (their values are the benchmark's to
report, not this test's to assert, beyond what the layout guarantees)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from console.models import Tenant
from roleplay.bench.prefix import ARMS, LAYOUTS, shared_tokens

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_benchmark_measures_every_arm_with_both_layouts_and_cleans_up(settings):
    # One player, faster than anyone types: the chat burst limits must not refuse it.
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "chat_account": (1, 10)}
    out = StringIO()
    call_command("bench_prefix", "--turns", "3", "--entries", "300", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert set(data["arms"]) == set(ARMS)
    for by_layout in data["arms"].values():
        assert set(by_layout) == set(LAYOUTS)
        for figures in by_layout.values():
            assert figures["pairs"] == 2
            assert 0.0 < figures["share_p10"] <= figures["share_p50"] <= 1.0
            # the work behind the share: what each later request holds past the shared part
            assert figures["new_tokens_sum"] > 0 and figures["new_tokens"]["p50"] > 0
    # Nothing per turn: the next request starts with all of the earlier one's stable part.
    assert data["arms"]["none"]["cache_aware"]["of_stable_min"] == 1.0
    assert isinstance(data["goal_met_all_on"], bool)
    assert not Tenant.objects.filter(name__startswith="bench-").exists()


def test_the_shared_prefix_counts_whole_messages_then_the_common_start():
    a = [
        {"role": "system", "content": "Keep the lamp lit."},
        {"role": "user", "content": "Is the lamp lit tonight, keeper?"},
    ]
    cut = [a[0], {"role": "user", "content": "Is the lamp out?"}]
    assert shared_tokens(a, a) > shared_tokens(a, cut) > shared_tokens(a, a[:1])
    assert shared_tokens(a, [{"role": "user", "content": "Keep"}]) == 0


def test_bad_counts_are_refused():
    with pytest.raises(CommandError):
        call_command("bench_prefix", "--turns", "2")


def test_the_compactor_s_json_schema_call_is_answered_as_a_summary_not_as_story():
    """The Compact arms compact within a dozen turns: the compactor asks for its summary
    with a JSON schema of its own, which Story's script does not know."""
    from roleplay.bench.continuity_script import COMPACTOR_MARK
    from roleplay.bench.prefix import route
    from roleplay.compact.engine.protocol import response_format

    request = {
        "model": "scripted-model",
        "response_format": response_format("structured_json"),
        "messages": [
            {"role": "system", "content": f"{COMPACTOR_MARK} of the chat."},
            {"role": "user", "content": json.dumps({"messages": ["FACT-A1 said"]})},
        ],
    }
    reply = route(request).resolve(request)
    assert "canonical" in json.loads(reply.content)
