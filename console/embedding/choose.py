"""Which embedder a setting names, one rule for the worldbook and for memory.

A capability's setting is a *choice*: a local sentence model, ``minilm`` (English, the
default), ``minilm-int8`` (the same with 8-bit weights: about twice as fast, a little
less accurate), ``e5`` (multilingual-e5-small: Chinese, Japanese and about a hundred other
languages), ``hashing``, or the settings of an OpenAI-compatible endpoint
(``openai_embedder.check_settings``; the key read from the environment variable it names).
A model that is not installed (or cannot load here) gives way to the other one, then to
the hashing embedder. One client is kept per settings and key, so its connections are
reused.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from console.embedding import e5, minilm, minilm_int8
from console.embedding.hashing import HashingEmbedder
from console.embedding.openai_embedder import OpenAIEmbedder, check_settings
from console.embedding.protocol import Embedder
from console.lru import Lru
from console.storable import loads as loads_json

MINILM = "minilm"
MINILM_INT8 = "minilm-int8"
E5 = "e5"
HASHING = "hashing"
CHOICES = (MINILM, MINILM_INT8, E5, HASHING)
DEFAULT = MINILM
# The local models by choice, each with installed(), load() and EMBEDDING_VERSION.
_MODELS = {MINILM: minilm, MINILM_INT8: minilm_int8, E5: e5}

_HASHING = HashingEmbedder()
_REMOTE = Lru(64)


def hashing_embedder() -> HashingEmbedder:
    """The process's hashing embedder (stateless, so one serves everyone)."""
    return _HASHING


def _models(choice: str) -> list:
    """The local models to try for ``choice``: the one it names first, then the others
    (none for ``hashing``)."""
    if choice == HASHING:
        return []
    named = _MODELS.get(choice, _MODELS[DEFAULT])
    return [named, *(module for module in _MODELS.values() if module is not named)]


def local_embedder(choice: str = DEFAULT) -> Embedder:
    """The embedder that runs in this process: the model ``choice`` names, else another
    installed one, else (or for ``hashing``) the hashing embedder."""
    for module in _models(choice):
        model = module.load()
        if model is not None:
            return model
    return _HASHING


def local_version(choice: str = DEFAULT) -> str:
    """The ``embedding_version`` of :func:`local_embedder` for ``choice``, without loading
    the model: what a reader of stored vectors needs to know before it needs to embed."""
    for module in _models(choice):
        if module.installed():
            return module.EMBEDDING_VERSION
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
    """A setting as a choice: ``minilm``, ``minilm-int8``, ``e5`` or ``hashing`` (any case,
    blanks around; :data:`DEFAULT` when empty), or an endpoint's settings given as an object
    or its JSON text. ``ValueError`` names what is wrong."""
    if value is None:
        return DEFAULT
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in CHOICES or not text:
            return text.lower() or DEFAULT
        try:
            value = loads_json(text, "embedder")
        except ValueError:
            raise ValueError(
                f"embedder: {', '.join(CHOICES)} or the JSON object of an endpoint's settings"
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
