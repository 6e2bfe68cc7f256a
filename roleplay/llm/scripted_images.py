"""The scripted server's image routes: an OpenAI-compatible images and moderations API and
the Automatic1111 ``txt2img`` API, with scripted evidence and failures.

``ScriptedOpenAIServer.images`` (a :class:`ScriptedImages`) holds the script; its handler
routes ``POST .../images/generations``, ``.../moderations``, ``/sdapi/v1/txt2img`` and
``GET /files/...`` here. Images are real PNGs made with Pillow (at most 256 pixels a side,
whatever was asked). Defaults: base64 answers with complete ``SFW`` evidence for each
image; ``answer="url"`` answers with URLs on this server (``/files/<id>.png``).
"""

from __future__ import annotations

import base64
import io
import itertools
import threading
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from .wire import error_body

MAX_SIDE = 256


@dataclass
class ImageScript:
    """What the next image requests get. ``status`` != 200 fails them; ``delay`` holds each
    answer; ``evidence`` False sends none; ``classification``/``blocked``/``item_status``/
    ``moderation_status`` shape the evidence; ``flagged`` is the moderation call's verdict
    (``moderation_status`` other than 200 fails that call); ``url_base`` replaces this
    server's address in URL answers (to point them at a forbidden address);
    ``payload`` replaces the image bytes (an HTML page, a huge file)."""

    answer: str = "b64"  # or "url"
    status: int = 200
    delay: float = 0.0
    evidence: bool = True
    moderation_status: str = "COMPLETED"
    item_status: str = "COMPLETED"
    classification: str = "SFW"
    blocked: bool = False
    mismatch: bool = False  # evidence names another asset
    flagged: bool = False
    moderation_http_status: int = 200
    url_base: str | None = None
    payload: bytes | None = None
    content_type: str = "image/png"
    redirect_to: str | None = None  # GET /files/* answers a redirect here


@dataclass
class ScriptedImages:
    script: ImageScript = field(default_factory=ImageScript)
    requests: list[dict[str, Any]] = field(default_factory=list)
    moderation_requests: list[dict[str, Any]] = field(default_factory=list)
    fetches: list[str] = field(default_factory=list)
    _files: dict[str, bytes] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: itertools.count = field(default_factory=itertools.count)

    def reset(self) -> None:
        with self._lock:
            self.script = ImageScript()
            self.requests.clear()
            self.moderation_requests.clear()
            self.fetches.clear()
            self._files.clear()

    def picture(self, width: object, height: object) -> bytes:
        if self.script.payload is not None:
            return self.script.payload
        w = width if isinstance(width, int) and 0 < width else 64
        h = height if isinstance(height, int) and 0 < height else 64
        shade = next(self._ids) * 37 % 256
        out = io.BytesIO()
        Image.new("RGB", (min(w, MAX_SIDE), min(h, MAX_SIDE)), (shade, 90, 160)).save(out, "PNG")
        return out.getvalue()

    def _evidence(self, asset_ids: list[str]) -> dict[str, Any]:
        s = self.script
        items = [
            {"asset_url": f"{a}-other" if s.mismatch else a, "status": s.item_status,
             "classification": s.classification, "blocked": s.blocked}
            for a in asset_ids
        ]  # fmt: skip
        return {"moderation_status": s.moderation_status, "moderation": items}

    # --- the routes: (status, JSON body) ------------------------------------------------

    def record(self, path: str, request: dict[str, Any]) -> None:
        """Note an image request as it arrives (before any scripted delay)."""
        with self._lock:
            self.requests.append({"path": path, **request})

    def generations(self, request: dict[str, Any], root: str) -> tuple[int, Any]:
        if self.script.status != 200:
            return self.script.status, error_body(self.script.status, "scripted image failure")
        count = request.get("n") if isinstance(request.get("n"), int) else 1
        size = str(request.get("size") or "64x64")
        w, _, h = size.partition("x")
        sides = (int(w) if w.isdigit() else 64, int(h) if h.isdigit() else 64)
        data, ids = [], []
        for _ in range(max(1, min(count, 8))):
            picture = self.picture(*sides)
            if self.script.answer == "url":
                name = f"{next(self._ids)}.png"
                with self._lock:
                    self._files[name] = picture
                url = f"{self.script.url_base or root}/files/{name}"
                data.append({"url": url})
                ids.append(url)
            else:
                data.append({"b64_json": base64.b64encode(picture).decode()})
                ids.append(f"b64_json:{len(data) - 1}")
        body: dict[str, Any] = {"created": 0, "data": data}
        if self.script.evidence:
            body.update(self._evidence(ids))
        return 200, body

    def moderations(self, request: dict[str, Any]) -> tuple[int, Any]:
        with self._lock:
            self.moderation_requests.append(request)
        s = self.script
        if s.moderation_http_status != 200:
            return s.moderation_http_status, error_body(s.moderation_http_status, "scripted")
        categories = {"sexual": s.flagged, "violence": False}
        return 200, {"id": "modr-1", "model": request.get("model"),
                     "results": [{"flagged": s.flagged, "categories": categories}]}  # fmt: skip

    def txt2img(self, request: dict[str, Any]) -> tuple[int, Any]:
        if self.script.status != 200:
            return self.script.status, {"detail": "scripted failure"}
        count = request.get("batch_size") if isinstance(request.get("batch_size"), int) else 1
        pictures = [
            self.picture(request.get("width"), request.get("height"))
            for _ in range(max(1, min(count, 8)))
        ]
        images = [base64.b64encode(p).decode() for p in pictures]
        return 200, {"images": images, "parameters": request, "info": "{}"}

    def file(self, path: str) -> tuple[int, bytes | None, dict[str, str]]:
        """(status, bytes, headers) of ``GET /files/<name>``."""
        with self._lock:
            self.fetches.append(path)
        if self.script.redirect_to:
            return 302, b"", {"Location": self.script.redirect_to}
        name = path.rsplit("/", 1)[-1]
        with self._lock:
            data = self._files.get(name)
        return (404, None, {}) if data is None else (200, data, {})
