"""The import doors a real file goes through, each called as a client calls it.

Every door takes the file's bytes and its name and answers the HTTP response; the fixtures
in ``tests/fixtures/sillytavern/realshapes`` are named after the kind they are (their
prefix) and the shape they reproduce."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile

SHAPES = Path(__file__).resolve().parents[1] / "fixtures" / "sillytavern" / "realshapes"


def shape(name: str) -> bytes:
    return (SHAPES / name).read_bytes()


def shapes(prefix: str) -> list[str]:
    return sorted(p.name for p in SHAPES.iterdir() if p.name.startswith(prefix))


def _upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def preset(api, name: str, data: bytes):
    return api.post("/api/v1/presets/import", {"file": _upload(name, data)}, format="multipart")


def template(api, name: str, data: bytes):
    return api.post("/api/v1/instruct-templates/", {"file": json.loads(data)}, format="json")


def world(api, name: str, data: bytes):
    return api.post("/v1/imports/files", {"files": [_upload(name, data)]}, format="multipart")


def card(api, name: str, data: bytes):
    return api.post("/api/v1/characters/import", {"file": _upload(name, data)}, format="multipart")


def chat(api, name: str, data: bytes, *, player, character):
    body = {"file": _upload(name, data), "player": str(player.pk), "character": str(character.pk)}
    return api.post("/api/v1/conversations/import", body, format="multipart")


def group(api, name: str, data: bytes, *, chat_name: str, chat_data: bytes, player):
    body = {"group": _upload(name, data), "file": _upload(chat_name, chat_data),
            "player": str(player.pk)}  # fmt: skip
    return api.post("/api/v1/conversations/import-group", body, format="multipart")


def regex(api, name: str, data: bytes):
    body = {"scope": "global", "script": json.loads(data)}
    return api.post("/api/v1/regex-scripts/", body, format="json")


def regex_file(api, name: str, data: bytes, **owner):
    body = {"scope": "global", **owner, "file": json.loads(data)}
    return api.post("/api/v1/regex-scripts/import", body, format="json")
