"""The quota figures at a small size: the counters hold every admission and charge once."""

from __future__ import annotations

import pytest

from console.models import Tenant
from roleplay.quotas.bench import quota_figures


@pytest.mark.django_db(transaction=True)
def test_quota_figures_count_every_admission_and_charge_exactly_once():
    figures = quota_figures(8, turns=5, tokens=11, samples=50, shared_limit=3)
    assert figures["errors"] == []
    assert figures["admissions"] == 8 * 5
    assert (figures["lost"], figures["double_counted"]) == (0, 0)
    assert figures["shared_player"] == {"limit": 3, "tries": 8, "admitted": 3, "counter": 3}
    assert (
        figures["check_us"]["p50"] > 0 and figures["check_us"]["p95"] >= figures["check_us"]["p50"]
    )
    assert not Tenant.objects.filter(name__startswith="bench-quota-").exists()
