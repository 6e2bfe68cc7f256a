"""``bench_groups`` on a small setup: the JSON shape, the bench tenant gone afterwards. No
timing is asserted."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from console.models import Tenant

pytestmark = pytest.mark.django_db(transaction=True)


def test_bench_groups_reports_the_overhead_per_speaker_and_cleans_up():
    out = io.StringIO()
    call_command("bench_groups", "--history", "20", "--samples", "3", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["samples"] == 3 and data["members"] == 3 and data["history_messages"] == 20
    for key in ("choose_ms", "group_turn_ms", "single_turn_ms", "overhead_per_speaker_ms"):
        assert data[key]["p50"] is not None
    assert set(data["goal"]) == {"overhead_p50_ms", "met"}
    assert not Tenant.objects.filter(name__startswith="bench-").exists()
