"""One drawing: the backend called once, each image's bytes checked, its evidence judged.

Shared by the asset tool and chat slots. For each image of the answer: the bytes (base64,
or fetched through the SSRF guard), checked (``images.engine.image_bytes``) before anything
else sees them; then the evidence by the config's moderation mode: the backend's own
(``backend``), one ``/moderations`` call per image recorded as seed-shaped evidence
(``call``), or none (``none``: shown, marked unmoderated). ``images.engine.evidence``
decides what may be shown.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from images.engine import evidence as ev
from images.engine.image_bytes import ImageInfo, check_image
from images.errors import ImagesError
from images.providers import Ask, GeneratedImage, generate
from images.providers.fetch import fetch_image
from images.providers.openai_compat import moderate


@dataclass
class DrawnImage:
    """One image: its checked bytes (None when they failed the check), its verdict."""

    asset_id: str
    data: bytes | None = None
    info: ImageInfo | None = None
    verdict: ev.Verdict | None = None
    code: str = ""  # why it is not shown (a bytes check, a fetch, a verdict's reason)
    evidence_item: dict[str, Any] | None = None

    @property
    def shown(self) -> bool:
        return self.data is not None and self.verdict is not None and self.verdict.shown


@dataclass
class Drawn:
    status: str  # the evidence's top-level status: COMPLETED, ERROR, unknown, unmoderated
    images: list[DrawnImage] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Every image has an answer: shown, blocked, or refused for its bytes."""
        return self.status in (ev.COMPLETED, "unmoderated") and all(
            image.verdict is None or image.verdict.outcome != "unverified" for image in self.images
        )


def _bytes(config, image: GeneratedImage) -> tuple[bytes, str | None]:
    if image.data is not None:
        return image.data, image.declared_type
    return fetch_image(
        image.url or "", timeout=config.timeout_seconds, max_bytes=settings.IMAGES_MAX_BYTES
    )


def _checked(config, image: GeneratedImage) -> DrawnImage:
    drawn = DrawnImage(image.asset_id)
    try:
        data, declared = _bytes(config, image)
        drawn.info = check_image(
            data,
            declared_type=declared,
            max_bytes=settings.IMAGES_MAX_BYTES,
            max_side=settings.IMAGES_MAX_SIDE,
            max_pixels=settings.IMAGES_MAX_PIXELS,
        )
        drawn.data = data
    except ImagesError as exc:
        drawn.code = exc.code
    return drawn


def _called_evidence(config, images: list[DrawnImage]) -> dict[str, Any]:
    items = []
    for image in images:
        if image.data is None or image.info is None:
            continue
        data_url = f"data:{image.info.mime};base64,{base64.b64encode(image.data).decode()}"
        try:
            result = moderate(config, data_url)
        except ImagesError:
            result = None
        items.append(ev.moderation_call_item(result, image.asset_id))
    complete = all(item["status"] == ev.COMPLETED for item in items)
    return {"moderation_status": ev.COMPLETED if complete else "ERROR", "moderation": items}


def draw(config, ask: Ask) -> Drawn:
    """Call the backend once for ``ask`` and judge what came back. Backend errors (a
    timeout included) propagate: the caller records them and never calls again."""
    generated = generate(config, ask)
    images = [_checked(config, image) for image in generated.images]
    mode = config.moderation_mode
    if mode == "none":
        judgement = ev.unmoderated([image.asset_id for image in images])
        evidence: dict[str, Any] = {}
    else:
        evidence = (
            _called_evidence(config, images) if mode == "call" else (generated.evidence or {})
        )
        allowed = ev.allowed_classes(config.allowed_classifications)
        judgement = ev.judge(evidence, [image.asset_id for image in images], allowed)
    items: dict[str, Any] = {}
    for item in ev.evidence_items(evidence):
        if isinstance(item, dict) and isinstance(item.get("asset_url"), str):
            items.setdefault(item["asset_url"], item)  # the first decides, as in the rule
    for image, verdict in zip(images, judgement.verdicts, strict=True):
        if image.data is None:
            continue  # refused for its bytes: its code says why
        image.verdict = verdict
        image.code = verdict.reason
        image.evidence_item = items.get(image.asset_id)
    return Drawn(judgement.status, images, evidence)
