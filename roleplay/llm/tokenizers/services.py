"""Writes of a model config's tokenizer: a pasted or uploaded ``tokenizer.json`` stored once
per tenant and content, and the check that the chosen tokenizer loads.

Both run inside the config's own write (``llm.configs.services``), in its transaction: a
config is never saved naming a tokenizer that does not load, and a refused write stores no
file either.
"""

from __future__ import annotations

from console import tokenizers
from roleplay.errors import FieldErrors, TokenizerUnavailable
from roleplay.llm.tokenizers import counters
from roleplay.llm.tokenizers.models import (
    TOKENIZER_JSON_MAX_CHARS,
    TokenizerFile,
    TokenizerKind,
)

TOKENIZER_FIELDS = ("tokenizer", "tokenizer_sha256")


def with_tokenizer_file(config, fields: dict) -> dict:
    """``fields`` with its ``tokenizer_json`` (if any) stored as the tenant's
    :class:`TokenizerFile` and named by digest; a ``tokenizer_json`` makes the config's
    tokenizer ``hf`` unless the same write chose another kind (a field error)."""
    text = fields.pop("tokenizer_json", None)
    if not text:
        return fields
    kind = fields.setdefault("tokenizer", TokenizerKind.HF)
    if kind != TokenizerKind.HF:
        raise FieldErrors({"tokenizer_json": ["Only for the hf tokenizer."]})
    if len(text) > TOKENIZER_JSON_MAX_CHARS:
        raise FieldErrors({"tokenizer_json": ["Too long."]})
    digest = tokenizers.hf_digest(text)
    try:
        tokenizers.hf(text, digest)
    except tokenizers.TokenizerUnavailable as exc:
        raise TokenizerUnavailable("tokenizer_json_invalid", str(exc)) from exc
    TokenizerFile.objects.get_or_create(
        tenant_id=config.tenant_id, sha256=digest, defaults={"content": text}
    )
    return {**fields, "tokenizer_sha256": digest}


def check_tokenizer(config) -> None:
    """Raise :class:`TokenizerUnavailable` unless ``config``'s tokenizer loads, as the
    values the row will hold name it."""
    if config.tokenizer == TokenizerKind.CL100K:
        return
    try:
        counters.load(config)
    except tokenizers.TokenizerUnavailable as exc:
        raise TokenizerUnavailable("tokenizer_unavailable", str(exc)) from exc
