"""The console's plans page and the player's usage page."""

from __future__ import annotations

from django.test import Client

from roleplay.quotas.models import Plan, PlanAssignment, PlanDefault


def _console(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_operator_creates_edits_gives_and_deletes_a_plan(operator_user, tenant, player):
    client = _console(operator_user)
    assert client.get("/console/plans/").status_code == 200
    created = client.post(
        "/console/plans/",
        {"name": "Free", "messages_per_day": "20", "tokens_per_day": "", "default_for": ["open"]},
    )
    assert created.status_code == 302, created.content[:500]
    plan = Plan.objects.get(tenant=tenant, name="Free")
    assert (plan.messages_per_day, plan.tokens_per_day) == (20, None)
    assert PlanDefault.objects.get(tenant=tenant, route="open").plan == plan
    page = client.get("/console/plans/").content.decode()
    assert "Free" in page and "open: Free" in page
    edited = client.post(f"/console/plans/{plan.pk}/", {"name": "Free", "messages_per_day": "5"})
    assert edited.status_code == 302
    plan.refresh_from_db()
    assert plan.messages_per_day == 5 and not PlanDefault.objects.filter(plan=plan).exists()
    bad = client.post(f"/console/plans/{plan.pk}/", {"name": "", "messages_per_day": "-3"})
    assert bad.status_code == 200
    plan.refresh_from_db()
    assert plan.messages_per_day == 5
    given = client.post("/console/plans/assign/", {"player": player.pk, "plan": str(plan.pk)})
    assert given.status_code == 302
    assert PlanAssignment.objects.get(player=player).plan == plan
    assert client.post(f"/console/plans/{plan.pk}/delete/").status_code == 302
    assert not Plan.objects.filter(pk=plan.pk).exists()


def test_a_viewer_reads_the_plans_page_but_cannot_write(tenant):
    from console.services import ensure_console_user

    viewer, _ = ensure_console_user(tenant, "viewer", "pw-viewer-123", "viewer")
    client = _console(viewer)
    assert client.get("/console/plans/").status_code == 200
    assert client.post("/console/plans/", {"name": "X"}).status_code == 403
    assert not Plan.objects.exists()


def test_another_tenant_s_plan_page_is_a_404(operator_user, other_tenant):
    from roleplay.quotas import services

    theirs = services.create_plan(other_tenant, name="Theirs")
    client = _console(operator_user)
    assert client.get(f"/console/plans/{theirs.pk}/").status_code == 404
    assert client.post(f"/console/plans/{theirs.pk}/delete/").status_code == 404
    assert Plan.objects.filter(pk=theirs.pk).exists()


def test_the_player_sees_what_they_used_of_their_plan(player_client, app_tenant):
    from roleplay.quotas import services
    from roleplay.quotas.admission import admit_player

    player = player_client.account.player
    plan = services.create_plan(app_tenant, name="Starter", messages_per_day=100)
    services.set_default(app_tenant, "operator", plan)  # the account's route
    for _ in range(41):
        admit_player(app_tenant.pk, player.pk)
    page = player_client.get("/app/usage/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "today: 41 of 100 messages" in text
    assert "today: 0 tokens (no limit)" in text and "Starter" in text
