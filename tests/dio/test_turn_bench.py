"""The DIO part of the workflow bench (``roleplay.dio.bench.measure``) runs on a throwaway
tenant, finds the active prompt it measures, counts no query for DIO off, and leaves
nothing behind. Its times are reported, never asserted."""

from __future__ import annotations

import pytest

from console.models import Tenant
from roleplay.dio import bench

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_dio_bench_reports_its_figures_and_cleans_up():
    before = Tenant.objects.count()
    report = bench.measure(samples=5, warmup=1)
    assert report["backend"] == "in_process" and report["samples"] == 5
    assert report["on"]["found"] is True and report["on"]["status"] == "applied"
    assert report["off"]["extra_queries"] == 0 and report["met"]["off_extra_queries"] is True
    assert set(report["on"]["added_ms"]) == {"p50", "p95"}
    assert report["goals"] == {"on_added_p50_ms": 1.0, "off_extra_queries": 0}
    assert Tenant.objects.count() == before
