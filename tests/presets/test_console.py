"""The preset console pages: list, new, import with its report, the editor (order, toggles,
errors next to their prompt, a stale version kept as edited), delete, export, and the model
config form's preset choice."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from roleplay.models import ModelConfig, Preset
from roleplay.presets.forms import EditorRows
from roleplay.presets.services import create_preset, update_preset
from tests.presets.st_fixture import st_preset

pytestmark = pytest.mark.django_db

MINIMAL = [
    {"identifier": "main", "name": "Main", "content": "Be {{char}}."},
    {"identifier": "rules", "name": "Rules", "content": "Stay in the scene."},
    {"identifier": "chatHistory", "name": "History"},
    {"identifier": "userInput", "name": "Input"},
]


@pytest.fixture
def preset(tenant):
    return create_preset(tenant, name="Noir", prompts=MINIMAL)


def page_post(preset_obj: Preset, *, order=None, version=None, **changes) -> dict:
    """What the editor posts: its fields in page order, optionally reordered/changed."""
    rows = EditorRows.from_prompts(preset_obj.prompts).rows
    if order is not None:
        rows = [rows[i] for i in order]
    data = {"name": preset_obj.name, "description": preset_obj.description}
    data["version"] = str(preset_obj.version if version is None else version)
    for row in rows:
        prefix = f"p-{row.key}-"
        values = {
            "identifier": row.identifier,
            "name": row.name,
            "role": row.role,
            "content": row.content,
            "position": row.position,
            "depth": row.depth,
            "order": row.order,
        }
        values.update(changes.get(row.identifier, {}))
        enabled = values.pop("enabled", row.enabled)
        data.update({prefix + key: value for key, value in values.items()})
        if enabled:
            data[prefix + "enabled"] = "on"
    return data


def identifiers(preset_obj) -> list[str]:
    preset_obj.refresh_from_db()
    return [p["identifier"] for p in preset_obj.prompts]


def test_the_list_shows_the_default_and_the_tenants_presets(operator_client, preset, other_tenant):
    create_preset(other_tenant, name="Zforeign preset", prompts=MINIMAL)
    page = operator_client.get("/console/presets/").content.decode()
    assert "Noir" in page and "Shipped default" in page and "Zforeign" not in page
    nav = operator_client.get("/console/").content.decode()
    assert 'href="/console/presets/"' in nav


def test_a_new_preset_from_the_default_or_a_copy(operator_client, preset):
    response = operator_client.post(
        "/console/presets/new/", {"name": "Fresh", "description": "", "start_from": "default"}
    )
    fresh = Preset.objects.get(name="Fresh")
    assert response.status_code == 302 and response["Location"] == f"/console/presets/{fresh.pk}/"
    assert any(p["name"] == "director" for p in fresh.prompts)
    operator_client.post("/console/presets/new/", {"name": "Copy", "start_from": str(preset.pk)})
    assert Preset.objects.get(name="Copy").prompts == preset.prompts
    taken = operator_client.post("/console/presets/new/", {"name": "Noir", "start_from": "default"})
    assert taken.status_code == 200 and "already exists" in taken.content.decode()


def test_the_editor_saves_order_toggles_and_edits(operator_client, preset):
    data = page_post(
        preset, order=[1, 0, 2, 3], rules={"enabled": False, "content": "Short replies."}
    )
    data["action"] = "save"
    response = operator_client.post(f"/console/presets/{preset.pk}/", data)
    assert response.status_code == 302
    assert identifiers(preset) == ["rules", "main", "chatHistory", "userInput"]
    rules = preset.prompts[0]
    assert (rules["enabled"], rules["content"]) == (False, "Short replies.")
    assert preset.version == 2
    page = operator_client.get(f"/console/presets/{preset.pk}/").content.decode()
    assert page.index('data-identifier="rules"') < page.index('data-identifier="main"')
    assert 'id="preset-preview"' in page  # the preview panel (tests/presets/test_preview.py)


def test_the_editor_switches_reasoning_in_prompt(operator_client, preset):
    data = {**page_post(preset), "action": "save", "reasoning_in_prompt": "on"}
    assert operator_client.post(f"/console/presets/{preset.pk}/", data).status_code == 302
    preset.refresh_from_db()
    assert preset.reasoning_in_prompt is True
    page = operator_client.get(f"/console/presets/{preset.pk}/").content.decode()
    assert 'name="reasoning_in_prompt" checked' in page
    data = {**page_post(preset), "action": "save"}  # an unchecked box sends nothing
    operator_client.post(f"/console/presets/{preset.pk}/", data)
    preset.refresh_from_db()
    assert preset.reasoning_in_prompt is False


def test_an_in_chat_prompt_takes_depth_and_order(operator_client, preset):
    data = page_post(preset, rules={"position": "at_depth", "depth": "2", "order": "90"})
    operator_client.post(f"/console/presets/{preset.pk}/", {**data, "action": "save"})
    preset.refresh_from_db()
    assert preset.prompts[1]["injection"] == {"position": "at_depth", "depth": 2, "order": 90}


def test_errors_are_shown_next_to_their_prompt_and_nothing_is_saved(operator_client, preset):
    def errors_of(page, key):
        found = re.search(rf'id="prompt-{key}-errors"[^>]*>(.*?)</ul>', page, re.S)
        return found.group(1) if found else ""

    data = page_post(preset, order=[0, 1, 3, 2])
    data["p-r1-identifier"] = "bad id!"
    response = operator_client.post(f"/console/presets/{preset.pk}/", {**data, "action": "save"})
    assert response.status_code == 200
    page = response.content.decode()
    # Fields first: the prompt whose identifier is refused says so, and the edit is kept.
    assert "String should match pattern" in errors_of(page, "r1")
    assert 'value="bad id!"' in page
    # Then the rules across prompts, on the prompt they concern.
    data["p-r1-identifier"] = "rules"
    page = operator_client.post(f"/console/presets/{preset.pk}/", {**data, "action": "save"})
    assert "userInput must come after chatHistory" in errors_of(page.content.decode(), "r3")
    assert errors_of(page.content.decode(), "r1") == ""
    assert preset.version == Preset.objects.get(pk=preset.pk).version == 1


def test_a_stale_version_keeps_the_edits_and_can_save_over(operator_client, preset):
    data = page_post(preset, main={"content": "My edit."})
    update_preset(Preset.objects.get(pk=preset.pk), version=1, description="theirs")
    response = operator_client.post(f"/console/presets/{preset.pk}/", {**data, "action": "save"})
    page = response.content.decode()
    assert response.status_code == 200 and 'id="preset-conflict"' in page
    assert 'data-current-version="2"' in page and "My edit." in page
    assert Preset.objects.get(pk=preset.pk).prompts[0]["content"] == "Be {{char}}."
    data["current_version"] = "2"
    saved = operator_client.post(f"/console/presets/{preset.pk}/", {**data, "action": "overwrite"})
    assert saved.status_code == 302
    row = Preset.objects.get(pk=preset.pk)
    assert (row.version, row.prompts[0]["content"]) == (3, "My edit.")


def test_moves_additions_and_removals_without_javascript(operator_client, preset):
    data = page_post(preset)
    page = operator_client.post(f"/console/presets/{preset.pk}/", {**data, "action": "down:r0"})
    text = page.content.decode()
    assert text.index('data-identifier="rules"') < text.index('data-identifier="main"')
    assert 'id="preset-unsaved"' in text and "Unsaved changes" in text
    added = operator_client.post(f"/console/presets/{preset.pk}/", {**data, "action": "add"})
    assert added.content.decode().count("data-identifier=") == 5
    removed = operator_client.post(
        f"/console/presets/{preset.pk}/", {**data, "action": "remove:r1"}
    )
    assert 'data-identifier="rules"' not in removed.content.decode()
    assert identifiers(preset) == ["main", "rules", "chatHistory", "userInput"]


def test_a_viewer_reads_but_cannot_save(viewer_client, preset):
    page = viewer_client.get(f"/console/presets/{preset.pk}/").content.decode()
    assert "Read only" in page and 'id="preset-save"' not in page
    assert "<fieldset disabled" in page
    response = viewer_client.post(
        f"/console/presets/{preset.pk}/", {**page_post(preset), "action": "save"}
    )
    assert response.status_code == 403
    assert viewer_client.get("/console/presets/new/").status_code == 403


def test_import_shows_its_report_once(operator_client):
    upload = SimpleUploadedFile("Tavern Noir.json", json.dumps(st_preset()).encode())
    response = operator_client.post("/console/presets/import/", {"file": upload})
    imported = Preset.objects.get(name="Tavern Noir")
    assert response["Location"] == f"/console/presets/{imported.pk}/"
    page = operator_client.get(response["Location"]).content.decode()
    assert 'id="preset-report"' in page and "temperature" in page and "max_output_tokens" in page
    assert 'id="preset-report"' not in operator_client.get(response["Location"]).content.decode()


def test_import_errors_are_shown(operator_client):
    bad = SimpleUploadedFile("x.json", b"not json")
    page = operator_client.post("/console/presets/import/", {"file": bad}).content.decode()
    assert "not JSON" in page
    invalid = {"format": "roleplay-preset", "prompts": [{"identifier": "x", "name": "x"}]}
    upload = SimpleUploadedFile("x.json", json.dumps(invalid).encode())
    page = operator_client.post("/console/presets/import/", {"file": upload}).content.decode()
    assert 'id="preset-import-problems"' in page and "chatHistory marker is missing" in page
    assert not Preset.objects.exists()


def test_delete_moves_the_users_to_the_default(operator_client, preset, tenant):
    config = ModelConfig.objects.create(
        tenant=tenant, name="cfg", provider="llama_cpp", model="m", preset=preset
    )
    confirm = operator_client.get(f"/console/presets/{preset.pk}/delete/").content.decode()
    assert "cfg" in confirm and "shipped default" in confirm
    assert operator_client.post(f"/console/presets/{preset.pk}/delete/").status_code == 302
    assert not Preset.objects.filter(pk=preset.pk).exists()
    config.refresh_from_db()
    assert config.preset is None


def test_export_downloads(viewer_client, preset):
    response = viewer_client.get(f"/console/presets/{preset.pk}/export/?format=sillytavern")
    assert response["Content-Disposition"] == 'attachment; filename="Noir.json"'
    assert {"prompts", "prompt_order"} <= set(json.loads(response.content))
    assert viewer_client.get(f"/console/presets/{preset.pk}/export/?format=x").status_code == 400


def test_the_shipped_default_is_shown_read_only(operator_client):
    page = operator_client.get("/console/presets/default/").content.decode()
    assert "Copy into a new preset" in page and 'id="preset-save"' not in page
    assert "specialist_direct_scene" in page


def test_the_model_config_form_offers_the_tenants_presets(
    tenant, other_tenant, preset, console_client
):
    create_preset(other_tenant, name="Theirs", prompts=MINIMAL)
    admin = console_client(tenant, "admin")
    page = admin.get("/console/models/new/").content.decode()
    assert "Noir" in page and "Theirs" not in page and "Shipped default preset" in page
    response = admin.post(
        "/console/models/new/",
        {
            "name": "local",
            "provider": "llama_cpp",
            "model": "m",
            "context_limit": 4096,
            "max_output_tokens": 256,
            "temperature": 0.8,
            "top_p": 1,
            "timeout_ms": 60000,
            "extra": "{}",
            "preset": str(preset.pk),
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert ModelConfig.objects.get(name="local").preset_id == preset.pk
