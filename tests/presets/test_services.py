"""Preset writes and reads: validation on every save, compare-and-set on ``version``,
deletion of a preset in use, and the effective preset of a model config."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from roleplay.errors import Duplicate, FieldErrors, NotFound
from roleplay.llm.configs import services as model_configs
from roleplay.models import ModelConfig, Preset
from roleplay.presets.selectors import effective_preset, load_preset, preset_list, preset_users
from roleplay.presets.services import (
    PresetInUse,
    PresetVersionConflict,
    create_preset,
    delete_preset,
    update_preset,
)
from roleplay.prompting.default_preset import default_preset, default_prompt_data
from roleplay.prompting.presets import NamedPromptMissing, PresetInvalid

pytestmark = pytest.mark.django_db

MINIMAL = [
    {"identifier": "main", "name": "Main", "content": "Be {{char}}."},
    {"identifier": "chatHistory", "name": "History"},
    {"identifier": "userInput", "name": "Input"},
]


def config(tenant, name="cfg", **fields):
    return model_configs.create_model_config(
        tenant, name=name, provider="llama_cpp", model="m", **fields
    )


def test_a_new_preset_starts_from_the_shipped_default(tenant):
    preset = create_preset(tenant, name="Mine")
    assert preset.version == 1
    assert preset.prompts == [dict(p) for p in default_prompt_data()]
    loaded = load_preset(preset)
    assert loaded.name == "Mine" and loaded.id == str(preset.pk) and loaded.version == 1
    assert loaded.named("director").content == default_preset().named("director").content


def test_prompts_are_stored_in_their_full_form(tenant):
    preset = create_preset(tenant, name="Small", prompts=MINIMAL)
    preset.refresh_from_db()
    assert preset.prompts[0] == {
        "identifier": "main",
        "name": "Main",
        "role": "system",
        "content": "Be {{char}}.",
        "enabled": True,
        "injection": {"position": "relative"},
        "forbid_overrides": False,
    }


def test_a_preset_that_breaks_a_rule_is_not_saved(tenant):
    with pytest.raises(PresetInvalid) as info:
        create_preset(tenant, name="Bad", prompts=MINIMAL[:1])
    assert {e["code"] for e in info.value.details["errors"]} == {"marker_missing"}
    assert not Preset.objects.filter(tenant=tenant).exists()


def test_field_rules_and_names_unique_per_tenant(tenant, other_tenant):
    with pytest.raises(FieldErrors) as info:
        create_preset(tenant, name="", prompts=MINIMAL)
    assert "name" in info.value.by_field
    with pytest.raises(FieldErrors) as info:
        create_preset(tenant, name="Long", description="d" * 2001, prompts=MINIMAL)
    assert "description" in info.value.by_field
    with pytest.raises(FieldErrors):
        create_preset(tenant, name="nul\x00", prompts=MINIMAL)
    create_preset(tenant, name="Same", prompts=MINIMAL)
    with pytest.raises(Duplicate) as info:
        create_preset(tenant, name="Same", prompts=MINIMAL)
    assert info.value.details == {"field": "name"}
    assert create_preset(other_tenant, name="Same", prompts=MINIMAL).name == "Same"


def test_update_moves_the_version_and_refuses_a_stale_one(tenant):
    preset = create_preset(tenant, name="P", prompts=MINIMAL)
    updated = update_preset(preset, version=1, description="first edit")
    assert updated.version == 2
    stale = Preset.objects.get(pk=preset.pk)
    stale.version = 1  # what a second editor read before the first edit
    with pytest.raises(PresetVersionConflict) as info:
        update_preset(stale, version=1, name="Lost edit")
    error = info.value
    assert (error.code, error.kind) == ("revision_conflict", "conflict")
    assert error.details["current_version"] == 2 and error.details["current_revision"] == 2
    row = Preset.objects.get(pk=preset.pk)
    assert (row.name, row.description, row.version) == ("P", "first edit", 2)


def test_update_validates_before_writing(tenant):
    preset = create_preset(tenant, name="P", prompts=MINIMAL)
    other = create_preset(tenant, name="Q", prompts=MINIMAL)
    with pytest.raises(PresetInvalid):
        update_preset(preset, version=1, prompts=[{"identifier": "x", "name": "x"}])
    with pytest.raises(Duplicate):
        update_preset(preset, version=1, name="Q")
    with pytest.raises(FieldErrors):
        update_preset(preset, version=1, colour="red")
    assert Preset.objects.get(pk=preset.pk).version == 1
    assert other.version == 1


def test_update_of_a_deleted_preset_is_not_found(tenant):
    preset = create_preset(tenant, name="P", prompts=MINIMAL)
    Preset.objects.filter(pk=preset.pk).delete()
    with pytest.raises(NotFound):
        update_preset(preset, version=1, description="x")


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_saves_of_one_version_make_one_winner(tenant):
    preset = create_preset(tenant, name="Race", prompts=MINIMAL)
    barrier = threading.Barrier(2)
    outcomes = []

    def save(label):
        try:
            row = Preset.objects.get(pk=preset.pk)
            barrier.wait()
            update_preset(row, version=1, description=label)
            outcomes.append("saved")
        except PresetVersionConflict:
            outcomes.append("conflict")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=save, args=(f"editor {i}",)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict", "saved"]
    assert Preset.objects.get(pk=preset.pk).version == 2


def test_a_preset_in_use_is_deleted_only_with_detach(tenant):
    preset = create_preset(tenant, name="Used", prompts=MINIMAL)
    cfg = config(tenant, preset=preset)
    with pytest.raises(PresetInUse) as info:
        delete_preset(preset)
    assert info.value.code == "preset_in_use"
    assert info.value.details["model_configs"] == [{"id": str(cfg.pk), "name": "cfg"}]
    assert Preset.objects.filter(pk=preset.pk).exists()
    assert delete_preset(preset, detach=True) == 1
    assert not Preset.objects.filter(pk=preset.pk).exists()
    cfg.refresh_from_db()
    assert cfg.preset is None
    assert effective_preset(cfg) is default_preset()
    unused = create_preset(tenant, name="Unused", prompts=MINIMAL)
    assert delete_preset(unused) == 0
    with pytest.raises(NotFound):
        delete_preset(unused)


def test_a_model_config_may_only_use_its_tenants_preset(tenant, other_tenant):
    theirs = create_preset(other_tenant, name="Theirs", prompts=MINIMAL)
    with pytest.raises(FieldErrors) as info:
        config(tenant, preset=theirs)
    assert info.value.by_field == {"preset": ["not found"]}
    mine = create_preset(tenant, name="Mine", prompts=MINIMAL)
    cfg = config(tenant, name="c2")
    model_configs.update_model_config(cfg, preset=mine)
    assert ModelConfig.objects.get(pk=cfg.pk).preset_id == mine.pk


def test_the_effective_preset(tenant, django_assert_num_queries):
    assert effective_preset(None) is default_preset()
    plain = config(tenant, name="plain")
    assert effective_preset(plain) is default_preset()
    preset = create_preset(tenant, name="Mine", prompts=MINIMAL)
    cfg = config(tenant, name="with", preset=preset)
    loaded = effective_preset(ModelConfig.objects.get(pk=cfg.pk))
    assert loaded.name == "Mine" and [p.identifier for p in loaded.prompts][0] == "main"
    fetched = ModelConfig.objects.select_related("preset").get(pk=cfg.pk)
    with django_assert_num_queries(0):
        assert effective_preset(fetched) == loaded
    # A lookup in the preset names it when the prompt is missing.
    with pytest.raises(NamedPromptMissing) as info:
        loaded.named("auto_reply")
    assert info.value.details["preset_id"] == str(preset.pk)


def test_a_saved_version_is_loaded_again(tenant):
    preset = create_preset(tenant, name="Mine", prompts=MINIMAL)
    first = load_preset(preset)
    assert load_preset(Preset.objects.get(pk=preset.pk)) is first
    prompts = [{**MINIMAL[0], "content": "Changed."}, *MINIMAL[1:]]
    updated = update_preset(Preset.objects.get(pk=preset.pk), version=1, prompts=prompts)
    assert load_preset(updated).prompt("main").content == "Changed."


def test_a_stored_preset_that_breaks_a_rule_fails_on_load(tenant):
    preset = create_preset(tenant, name="Mine", prompts=MINIMAL)
    Preset.objects.filter(pk=preset.pk).update(prompts=MINIMAL[:1], version=7)
    with pytest.raises(PresetInvalid):
        load_preset(Preset.objects.get(pk=preset.pk))


def test_list_and_users(tenant, other_tenant):
    a = create_preset(tenant, name="A", prompts=MINIMAL)
    create_preset(tenant, name="B", prompts=MINIMAL)
    create_preset(other_tenant, name="C", prompts=MINIMAL)
    config(tenant, name="x", preset=a)
    config(tenant, name="y", preset=a)
    rows = list(preset_list(tenant))
    assert [(r.name, r.model_config_count) for r in rows] == [("A", 2), ("B", 0)]
    assert [c.name for c in preset_users(a)] == ["x", "y"]


def test_import_names_the_preset_and_validates_it(tenant):
    from roleplay.presets.selectors import export_preset
    from roleplay.presets.services import import_preset
    from tests.presets.st_fixture import st_preset

    preset, report = import_preset(tenant, st_preset(), filename="uploads/Noir v2.json")
    assert preset.name == "Noir v2" and report["format"] == "sillytavern"
    assert load_preset(preset).prompt("userInput") is not None
    native, notes = export_preset(preset, "native")
    assert notes == []
    again, report = import_preset(tenant, native, name="Copy")
    assert (again.name, again.prompts, report) == ("Copy", preset.prompts, {"format": "native"})
    with pytest.raises(FieldErrors) as info:
        import_preset(tenant, {"prompts": []})
    assert "name" in info.value.by_field
    bad = {"format": "roleplay-preset", "prompts": [{"identifier": "x", "name": "x"}]}
    with pytest.raises(PresetInvalid):
        import_preset(tenant, bad, name="Bad")
