"""``bench_front_loop`` end to end on a small run: the JSON shape, every turn complete, the
loop's turns ending with ``over`` after the steps asked for, and the bench tenant gone.
No timing is asserted."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from console.models import Tenant

SUMMARY_KEYS = {"p50", "p95", "p99", "max"}


@pytest.mark.django_db(transaction=True)
def test_bench_front_loop_small_run_is_clean():
    out = io.StringIO()
    args = ("--turns", "3", "--segments", "2", "--controller-ms", "10", "--actor-first-ms", "5")
    call_command(
        "bench_front_loop", *args, "--chunks", "4", "--chunk-ms", "1", "--json", stdout=out
    )
    data = json.loads(out.getvalue())
    assert data["errors"] == 0 and data["turns"] == {"loop": 3, "direct": 3}
    assert data["endings"] == ["over"] and data["steps_per_turn"] == 3  # actor, actor, over
    assert set(data["warm"]["overhead_per_step_ms"]) == SUMMARY_KEYS
    assert data["warm"]["overhead_per_step_ms"]["p50"] is not None
    assert data["cold"]["process_first_turn"] == "loop"
    assert data["cold"]["loop"]["steps"] == 3 and data["cold"]["direct"]["steps"] == 0
    assert data["after_publish"]["overhead_per_step_ms"] is not None
    assert set(data["meets_goals"]) == {"overhead", "ttfd"}
    assert not Tenant.objects.filter(name__startswith="bench-").exists()
