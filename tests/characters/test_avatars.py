"""Character avatars: uploaded through the API and the console, decoded and stored as PNG,
served at tenant-checked URLs with a validator; bad images, bombs and oversized files are
refused with stable codes and nothing written."""

from __future__ import annotations

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from roleplay.characters.cards.images import MAX_AVATAR_BYTES
from roleplay.models import Character
from tests.api.helpers import assert_error, db_snapshot, snapshot_diff
from tests.characters.cardfiles import image_bytes, pixel_bomb_png

pytestmark = pytest.mark.django_db


def upload(data: bytes, name: str = "a.png") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def put_avatar(client, character, data: bytes, name: str = "a.png"):
    return client.put(
        f"/api/v1/characters/{character.pk}/avatar",
        {"file": upload(data, name)},
        format="multipart",
    )


def size_of(data: bytes) -> tuple[int, int]:
    return Image.open(io.BytesIO(data)).size


def test_without_an_avatar_a_plain_image_is_served(api, character):
    response = api.get(f"/api/v1/characters/{character.pk}/avatar")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["X-Avatar-Generated"] == "true"
    assert size_of(response.content) == (400, 600)


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP"])
def test_an_uploaded_image_is_stored_as_png_and_served(api, character, fmt):
    assert put_avatar(api, character, image_bytes(fmt, (30, 40))).status_code == 204
    character.refresh_from_db()
    assert character.avatar_content_type == "image/png"
    response = api.get(f"/api/v1/characters/{character.pk}/avatar", HTTP_ACCEPT="image/png")
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert response["X-Avatar-Generated"] == "false"
    assert response["Cache-Control"] == "private, no-cache"
    assert size_of(response.content) == (30, 40)
    assert api.get(f"/api/v1/characters/{character.pk}/").json()["has_avatar"] is True


def test_the_etag_answers_304_until_the_image_changes(api, character):
    put_avatar(api, character, image_bytes())
    first = api.get(f"/api/v1/characters/{character.pk}/avatar")
    tag = first["ETag"]
    again = api.get(f"/api/v1/characters/{character.pk}/avatar", HTTP_IF_NONE_MATCH=tag)
    assert again.status_code == 304 and again.content == b""
    put_avatar(api, character, image_bytes(colour=(1, 2, 3)))
    changed = api.get(f"/api/v1/characters/{character.pk}/avatar", HTTP_IF_NONE_MATCH=tag)
    assert changed.status_code == 200 and changed["ETag"] != tag


def test_delete_removes_the_avatar(api, character):
    put_avatar(api, character, image_bytes())
    assert api.delete(f"/api/v1/characters/{character.pk}/avatar").status_code == 204
    character.refresh_from_db()
    assert character.avatar is None and character.avatar_content_type == ""


@pytest.mark.parametrize(
    ("data", "status", "code"),
    [
        (b"not an image at all", 422, "invalid_image"),
        (image_bytes("GIF"), 422, "invalid_image"),
        (image_bytes("PNG")[:50], 422, "invalid_image"),
        (pixel_bomb_png(), 422, "image_too_large"),
        (b"\x89PNG" + b"\x00" * MAX_AVATAR_BYTES, 413, "avatar_too_large"),
    ],
    ids=["garbage", "gif", "truncated", "pixel-bomb", "too-many-bytes"],
)
def test_bad_images_are_refused_and_nothing_written(api, character, data, status, code):
    before = db_snapshot()
    assert_error(put_avatar(api, character, data), status, code)
    assert snapshot_diff(before, db_snapshot()) == []


def test_the_upload_needs_exactly_one_file(api, character):
    response = api.put(f"/api/v1/characters/{character.pk}/avatar", {}, format="multipart")
    assert_error(response, 400, "validation_error")


def test_another_tenants_avatar_is_not_found(other_api, character):
    assert_error(other_api.get(f"/api/v1/characters/{character.pk}/avatar"), 404, "not_found")
    before = db_snapshot()
    assert_error(put_avatar(other_api, character, image_bytes()), 404, "not_found")
    assert_error(other_api.delete(f"/api/v1/characters/{character.pk}/avatar"), 404, "not_found")
    assert snapshot_diff(before, db_snapshot()) == []


def test_a_play_token_reads_but_cannot_write(play_api, character):
    assert play_api.get(f"/api/v1/characters/{character.pk}/avatar").status_code == 200
    assert_error(put_avatar(play_api, character, image_bytes()), 403, "forbidden")


def test_the_console_uploads_and_serves_the_avatar(operator_client, character):
    response = operator_client.post(
        f"/console/characters/{character.pk}/",
        {"name": "Mira", "avatar": upload(image_bytes("JPEG", (20, 30)), "mira.jpg")},
    )
    assert response.status_code == 302
    image = operator_client.get(f"/console/characters/{character.pk}/avatar/")
    assert image["Content-Type"] == "image/png" and size_of(image.content) == (20, 30)
    page = operator_client.get(f"/console/characters/{character.pk}/").content.decode()
    assert f'src="/console/characters/{character.pk}/avatar/"' in page
    assert "Remove the avatar" in page

    operator_client.post(
        f"/console/characters/{character.pk}/", {"name": "Mira", "remove_avatar": "on"}
    )
    character.refresh_from_db()
    assert character.avatar is None


def test_a_bad_image_in_the_console_saves_nothing(operator_client, character):
    response = operator_client.post(
        f"/console/characters/{character.pk}/",
        {"name": "Renamed", "avatar": upload(pixel_bomb_png())},
    )
    assert response.status_code == 200
    assert "more than" in response.content.decode()
    character.refresh_from_db()
    assert character.name == "Mira" and character.avatar is None


def test_the_console_avatar_of_another_tenant_is_404(console_client, other_tenant, character):
    client = console_client(other_tenant, "admin")
    assert client.get(f"/console/characters/{character.pk}/avatar/").status_code == 404


def test_the_character_list_does_not_load_avatars(api, character):
    put_avatar(api, character, image_bytes())
    from roleplay.characters.selectors import character_list

    row = character_list(character.tenant).get(pk=character.pk)
    assert "avatar" in row.get_deferred_fields() and row.avatar_set is True
    assert Character.objects.get(pk=character.pk).avatar is not None
