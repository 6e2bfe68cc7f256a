"""``POST {base}/images/generations`` of OpenAI-compatible servers.

The answer's ``data`` items carry ``b64_json`` or ``url``. A server that moderates its own
images adds the evidence beside ``data``: ``moderation_status`` and ``moderation`` (one item
per image, ``asset_url`` the image's URL, or ``b64_json:<index>`` for a base64 image), or
the seed's ``jobs`` shape. ``moderations`` is the moderation call of a config that asks one.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from images.providers import (
    Ask,
    BackendFailed,
    Generated,
    GeneratedImage,
    join,
    post_json,
)

EVIDENCE_KEYS = ("moderation_status", "moderation", "jobs")
DEFAULT_MODERATION_MODEL = "omni-moderation-latest"


def _invalid(message: str) -> BackendFailed:
    return BackendFailed("backend_invalid_answer", message)


def decode_b64(value: object) -> bytes:
    if not isinstance(value, str) or not value:
        raise _invalid("an image's b64_json is not text")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _invalid("an image's b64_json is not base64") from exc


def read_answer(answer: Any) -> Generated:
    if not isinstance(answer, dict) or not isinstance(answer.get("data"), list):
        raise _invalid("the answer has no data list")
    images = []
    for index, item in enumerate(answer["data"][:64]):
        if not isinstance(item, dict):
            raise _invalid("an answer item is not an object")
        if item.get("b64_json") is not None:
            images.append(GeneratedImage(f"b64_json:{index}", data=decode_b64(item["b64_json"])))
        elif isinstance(item.get("url"), str) and item["url"]:
            images.append(GeneratedImage(item["url"], url=item["url"]))
        else:
            raise _invalid("an answer item has neither b64_json nor url")
    if not images:
        raise _invalid("the answer has no images")
    evidence = {key: answer[key] for key in EVIDENCE_KEYS if key in answer} or None
    return Generated(images, evidence, {"created": answer.get("created")})


def generate(config, ask: Ask) -> Generated:
    body: dict[str, Any] = {
        "prompt": ask.prompt,
        "n": ask.count,
        "size": f"{ask.width}x{ask.height}",
    }
    if config.model:
        body["model"] = config.model
    if ask.reference_images:
        body["reference_images"] = list(ask.reference_images)
    answer = post_json(
        join(config.base_url, "/images/generations"),
        body,
        key_env=config.api_key_env,
        timeout=config.timeout_seconds,
    )
    return read_answer(answer)


def moderate(config, data_url: str) -> Any:
    """One ``/moderations`` call for one image; its first result (or what came instead)."""
    base = config.moderation_base_url or config.base_url
    body = {
        "model": config.moderation_model or DEFAULT_MODERATION_MODEL,
        "input": [{"type": "image_url", "image_url": {"url": data_url}}],
    }
    answer = post_json(
        join(base, "/moderations"), body, key_env=config.api_key_env, timeout=config.timeout_seconds
    )
    results = answer.get("results") if isinstance(answer, dict) else None
    return results[0] if isinstance(results, list) and results else None
