"""Plans over the REST API and a player's plan: CRUD, coded refusals, tenancy."""

from __future__ import annotations

from roleplay.quotas.models import Plan, PlanDefault


def test_plans_are_created_changed_and_deleted(api, tenant, model_config):
    created = api.post(
        "/api/v1/plans/",
        {"name": "Free", "messages_per_day": 50, "tokens_per_month": 100000,
         "model_configs": [str(model_config.pk)], "features": ["images"],
         "default_for": ["open", "invite"]},
        format="json",
    )  # fmt: skip
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["default_for"] == ["invite", "open"] and body["tokens_per_day"] is None
    assert body["model_configs"] == [str(model_config.pk)]
    plan_id = body["id"]
    changed = api.patch(f"/api/v1/plans/{plan_id}/", {"messages_per_day": None}, format="json")
    assert changed.status_code == 200 and changed.json()["messages_per_day"] is None
    taken = api.post("/api/v1/plans/", {"name": "Free"}, format="json")
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "plan_name_taken"
    in_use = api.delete(f"/api/v1/plans/{plan_id}/")
    assert in_use.status_code == 409
    assert in_use.json()["error"]["code"] == "plan_in_use"
    assert in_use.json()["error"]["details"]["routes"] == ["invite", "open"]
    assert api.delete(f"/api/v1/plans/{plan_id}/?release=true").status_code == 204
    assert not Plan.objects.exists() and not PlanDefault.objects.exists()


def test_bad_limits_and_foreign_model_configs_are_400_and_change_nothing(
    api, other_tenant, make_plan
):
    from roleplay.models import ModelConfig

    foreign = ModelConfig.objects.create(tenant=other_tenant, name="x", provider="llama_cpp")
    for body in (
        {"name": "A", "messages_per_day": -1},
        {"name": "A", "messages_per_day": "ten"},
        {"name": "A", "features": ["time-travel"]},
        {"name": "A", "default_for": ["everyone"]},
        {"name": "A", "model_configs": [str(foreign.pk)]},
        {"name": "A", "unknown": 1},
    ):
        answer = api.post("/api/v1/plans/", body, format="json")
        assert answer.status_code == 400, (body, answer.content)
    assert not Plan.objects.exists()


def test_a_player_s_plan_and_usage(api, api_client_for, tenant, player, make_plan):
    play_api = api_client_for(tenant, scopes=["play"])
    plan = make_plan("Gold", messages_per_day=100)
    path = f"/api/v1/players/{player.pk}/plan/"
    before = api.get(path).json()
    assert before["plan"] is None and before["applies"] is None
    assert before["messages_today"]["text"] == "today: 0 messages (no limit)"
    assert play_api.put(path, {"plan": str(plan.pk)}, format="json").status_code == 403
    given = api.put(path, {"plan": str(plan.pk)}, format="json")
    assert given.status_code == 200, given.content
    assert given.json()["applies"] == {"id": str(plan.pk), "name": "Gold"}
    assert given.json()["messages_today"]["text"] == "today: 0 of 100 messages"
    back = api.put(path, {"plan": None}, format="json")
    assert back.json()["plan"] is None


def test_another_tenant_s_plan_or_player_is_a_404(api, other_tenant, tenant, player):
    from console.models import Player
    from roleplay.quotas import services

    theirs = services.create_plan(other_tenant, name="Theirs")
    their_player = Player.objects.create(tenant=other_tenant, external_id="x")
    assert api.get(f"/api/v1/plans/{theirs.pk}/").status_code == 404
    assert api.delete(f"/api/v1/plans/{theirs.pk}/").status_code == 404
    assert api.get(f"/api/v1/players/{their_player.pk}/plan/").status_code == 404
    answer = api.put(f"/api/v1/players/{player.pk}/plan/", {"plan": str(theirs.pk)}, format="json")
    assert answer.status_code == 400
    assert Plan.objects.filter(tenant=tenant).count() == 0
