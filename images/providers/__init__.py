"""Image backends: what each answers, read into one shape (:class:`Generated`).

``openai_compatible`` (``POST {base}/images/generations``; OpenAI, LocalAI and the like)
and ``automatic1111`` (``POST {base}/sdapi/v1/txt2img``; the Stable Diffusion WebUI/Forge
API). Each call is made once: a timeout raises :class:`BackendTimeout`, because the backend
may have made (and billed) the images; callers never resend.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import httpx

from images.errors import BadGateway, ImagesError, Unavailable


class BackendTimeout(Unavailable):
    """The backend did not answer in time: whether it made the images is unknown."""

    default_code = "backend_timeout"


class BackendFailed(BadGateway):
    """The backend refused the request or answered with nothing usable."""

    default_code = "backend_error"


class BackendUnreachable(Unavailable):
    """No connection could be made: nothing was sent."""

    default_code = "backend_unreachable"


@dataclass(frozen=True)
class GeneratedImage:
    """One image of an answer: its bytes (base64 answers) or its URL, and the id its
    moderation evidence names it by (the URL, or ``b64_json:<index>``)."""

    asset_id: str
    data: bytes | None = None
    url: str | None = None
    declared_type: str | None = None


@dataclass(frozen=True)
class Generated:
    images: list[GeneratedImage]
    evidence: dict[str, Any] | None = None  # the backend's own, when it sent any
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Ask:
    """What to draw: the prompt and the sizes (the config's defaults filled in)."""

    prompt: str
    count: int
    width: int
    height: int
    reference_images: tuple[str, ...] = ()


def headers(api_key_env: str) -> dict[str, str]:
    key = os.environ.get(api_key_env) if api_key_env else None
    return {"Authorization": f"Bearer {key}"} if key else {}


def post_json(url: str, body: dict, *, key_env: str, timeout: float) -> Any:
    """POST ``body`` once; the JSON answer, or a coded backend error. Redirects are not
    followed (a POST is not resent anywhere)."""
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False) as client:
            response = client.post(url, json=body, headers=headers(key_env))
    except httpx.ConnectError as exc:
        raise BackendUnreachable(message=f"the image backend cannot be reached: {exc}") from exc
    except httpx.TimeoutException as exc:
        raise BackendTimeout(message="the image backend did not answer in time") from exc
    except httpx.HTTPError as exc:
        raise BackendFailed(message=f"the image backend call failed: {type(exc).__name__}") from exc
    if response.status_code >= 400:
        raise BackendFailed(
            message=f"the image backend answered {response.status_code}",
            details={"status": response.status_code, "body": response.text[:500]},
        )
    try:
        return response.json()
    except ValueError as exc:
        message = "the image backend's answer is not JSON"
        raise BackendFailed("backend_invalid_answer", message) from exc


def generate(config, ask: Ask) -> Generated:
    """One call to ``config``'s backend."""
    from images.providers import automatic1111, openai_compat

    if config.provider == "automatic1111":
        return automatic1111.generate(config, ask)
    if config.provider == "openai_compatible":
        return openai_compat.generate(config, ask)
    raise ImagesError("unknown_provider", f"unknown image provider {config.provider!r}")


def join(base: str, path: str) -> str:
    return base.rstrip("/") + path
