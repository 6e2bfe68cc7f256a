"""The console's regex-script pages: the tenant page (global and preset scripts), the editor
(a script that cannot run is shown on its field, nothing saved), the character page's
section with its allow switch, and a viewer who reads but cannot write."""

from __future__ import annotations

import pytest
from django.test import Client

from console.services import ensure_console_user
from roleplay.presets.services import create_preset
from roleplay.regex_scripts.models import RegexScript
from roleplay.regex_scripts.services import create_script

pytestmark = pytest.mark.django_db


def signed_in(tenant, role: str) -> Client:
    user, _ = ensure_console_user(tenant, f"{role}-u", f"pw-{role}-123456", role)
    client = Client()
    client.force_login(user)
    return client


def form(**extra) -> dict:
    return {"scriptName": "tidy", "findRegex": "/ +/g", "replaceString": " ",
            "placement": ["1", "2"], "substituteRegex": "0", **extra}  # fmt: skip


def test_an_operator_creates_a_global_script_and_a_bad_one_is_refused(tenant):
    client = signed_in(tenant, "operator")
    refused = client.post("/console/regex-scripts/new/?scope=global",
                          form(findRegex="/(?=a/"))  # fmt: skip
    assert refused.status_code == 200
    assert "linear time" in refused.content.decode()
    assert not RegexScript.objects.exists()
    created = client.post("/console/regex-scripts/new/?scope=global", form(trimStrings="a\nb"))
    assert created.status_code == 302
    row = RegexScript.objects.get()
    assert row.scope == "global" and row.script["trimStrings"] == ["a", "b"]
    assert row.script["placement"] == [1, 2]
    page = client.get("/console/regex-scripts/").content.decode()
    assert "tidy" in page
    edited = client.post(f"/console/regex-scripts/{row.pk}/", form(scriptName="tidier"))
    assert edited.status_code == 302
    row.refresh_from_db()
    assert row.name == "tidier"
    assert client.post(f"/console/regex-scripts/{row.pk}/delete/").status_code == 302
    assert not RegexScript.objects.exists()


def test_preset_scripts_are_listed_and_added_on_the_tenant_page(tenant):
    preset = create_preset(tenant, name="Noir")
    client = signed_in(tenant, "operator")
    created = client.post(f"/console/regex-scripts/new/?scope=preset&owner={preset.pk}", form())
    assert created.status_code == 302
    assert RegexScript.objects.get().preset_id == preset.pk
    assert "Noir" in client.get("/console/regex-scripts/").content.decode()
    assert client.get("/console/regex-scripts/new/?scope=preset&owner=bad").status_code == 404


def test_the_character_page_allows_its_scripts(tenant, character):
    rule = {"scriptName": "card rule", "findRegex": "/x/", "placement": [2]}
    create_script(tenant, scope="character", character=character, script=rule)
    client = signed_in(tenant, "operator")
    page = client.get(f"/console/characters/{character.pk}/").content.decode()
    assert "card rule" in page and "do not run" in page
    allowed = client.post(f"/console/characters/{character.pk}/regex-allow/", {"allow": "1"})
    assert allowed.status_code == 302
    character.refresh_from_db()
    assert character.allow_regex
    page = client.get(f"/console/characters/{character.pk}/").content.decode()
    assert "Stop its scripts" in page


def test_a_viewer_reads_but_cannot_write(tenant, character):
    rule = {"scriptName": "g", "findRegex": "/x/", "placement": [2]}
    row = create_script(tenant, scope="global", script=rule)
    viewer = signed_in(tenant, "viewer")
    assert viewer.get("/console/regex-scripts/").status_code == 200
    assert viewer.get(f"/console/regex-scripts/{row.pk}/").status_code == 200
    assert viewer.post(f"/console/regex-scripts/{row.pk}/", form()).status_code == 403
    assert viewer.post(f"/console/characters/{character.pk}/regex-allow/",
                       {"allow": "1"}).status_code == 403  # fmt: skip
    character.refresh_from_db()
    assert not character.allow_regex
