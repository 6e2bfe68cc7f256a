"""The model config's tokenizer fields and the tenant's stored ``tokenizer.json`` files."""

from __future__ import annotations

import uuid

from django.db import models

from console.scoping import TenantScopedModel

TOKENIZER_JSON_MAX_CHARS = 24 * 1024 * 1024  # the largest vocabularies' files are ~20 MB
TOKENIZER_BODY_MAX_BYTES = 32 * 1024 * 1024  # a config's write carrying one, JSON-escaped


class TokenizerKind(models.TextChoices):
    """What a config's budgets count with (``console.tokenizers``)."""

    CL100K = "cl100k", "cl100k_base (the seeds' budgets; default)"
    O200K = "o200k", "o200k_base (GPT-4o family)"
    GGUF = "gguf", "The local GGUF model's own vocabulary (llama.cpp)"
    HF = "hf", "A Hugging Face tokenizer.json"


class TokenizerFile(TenantScopedModel):
    """A ``tokenizer.json`` an operator uploaded or pasted, stored once per tenant and
    content (``sha256``); a config names it by that digest, so a turn finds the loaded
    tokenizer without reading the file again. Never edited: new content is a new row."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    sha256 = models.CharField(max_length=64)
    content = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "sha256"], name="tokenizerfile_unique"),
        ]


class TokenizerFields(models.Model):
    """A model config's tokenizer: a kind and, for ``hf``, the digest of its stored
    :class:`TokenizerFile`."""

    tokenizer = models.CharField(
        max_length=8, choices=TokenizerKind.choices, default=TokenizerKind.CL100K
    )
    tokenizer_sha256 = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        abstract = True
