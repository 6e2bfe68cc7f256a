"""Image configs: every door's rules, tenancy, and what a deletion does to pending slots."""

from __future__ import annotations

import uuid

import pytest

from images import selectors
from images.errors import Conflict, Invalid, NotFound
from images.models import SlotStatus
from images.services.configs import delete_image_config, update_image_config
from images.services.slots import reserve_slot
from tests.images.conftest import make_config

pytestmark = pytest.mark.django_db


def code_of(call) -> tuple[str, str]:
    with pytest.raises(Invalid) as caught:
        call()
    return caught.value.code, caught.value.details["field"]


def test_a_config_is_made_with_defaults(tenant, image_config):
    assert (image_config.moderation_mode, image_config.allowed_classifications) == (
        "backend",
        ["SFW"],
    )
    assert selectors.get_image_config(tenant, "scripted") == image_config
    assert selectors.get_image_config(tenant, str(image_config.pk).upper()) == image_config


def test_a_key_is_never_stored_only_its_variables_name(tenant, images_llm):
    for value in ("sk-abc123", "r8_" + "a" * 30, "x9f8g7h6j5k4l3m2n1b0v9c8"):
        assert code_of(lambda v=value: make_config(tenant, images_llm, api_key_env=v)) == (
            "api_key_not_allowed",
            "api_key_env",
        )
    config = make_config(tenant, images_llm, api_key_env="  IMAGE_API_KEY ")
    assert config.api_key_env == "IMAGE_API_KEY"


def test_automatic1111_cannot_claim_backend_evidence(tenant, images_llm):
    found = code_of(lambda: make_config(tenant, images_llm, provider="automatic1111"))
    assert found == ("invalid_combination", "moderation_mode")


def test_the_deadline_must_outlive_the_timeout(tenant, image_config):
    found = code_of(
        lambda: update_image_config(image_config, timeout_seconds=20, slot_deadline_seconds=20)
    )
    assert found == ("invalid_combination", "slot_deadline_seconds")
    update_image_config(image_config, timeout_seconds=20, slot_deadline_seconds=21)


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("default_count", 9, "out_of_range"),
        ("default_count", 0, "out_of_range"),
        ("default_width", 63, "out_of_range"),
        ("default_width", 8193, "out_of_range"),
        ("default_width", "512", "invalid_type"),
        ("timeout_seconds", True, "invalid_type"),
        ("base_url", "ftp://x", "invalid_url"),
        ("base_url", "http://u:p@x", "invalid_url"),
        ("base_url", "", "field_required"),
        ("provider", "dalle", "invalid_choice"),
        ("moderation_mode", None, "invalid_choice"),
        ("allowed_classifications", [], "invalid_type"),
        ("allowed_classifications", ["SFW", "SFW"], "duplicate"),
        ("allowed_classifications", ["\x00"], "invalid_text"),
        ("name", "x" * 101, "too_long"),
        ("name", "\ud800", "invalid_text"),
        ("colour", "red", "unknown_field"),
    ],
)
def test_each_field_is_refused_naming_itself(image_config, field, value, code):
    got_code, got_field = code_of(lambda: update_image_config(image_config, **{field: value}))
    assert got_code == code and got_field.split(".")[0] == field


def test_a_name_is_unique_per_tenant(tenant, other_tenant, images_llm, image_config):
    with pytest.raises(Conflict):
        make_config(tenant, images_llm, name="scripted")
    make_config(other_tenant, images_llm, name="scripted")  # another tenant may


def test_another_tenants_config_is_not_found(tenant, other_tenant, images_llm):
    theirs = make_config(other_tenant, images_llm, name="theirs")
    for reference in (str(theirs.pk), "theirs", "nothing", "\x00"):
        with pytest.raises(NotFound):
            selectors.get_image_config(tenant, reference)


def test_deleting_a_config_ends_its_pending_slots(tenant, image_config):
    slot = reserve_slot(tenant, uuid.uuid4(), uuid.uuid4(), 0, "a key", image_config,
                        enqueue=False)  # fmt: skip
    delete_image_config(image_config)
    slot.refresh_from_db()
    assert (slot.status, slot.code, slot.config) == (SlotStatus.FAILED, "config_deleted", None)
