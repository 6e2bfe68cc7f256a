"""Plan changes are audited from both doors: creating, changing and deleting a plan, and
giving one to a player, each leave one audit record naming who did it; a refusal leaves
none."""

from __future__ import annotations

from django.test import Client

from console.models import AuditAction, AuditEvent


def _events(tenant) -> list[tuple[str, str, dict]]:
    rows = AuditEvent.objects.filter(tenant=tenant, action__startswith="plan.").order_by("id")
    return [(e.action, e.username, e.details) for e in rows]


def test_rest_plan_changes_are_audited_with_the_token(api, tenant, player):
    created = api.post("/api/v1/plans/", {"name": "Free", "messages_per_day": 5}, format="json")
    plan_id = created.json()["id"]
    refused = api.post("/api/v1/plans/", {"name": "Free"}, format="json")
    assert refused.status_code == 409
    api.patch(f"/api/v1/plans/{plan_id}/", {"messages_per_day": 9}, format="json")
    put = api.put(f"/api/v1/players/{player.pk}/plan/", {"plan": plan_id}, format="json")
    assert put.status_code == 200
    api.put(f"/api/v1/players/{player.pk}/plan/", {"plan": None}, format="json")
    assert api.delete(f"/api/v1/plans/{plan_id}/").status_code == 204

    events = _events(tenant)
    assert [action for action, _, _ in events] == [
        AuditAction.PLAN_CREATED,
        AuditAction.PLAN_CHANGED,
        AuditAction.PLAN_ASSIGNED,
        AuditAction.PLAN_ASSIGNED,
        AuditAction.PLAN_DELETED,
    ]
    assert all(name.startswith("api token test (") for _, name, _ in events)
    details = [d for _, _, d in events]
    assert details[0] == {"plan": plan_id, "name": "Free", "fields": ["messages_per_day", "name"]}
    assert details[1]["fields"] == ["messages_per_day"]
    assert details[2] == {"player": str(player.pk), "plan": plan_id, "name": "Free"}
    assert details[3] == {"player": str(player.pk), "plan": None, "name": None}
    assert details[4] == {"plan": plan_id, "name": "Free", "players": 0, "routes": []}


def test_console_plan_changes_are_audited_with_the_operator(operator_user, tenant, player):
    client = Client()
    client.force_login(operator_user)
    client.post("/console/plans/", {"name": "Gold", "messages_per_day": "20"})
    from roleplay.quotas.models import Plan

    plan = Plan.objects.get(tenant=tenant, name="Gold")
    client.post(f"/console/plans/{plan.pk}/", {"name": "Gold", "messages_per_day": "5"})
    client.post("/console/plans/assign/", {"player": player.pk, "plan": str(plan.pk)})
    client.post(f"/console/plans/{plan.pk}/delete/")

    events = _events(tenant)
    assert [action for action, _, _ in events] == [
        AuditAction.PLAN_CREATED,
        AuditAction.PLAN_CHANGED,
        AuditAction.PLAN_ASSIGNED,
        AuditAction.PLAN_DELETED,
    ]
    assert {name for _, name, _ in events} == {operator_user.username}
    assert events[3][2] == {"plan": str(plan.pk), "name": "Gold", "players": 1, "routes": []}
