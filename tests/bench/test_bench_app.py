"""``bench_app`` on a small setup: the JSON shape, every figure, the bench tenant gone
afterwards. No timing is asserted (and no fresh process: ``--no-cold``)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from console.models import Tenant

pytestmark = pytest.mark.django_db(transaction=True)


def test_bench_app_reports_every_figure_and_cleans_up(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.PLAYER_APP_TENANT = ""  # the bench names its tenant here; undone after the test
    out = io.StringIO()
    call_command(
        "bench_app",
        *("--characters", "60", "--conversations", "12", "--samples", "3"),
        *("--no-cold", "--json", "--figure", "library_search", "--figure", "my_chats"),
        stdout=out,
    )
    data = json.loads(out.getvalue())
    assert set(data["figures"]) == {"library_search", "my_chats"}
    for figure in data["figures"].values():
        assert figure["warm_ms"]["n"] == 3 and figure["warm_ms"]["p50"] is not None
        assert figure["cold_ms"] is None and figure["ratio_to_baseline_p50"] is not None
    assert data["figures"]["library_search"]["characters"] == 60
    assert data["figures"]["my_chats"]["conversations"] == 12
    assert set(data["goals_met"]) == {"library_search", "my_chats"}
    assert not Tenant.objects.filter(name__startswith="bench-").exists()


def test_bench_app_names_the_quota_figure():
    from roleplay.bench.app import FIGURES, quota_check

    assert FIGURES["quota_check"] is quota_check  # its figures: tests/quotas (bench_quota)
