"""The provider registry: which ``Provider`` (``roleplay.llm.provider``) serves a config.

Each provider lives in a module of this package (``openai_compat`` for any OpenAI-compatible
HTTP server, ``llama_local`` for the bundled model's process, ``text_completion`` for
servers that take a raw prompt) and imports the interface from
``roleplay.llm.provider``; the interface never imports a provider, so the two never form a
circle. A new provider is a module here plus one branch below.
"""

from __future__ import annotations

from ..provider import Provider
from ..types import ProviderConfig


def build_provider(config: ProviderConfig) -> Provider:
    """The provider for ``config``; imported lazily so unused SDKs are never loaded."""
    if config.provider == "openai_compatible":
        from .openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(config)
    if config.provider == "llama_cpp":
        from .llama_local import LlamaLocalProvider

        return LlamaLocalProvider(config)
    if config.provider == "text_completion":
        from .text_completion import TextCompletionProvider

        return TextCompletionProvider(config)
    raise ValueError(f"unknown provider {config.provider!r}")
