"""Which embedder a setting names, one rule for the worldbook and for memory.

A capability's setting is a *choice*: ``minilm`` (the default: the sentence model when its
package is installed, else the hashing embedder), ``hashing``, or the settings of an
OpenAI-compatible endpoint (``openai_embedder.check_settings``; the key read from the
environment variable it names). One client is kept per settings and key, so its
connections are reused.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from console.embedding import minilm
from console.embedding.hashing import HashingEmbedder
from console.embedding.openai_embedder import OpenAIEmbedder, check_settings
from console.embedding.protocol import Embedder
from console.lru import Lru

MINILM = "minilm"
HASHING = "hashing"
CHOICES = (MINILM, HASHING)

_HASHING = HashingEmbedder()
_REMOTE = Lru(64)


def hashing_embedder() -> HashingEmbedder:
    """The process's hashing embedder (stateless, so one serves everyone)."""
    return _HASHING


def local_embedder(choice: str = MINILM) -> Embedder:
    """The embedder that runs in this process: the sentence model unless ``choice`` is
    ``hashing`` or the model is not installed, then the hashing embedder."""
    if choice != HASHING:
        model = minilm.load()
        if model is not None:
            return model
    return _HASHING


def local_version(choice: str = MINILM) -> str:
    """The ``embedding_version`` of :func:`local_embedder` for ``choice``, without loading
    the model: what a reader of stored vectors needs to know before it needs to embed."""
    if choice != HASHING and minilm.installed():
        return minilm.EMBEDDING_VERSION
    return _HASHING.embedding_version


def remote_embedder(spec: dict[str, Any]) -> OpenAIEmbedder:
    """The client of an OpenAI-compatible endpoint's settings (as ``check_settings`` keeps
    them), one per settings and key."""
    env = spec.get("api_key_env") or ""
    key = os.environ.get(env) if env else None
    cache_key = json.dumps(spec, sort_keys=True) + hashlib.sha256((key or "").encode()).hexdigest()
    found = _REMOTE.get(cache_key)
    if found is None:
        found = OpenAIEmbedder(
            spec["base_url"],
            spec["model"],
            api_key=key,
            dimensions=spec.get("dimensions"),
            timeout_ms=spec.get("timeout_ms") or 10_000,
            batch_size=spec.get("batch_size") or 32,
        )
        _REMOTE.put(cache_key, found)
    return found


def parse_choice(value: str | dict[str, Any] | None) -> str | dict[str, Any]:
    """A setting as a choice: ``minilm`` or ``hashing`` (any case, blanks around), or an
    endpoint's settings given as an object or its JSON text. ``ValueError`` names what is
    wrong."""
    if value is None:
        return MINILM
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in CHOICES or not text:
            return text.lower() or MINILM
        try:
            value = json.loads(text)
        except ValueError:
            raise ValueError(
                f"embedder: {MINILM}, {HASHING} or the JSON object of an endpoint's settings"
            ) from None
    return check_settings(value)


def embedder_for(choice: str | dict[str, Any]) -> Embedder:
    """The embedder of a parsed choice (:func:`parse_choice`)."""
    return remote_embedder(choice) if isinstance(choice, dict) else local_embedder(choice)


def version_for(choice: str | dict[str, Any]) -> str:
    """The ``embedding_version`` of :func:`embedder_for`, loading no model."""
    if isinstance(choice, dict):
        return remote_embedder(choice).embedding_version
    return local_version(choice)
