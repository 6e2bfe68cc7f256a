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
    assert "malformed" in refused.content.decode()
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


def _upload(client, url: str, content: bytes, name: str = "regex.json"):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return client.post(url, {"file": SimpleUploadedFile(name, content, "application/json")})


def test_a_regex_file_is_imported_from_the_console_and_what_cannot_run_is_named(tenant):
    import json

    client = signed_in(tenant, "operator")
    assert client.get("/console/regex-scripts/import/?scope=global").status_code == 200
    scripts = [
        {"scriptName": "look", "findRegex": "/(?<=\\*)\\w+(?=\\*)/g", "replaceString": "x"},
        {"scriptName": "broken", "findRegex": "/(?=a/", "replaceString": ""},
        {"scriptName": "plain", "findRegex": "/a/g", "replaceString": "b"},
    ]
    done = _upload(client, "/console/regex-scripts/import/?scope=global",
                   json.dumps(scripts).encode("utf-8-sig"))  # fmt: skip
    assert done.status_code == 302 and done["Location"] == "/console/regex-scripts/"
    assert [r.name for r in RegexScript.objects.order_by("position")] == ["look", "plain"]
    page = client.get("/console/regex-scripts/").content.decode()
    assert "2 regex scripts imported." in page and "Not imported: “broken”" in page
    preset = create_preset(tenant, name="Noir")
    url = f"/console/regex-scripts/import/?scope=preset&owner={preset.pk}"
    assert _upload(client, url, json.dumps(scripts[2]).encode()).status_code == 302
    assert RegexScript.objects.get(preset=preset).name == "plain"


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b"\xff\xfe\x00",
        b"[" * 100_000,
        b"[]",
        b'[{"scriptName": "b", "findRegex": "/(?=/"}]',
        b'"\\ud800"',
        b"{}",
    ],
)
def test_a_bad_regex_file_is_shown_on_the_form_and_changes_nothing(tenant, content):
    client = signed_in(tenant, "operator")
    refused = _upload(client, "/console/regex-scripts/import/?scope=global", content)
    assert refused.status_code == 200 and "errorlist" in refused.content.decode()
    assert not RegexScript.objects.exists()


def test_a_viewer_cannot_import_and_a_foreign_owner_is_a_404(tenant, other_tenant):
    viewer = signed_in(tenant, "viewer")
    assert _upload(viewer, "/console/regex-scripts/import/?scope=global", b"[]").status_code == 403
    foreign = create_preset(other_tenant, name="Theirs")
    operator = signed_in(tenant, "operator")
    url = f"/console/regex-scripts/import/?scope=preset&owner={foreign.pk}"
    assert operator.get(url).status_code == 404
