"""An embedder over an OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, vLLM, Ollama,
llama.cpp's server, TEI…), configured like a model config: a base URL ending where the
API's paths begin (``…/v1``), a model name, and the *name* of the environment variable that
holds the key (the key itself is never stored).

Texts go in batches of ``batch_size``; the answer's vectors are put back in input order by
their ``index`` and L2-normalised. An empty text is sent as one space (several servers
refuse empty input). Any failure (the network, a timeout, a non-2xx answer, a malformed
body, vectors of unequal length) raises :class:`EmbeddingUnavailable`: callers fall back
to lexical search and say so (``degraded``), they never fail the request.

``embedding_version`` names the server, the model and the dimensions, so another server or
model is another version and the index built with the old one is rebuilt.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any
from urllib.parse import urlsplit

import httpx

from console.failures import Unavailable
from console.remote_calls import RemoteFailures

PROVIDER = "openai_compatible"
DEFAULT_TIMEOUT_MS = 10_000
DEFAULT_BATCH = 32
RANGES = {"timeout_ms": (1_000, 120_000), "batch_size": (1, 256), "dimensions": (1, 8192)}
ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,99}$")
FIELDS = ("provider", "base_url", "model", "api_key_env", "dimensions", "timeout_ms", "batch_size")


class EmbeddingUnavailable(Unavailable, RuntimeError):
    """The embeddings endpoint did not give usable vectors; ``code`` says why (a coded
    ``unavailable`` failure, still a ``RuntimeError`` for the callers that fall back)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message)


FAILURES = RemoteFailures(
    EmbeddingUnavailable,
    timeout_code="embedding_timeout",
    timed_out="the embeddings call timed out",
    unreachable_code="embedding_unreachable",
    status_code="embedding_http_error",
    answered="the embeddings endpoint answered {status}",
)


def check_settings(data: Any) -> dict[str, Any]:
    """The provider's settings as stored; raises ``ValueError("<field>: <why>")``."""
    if not isinstance(data, dict):
        raise ValueError("embedder: must be an object or null")
    for name in data:
        if name not in FIELDS:
            raise ValueError(f"{str(name)[:100]}: unknown field")
    if data.get("provider") != PROVIDER:
        raise ValueError(f"provider: must be {PROVIDER}")
    url = data.get("base_url")
    parts = urlsplit(url) if isinstance(url, str) and len(url) <= 500 else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("base_url: must be an http(s) URL of at most 500 characters")
    model = data.get("model")
    if not isinstance(model, str) or not model.strip() or len(model) > 200:
        raise ValueError("model: must be a model name of 1 to 200 characters")
    env = data.get("api_key_env", "")
    if not isinstance(env, str) or (env and not ENV_NAME.match(env)):
        raise ValueError("api_key_env: must be an environment variable name (A-Z, 0-9, _)")
    for name, (low, high) in RANGES.items():
        value = data.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"{name}: must be an integer from {low} to {high}")
    return dict(data)


def version_of(base_url: str, model: str, dimensions: int | None) -> str:
    """The embedding version of a server, model and size (at most 100 characters)."""
    key = f"{base_url.rstrip('/')}\n{model}\n{dimensions or ''}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return f"openai:{digest}:{model[:60]}"


class OpenAIEmbedder:
    """The ``Embedder`` protocol over an OpenAI-compatible embeddings endpoint."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dimensions: int | None = None,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        batch_size: int = DEFAULT_BATCH,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model, self.asked_dimensions, self.batch_size = model, dimensions, batch_size
        self.dimensions = dimensions or 0  # learnt from the first answer otherwise
        self.embedding_version = version_of(base_url, model, dimensions)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout_ms / 1000, headers=headers, transport=transport)

    def embed(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            out += self._batch(texts[start : start + self.batch_size])
        return out

    def embed_query(self, texts: list[str]) -> list[list[float]]:
        """As :meth:`embed`: the OpenAI embeddings API has no query side."""
        return self.embed(texts)

    def _batch(self, texts: list[str]) -> list[list[float]]:
        body: dict[str, Any] = {
            "model": self.model,
            "input": [text if text.strip() else " " for text in texts],
            "encoding_format": "float",
        }
        if self.asked_dimensions:
            body["dimensions"] = self.asked_dimensions
        with FAILURES.calling():
            response = FAILURES.check(self._client.post(self.url, json=body))
        try:
            rows = sorted(response.json()["data"], key=lambda row: row["index"])
            vectors = [[float(x) for x in row["embedding"]] for row in rows]
        except (ValueError, KeyError, TypeError):
            raise EmbeddingUnavailable("embedding_malformed", "not an embeddings answer") from None
        sizes = {len(vector) for vector in vectors}
        if len(vectors) != len(texts) or len(sizes) != 1 or 0 in sizes:
            raise EmbeddingUnavailable("embedding_malformed", "vectors missing or uneven")
        size = sizes.pop()
        if self.dimensions and size != self.dimensions:
            raise EmbeddingUnavailable(
                "embedding_malformed", f"{size} dimensions, not {self.dimensions}"
            )
        self.dimensions = size
        return [_unit(vector) for vector in vectors]


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector
