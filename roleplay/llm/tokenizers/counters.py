"""The one place a model config becomes a token counter, and the worldbook's ``Tokenizer``.

``counter_for(config)`` is called when a turn reads its context and wherever a budget is
counted for a config outside a turn (the prompt preview, Compact's compactor window). The
default (``cl100k``, or no config) is the process-wide ``CL100K`` with no read at all; a
``gguf`` config loads its GGUF's vocabulary once per process; an ``hf`` one finds its loaded
``tokenizer.json`` by the digest the config carries and reads the stored file only the first
time in a process. A tokenizer that cannot be loaded any more (its GGUF removed since the
config was saved) counts with cl100k rather than failing the turn, and says so in the log.
"""

from __future__ import annotations

import logging
from functools import lru_cache

from asgiref.sync import sync_to_async

from console import tokenizers
from console.tokens import CL100K, TokenCounter
from roleplay.llm.bundled import bundled_model_path, local_model_available
from roleplay.llm.gateway import provider_config
from roleplay.llm.providers.llama_local import spec_for
from roleplay.llm.tokenizers.models import TokenizerFile, TokenizerKind
from worldbook.engine.tokens import Tokenizer

logger = logging.getLogger(__name__)


def counter_for(config) -> TokenCounter:
    """The counter of ``config``'s ``tokenizer`` (None: the environment's default: cl100k)."""
    kind = getattr(config, "tokenizer", TokenizerKind.CL100K)
    if kind == TokenizerKind.CL100K:
        return CL100K
    try:
        return load(config)
    except tokenizers.TokenizerUnavailable as exc:
        logger.warning("model config %s counts with cl100k: %s", config.pk, exc)
        return CL100K


async def acounter_for(config) -> TokenCounter:
    """:func:`counter_for` from async code: on a thread only when it may read or load."""
    if getattr(config, "tokenizer", TokenizerKind.CL100K) == TokenizerKind.CL100K:
        return CL100K
    return await sync_to_async(counter_for)(config)


def load(config) -> TokenCounter:
    """``config``'s counter, or :class:`console.tokenizers.TokenizerUnavailable`."""
    kind = config.tokenizer
    if kind == TokenizerKind.O200K:
        return tokenizers.o200k()
    if kind == TokenizerKind.GGUF:
        return tokenizers.gguf(gguf_path(config))
    if kind == TokenizerKind.HF:
        digest = config.tokenizer_sha256
        counter = tokenizers.hf_cached(digest) if digest else None
        if counter is not None:
            return counter
        stored = TokenizerFile.objects.filter(tenant_id=config.tenant_id, sha256=digest).first()
        if not digest or stored is None:
            raise tokenizers.TokenizerUnavailable("no tokenizer.json is stored for this config")
        return tokenizers.hf(stored.content, digest)
    return CL100K


def gguf_path(config) -> str:
    """The GGUF whose vocabulary a ``gguf`` config counts with: the file the local model
    process would load (``extra.model_path``, a ``.gguf`` model name), else the bundled
    model when it is installed; raises ``TokenizerUnavailable`` when there is none."""
    path = spec_for(provider_config(config)).path
    if path:
        return path
    if local_model_available():
        return str(bundled_model_path())
    raise tokenizers.TokenizerUnavailable("no GGUF: name one in extra.model_path")


@lru_cache(maxsize=64)
def worldbook_tokenizer(counter: TokenCounter) -> Tokenizer:
    """The worldbook engine's ``Tokenizer`` counting with ``counter`` (one per counter, so
    the engine's caches keyed on it stay warm)."""
    return Tokenizer(counter.name, counter.count_tokens)
