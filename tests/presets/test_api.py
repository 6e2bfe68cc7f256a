"""The preset API: CRUD with compare-and-set, import (JSON and multipart) with idempotency
keys, export in both formats, deletion of a preset in use, scopes and tenancy."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from roleplay.models import ModelConfig, Preset
from roleplay.presets.services import create_preset
from roleplay.prompting.default_preset import default_prompt_data
from tests.api.helpers import assert_error
from tests.presets.st_fixture import st_preset

pytestmark = pytest.mark.django_db

URL = "/api/v1/presets/"
MINIMAL = [
    {"identifier": "main", "name": "Main", "content": "Be {{char}}."},
    {"identifier": "chatHistory", "name": "History"},
    {"identifier": "userInput", "name": "Input"},
]


@pytest.fixture
def content(api_client_for, tenant):
    return api_client_for(tenant, scopes=["content"])


def test_create_list_retrieve(content):
    created = content.post(URL, {"name": "Noir", "prompts": MINIMAL}, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert set(body) == {
        "id",
        "name",
        "description",
        "prompts",
        "reasoning_in_prompt",
        "version",
        "created_at",
        "updated_at",
    }
    assert body["version"] == 1 and body["prompts"][0]["injection"] == {"position": "relative"}
    listed = content.get(URL).json()
    assert [p["name"] for p in listed["results"]] == ["Noir"]
    assert content.get(f"{URL}{body['id']}/").json()["prompts"] == body["prompts"]


def test_create_without_prompts_copies_the_shipped_default(content):
    body = content.post(URL, {"name": "Copy"}, format="json").json()
    assert body["prompts"] == default_prompt_data()


def test_invalid_prompts_are_a_422_listing_every_problem(content):
    prompts = [{"identifier": "main", "name": "Main", "role": "narrator"}, *MINIMAL[1:]]
    response = content.post(URL, {"name": "Bad", "prompts": prompts}, format="json")
    error = assert_error(response, 422, "preset_invalid")
    assert error["details"]["errors"] == [
        {
            "loc": "prompts.0.role",
            "msg": "Input should be 'system', 'user' or 'assistant'",
            "code": "illegal_role",
            "identifier": "main",
        }
    ]
    response = content.post(URL, {"name": "Bad", "prompts": MINIMAL[:1]}, format="json")
    codes = [e["code"] for e in assert_error(response, 422, "preset_invalid")["details"]["errors"]]
    assert codes == ["marker_missing", "marker_missing"]
    assert_error(
        content.post(URL, {"name": "Bad", "prompts": "x"}, format="json"), 400, "validation_error"
    )
    assert not Preset.objects.exists()


def test_bad_bodies(content):
    assert_error(
        content.post(URL, {"name": "X", "colour": 1}, format="json"), 400, "validation_error"
    )
    assert_error(
        content.post(URL, {"name": "X", "version": 3}, format="json"), 400, "validation_error"
    )
    assert_error(
        content.post(URL, {"name": "X", "description": "d" * 2001}, format="json"),
        400,
        "validation_error",
    )
    content.post(URL, {"name": "Dup", "prompts": MINIMAL}, format="json")
    assert_error(
        content.post(URL, {"name": "Dup", "prompts": MINIMAL}, format="json"), 409, "duplicate"
    )


def test_update_is_compare_and_set(content):
    body = content.post(URL, {"name": "P", "prompts": MINIMAL}, format="json").json()
    detail = f"{URL}{body['id']}/"
    assert_error(
        content.patch(detail, {"description": "no version"}, format="json"), 400, "validation_error"
    )
    first = content.patch(detail, {"description": "one", "version": 1}, format="json")
    assert first.status_code == 200 and first.json()["version"] == 2
    stale = content.patch(detail, {"description": "lost", "version": 1}, format="json")
    error = assert_error(stale, 409, "revision_conflict")
    assert error["details"]["current_version"] == 2
    assert stale.json()["current_revision"] == 2
    full = {"name": "P2", "description": "", "prompts": MINIMAL, "version": 2}
    assert content.put(detail, full, format="json").json()["version"] == 3
    assert Preset.objects.get(pk=body["id"]).description == ""


def test_delete_in_use_needs_detach(content, tenant):
    body = content.post(URL, {"name": "Used", "prompts": MINIMAL}, format="json").json()
    config = ModelConfig.objects.create(
        tenant=tenant, name="c", provider="llama_cpp", model="m", preset_id=body["id"]
    )
    detail = f"{URL}{body['id']}/"
    error = assert_error(content.delete(detail), 409, "preset_in_use")
    assert error["details"]["model_configs"] == [{"id": str(config.pk), "name": "c"}]
    assert_error(content.delete(f"{detail}?detach=maybe"), 400, "validation_error")
    assert content.delete(f"{detail}?detach=true").status_code == 204
    config.refresh_from_db()
    assert config.preset_id is None


def test_model_configs_name_a_preset_of_their_tenant(api, tenant, other_tenant):
    mine = create_preset(tenant, name="Mine", prompts=MINIMAL)
    theirs = create_preset(other_tenant, name="Theirs", prompts=MINIMAL)
    base = {"name": "cfg", "provider": "llama_cpp", "model": "m"}
    refused = api.post("/api/v1/model-configs/", {**base, "preset": str(theirs.pk)}, format="json")
    assert_error(refused, 400, "validation_error")
    created = api.post("/api/v1/model-configs/", {**base, "preset": str(mine.pk)}, format="json")
    assert created.status_code == 201 and created.json()["preset"] == str(mine.pk)
    cleared = api.patch(
        f"/api/v1/model-configs/{created.json()['id']}/", {"preset": None}, format="json"
    )
    assert cleared.json()["preset"] is None


# --- import and export --------------------------------------------------------------------


def test_import_a_sillytavern_preset_as_json(content):
    response = content.post(
        f"{URL}import", {"name": "From ST", "preset": st_preset()}, format="json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["replayed"] is False and body["preset"]["name"] == "From ST"
    report = body["report"]
    assert report["format"] == "sillytavern"
    assert {s["setting"] for s in report["model_config_settings"]} >= {"temperature", "top_p"}
    identifiers = [p["identifier"] for p in body["preset"]["prompts"]]
    assert identifiers.index("userInput") == identifiers.index("chatHistory") + 1


def test_import_a_file_named_after_it(content):
    upload = SimpleUploadedFile("Noir Tavern.json", json.dumps(st_preset()).encode())
    response = content.post(f"{URL}import", {"file": upload}, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json()["preset"]["name"] == "Noir Tavern"


def test_import_refuses_what_is_not_a_preset(content):
    bad = SimpleUploadedFile("x.json", b"\x00\xff not json")
    response = content.post(f"{URL}import", {"file": bad}, format="multipart")
    assert_error(response, 400, "preset_file_invalid")
    response = content.post(f"{URL}import", {"preset": {"prompts": 5}}, format="json")
    assert_error(response, 400, "preset_file_invalid")
    assert_error(
        content.post(f"{URL}import", {"preset": []}, format="json"), 400, "validation_error"
    )
    assert_error(
        content.post(f"{URL}import", {"preset": st_preset(), "x": 1}, format="json"),
        400,
        "validation_error",
    )
    no_name = content.post(f"{URL}import", {"preset": st_preset()}, format="json")
    assert_error(no_name, 400, "validation_error")
    assert not Preset.objects.exists()


def test_import_honours_idempotency_keys(content):
    body = {"name": "Once", "preset": st_preset()}
    first = content.post(f"{URL}import", body, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    again = content.post(f"{URL}import", body, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert first.status_code == again.status_code == 201
    assert again.json()["replayed"] is True
    assert again.json()["preset"]["id"] == first.json()["preset"]["id"]
    other = {"name": "Twice", "preset": st_preset()}
    clash = content.post(f"{URL}import", other, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert_error(clash, 409, "idempotency_conflict")
    upload = SimpleUploadedFile("a.json", json.dumps(st_preset()).encode())
    files = content.post(
        f"{URL}import", {"file": upload}, format="multipart", HTTP_IDEMPOTENCY_KEY="k2"
    )
    upload = SimpleUploadedFile("a.json", json.dumps(st_preset()).encode())
    replay = content.post(
        f"{URL}import", {"file": upload}, format="multipart", HTTP_IDEMPOTENCY_KEY="k2"
    )
    assert replay.json()["preset"]["id"] == files.json()["preset"]["id"]
    assert Preset.objects.count() == 2


def test_create_honours_idempotency_keys(content):
    body = {"name": "Once", "prompts": MINIMAL}
    first = content.post(URL, body, format="json", HTTP_IDEMPOTENCY_KEY="c1")
    again = content.post(URL, body, format="json", HTTP_IDEMPOTENCY_KEY="c1")
    assert again.json()["id"] == first.json()["id"]
    assert Preset.objects.count() == 1


def test_export_in_both_formats_and_back(content):
    body = content.post(f"{URL}import", {"name": "ST", "preset": st_preset()}, format="json")
    preset = body.json()["preset"]
    native = content.get(f"{URL}{preset['id']}/export?format=native")
    assert native.status_code == 200
    assert native["Content-Disposition"] == 'attachment; filename="ST.json"'
    assert native.json()["format"] == "roleplay-preset"
    assert native.json()["prompts"] == preset["prompts"]
    st = content.get(f"{URL}{preset['id']}/export?format=sillytavern").json()
    assert {"prompts", "prompt_order"} <= set(st)
    assert "userInput" not in [p["identifier"] for p in st["prompts"]]
    again = content.post(f"{URL}import", {"name": "Back", "preset": st}, format="json")
    assert again.json()["preset"]["prompts"] == preset["prompts"]
    assert content.get(f"{URL}{preset['id']}/export").json()["format"] == "roleplay-preset"
    assert_error(content.get(f"{URL}{preset['id']}/export?format=pdf"), 400, "validation_error")


def test_export_names_the_file_after_a_unicode_name(content, tenant):
    preset = create_preset(tenant, name="Nuit à Paris", prompts=MINIMAL)
    response = content.get(f"{URL}{preset.pk}/export")
    assert "filename*=utf-8''Nuit%20%C3%A0%20Paris.json" in response["Content-Disposition"]


# --- scopes and tenancy -------------------------------------------------------------------


def test_scopes(api_client_for, tenant):
    preset = create_preset(tenant, name="P", prompts=MINIMAL)
    play = api_client_for(tenant, scopes=["play"])
    assert_error(play.get(URL), 403, "forbidden")
    assert_error(play.post(URL, {"name": "x"}, format="json"), 403, "forbidden")
    assert_error(play.get(f"{URL}{preset.pk}/export"), 403, "forbidden")
    admin = api_client_for(tenant, scopes=["admin"])
    assert admin.get(URL).status_code == 200


def test_another_tenants_preset_is_not_found(content, other_tenant):
    theirs = create_preset(other_tenant, name="Theirs", prompts=MINIMAL)
    for method, path in [
        ("get", f"{URL}{theirs.pk}/"),
        ("patch", f"{URL}{theirs.pk}/"),
        ("delete", f"{URL}{theirs.pk}/"),
        ("get", f"{URL}{theirs.pk}/export"),
    ]:
        response = getattr(content, method)(path, {"version": 1}, format="json")
        assert_error(response, 404, "not_found")
    assert content.get(URL).json()["results"] == []
    assert Preset.objects.get(pk=theirs.pk).version == 1
