"""``bench_prompt`` on a small setup: the JSON shape, every stage measured, the bench tenant
gone afterwards. No timing is asserted."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from console.models import Tenant

pytestmark = pytest.mark.django_db(transaction=True)


def test_bench_prompt_reports_each_stage_and_cleans_up():
    out = io.StringIO()
    call_command(
        "bench_prompt",
        *("--history", "30", "--entries", "200", "--prompts", "20", "--samples", "5", "--json"),
        stdout=out,
    )
    data = json.loads(out.getvalue())
    assert data["samples"] == 5 and data["preset_prompts"] == 20
    assert data["history_messages"] == 30 and data["prompt_messages"] > 30
    assert set(data["stages_ms"]) == {"read_ms", "worldbook_ms", "memory_ms", "assembly_ms"}
    assert data["pack_reads"] == {"hit": 5}  # the pre-turn pack was ready for every sample
    assert set(data["memory_target"]) == {"memory_p50_ms", "met"}
    assert all(stage["p50"] is not None for stage in data["stages_ms"].values())
    assert abs(sum(data["stage_share_of_p50"].values()) - 1) < 0.2
    assert set(data["targets"]) == {"total_p50_ms", "met"}
    assert not Tenant.objects.filter(name__startswith="bench-").exists()
