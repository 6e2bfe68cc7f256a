"""``POST {base}/sdapi/v1/txt2img`` of the Stable Diffusion WebUI (Automatic1111) and Forge.

The answer's ``images`` are base64 PNGs (``b64_json:<index>`` for evidence). These servers
moderate nothing: a config of this provider moderates by a call or not at all
(``images.engine.config``). ``model`` (when set) picks the checkpoint for this call only.
"""

from __future__ import annotations

from typing import Any

from images.providers import Ask, BackendFailed, Generated, GeneratedImage, join, post_json
from images.providers.openai_compat import decode_b64


def read_answer(answer: Any, count: int) -> Generated:
    """The last ``count`` images: a server that still sends its grid sends it first."""
    images = answer.get("images") if isinstance(answer, dict) else None
    if not isinstance(images, list) or not images:
        raise BackendFailed("backend_invalid_answer", "the answer has no images list")
    kept = images[-count:]
    out = [GeneratedImage(f"b64_json:{i}", data=decode_b64(v)) for i, v in enumerate(kept)]
    return Generated(out, None, {})


def generate(config, ask: Ask) -> Generated:
    body: dict[str, Any] = {
        "prompt": ask.prompt,
        "width": ask.width,
        "height": ask.height,
        "batch_size": ask.count,
        "n_iter": 1,
        "save_images": False,
        "override_settings": {"return_grid": False},
        "override_settings_restore_afterwards": True,
    }
    if config.model:
        body["override_settings"]["sd_model_checkpoint"] = config.model
    answer = post_json(
        join(config.base_url, "/sdapi/v1/txt2img"),
        body,
        key_env=config.api_key_env,
        timeout=config.timeout_seconds,
    )
    return read_answer(answer, ask.count)
