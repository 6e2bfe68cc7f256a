"""The "test this image config" button (console and ``POST /api/v1/image-configs/{id}/test``):
one real, small generation through the asset tool's path, so a wrong URL, key, model or
moderation setting shows here rather than in the first chat picture.

It is a billed call like any other: recorded as an asset job (``ImageJob``) of the tenant,
its picture kept and linked (signed) so the console can show it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from images import selectors
from images.errors import ImagesError
from images.services.jobs import generate_assets

TEST_PROMPT = "A brass key on a wooden table, soft window light, still life."
_MESSAGE_MAX = 500


@dataclass(frozen=True)
class ConfigTestResult:
    ok: bool
    latency_ms: float
    moderation_status: str = ""
    image_url: str = ""
    task_id: str = ""
    error_code: str | None = None
    error_message: str | None = None
    warnings: list[str] = field(default_factory=list)


def _warnings(config) -> list[str]:
    found = []
    if config.moderation_mode == "none":
        found.append("No moderation: this config's images are shown marked unmoderated.")
    if selectors.api_key_status(config) == "missing":
        found.append(f"The key variable ${config.api_key_env} is not set on this server.")
    return found


def run_config_test(tenant, config) -> ConfigTestResult:
    """One picture at the config's default size; every failure is a result with a code."""
    started = time.perf_counter()
    body = {"prompt": TEST_PROMPT, "image_config": str(config.pk), "count": 1}

    def elapsed() -> float:
        return round((time.perf_counter() - started) * 1000, 1)

    try:
        answer = generate_assets(tenant, body)
    except ImagesError as exc:
        return ConfigTestResult(False, elapsed(), error_code=exc.code,
                                error_message=exc.message[:_MESSAGE_MAX],
                                warnings=_warnings(config))  # fmt: skip
    job = answer["jobs"][0]
    urls = job["image_urls"]
    if urls:
        return ConfigTestResult(True, elapsed(), answer["moderation_status"], urls[0],
                                job["task_id"], warnings=_warnings(config))  # fmt: skip
    withheld = job["withheld"][0] if job["withheld"] else {}
    code = job["code"] or withheld.get("code") or "no_image"
    message = {
        "blocked": "The backend's moderation blocked the test picture.",
        "unverified": "The picture came without complete moderation evidence; it is withheld.",
        "refused": "The backend's bytes are not a usable image.",
    }.get(withheld.get("outcome", ""), "The backend did not answer in time: outcome unknown.")
    return ConfigTestResult(False, elapsed(), answer["moderation_status"], "", job["task_id"],
                            code, message, _warnings(config))  # fmt: skip
