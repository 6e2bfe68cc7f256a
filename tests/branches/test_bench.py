"""``bench_branches`` on a short history: every figure is there, the tenant it made is gone.
No timing is asserted."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from console.models import Tenant

pytestmark = pytest.mark.django_db(transaction=True)


def test_bench_branches_reports_its_figures_and_cleans_up():
    before = Tenant.objects.count()
    out = io.StringIO()
    call_command("bench_branches", "--messages", "40", "--repeat", "2", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["messages"] == 40 and data["repeat"] == 2
    for key in (
        "branch_at_end_p50_ms",
        "branch_at_middle_p50_ms",
        "branch_short_history_p50_ms",
        "history_read_before_branches_p50_ms",
        "history_read_no_branch_p50_ms",
        "history_read_in_branch_p50_ms",
    ):
        assert data[key] > 0, key
    assert Tenant.objects.count() == before
