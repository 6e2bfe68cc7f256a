"""The scripted server's ``/v1/moderations``: the categories a text is flagged in are
scripted by trigger words (``script("forbidden", ["violence"])``), answered in OpenAI's
shape; requests are recorded."""

from __future__ import annotations

import threading
from typing import Any

# OpenAI's categories, each answered (false unless scripted).
CATEGORIES = (
    "harassment", "harassment/threatening", "hate", "hate/threatening", "illicit",
    "illicit/violent", "self-harm", "self-harm/instructions", "self-harm/intent", "sexual",
    "sexual/minors", "violence", "violence/graphic",
)  # fmt: skip


def is_text(request: dict[str, Any]) -> bool:
    """Whether a ``/moderations`` request checks text (this module's) rather than an image
    (``scripted_images``: an input part of type ``image_url``)."""
    parts = request.get("input")
    if not isinstance(parts, list):
        return True
    return not any(isinstance(p, dict) and p.get("type") == "image_url" for p in parts)


class ScriptedModeration:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.triggers: dict[str, list[str]] = {}
        self.status = 200
        self._requests: list[dict[str, Any]] = []

    def script(self, trigger: str, categories: list[str]) -> None:
        """A text containing ``trigger`` (any case) is flagged in ``categories``."""
        self.triggers[trigger.lower()] = list(categories)

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()
        self.triggers, self.status = {}, 200

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._requests)

    def answer(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self._requests.append(request)
        if self.status != 200:
            return self.status, {"error": {"message": "scripted failure", "code": self.status}}
        texts = request.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return 400, {"error": {"message": "input must be a string or a list of them"}}
        return 200, {
            "id": "modr-scripted",
            "model": request.get("model", "scripted-moderation"),
            "results": [self._result(text) for text in texts],
        }

    def _result(self, text: str) -> dict[str, Any]:
        found = {c for t, cs in self.triggers.items() if t in text.lower() for c in cs}
        categories = {name: name in found for name in (*CATEGORIES, *sorted(found))}
        scores = {name: (0.99 if on else 0.01) for name, on in categories.items()}
        return {
            "flagged": bool(found),
            "categories": categories,
            "category_scores": scores,
            "category_applied_input_types": {name: ["text"] for name in categories},
        }
