"""Whether a value is the name of an environment variable or a pasted secret: one rule for
every config that names where its key lives (model configs, image configs). A value that
looks like a key (a vendor prefix, or a long random-looking run of letters and digits) is
refused rather than stored: the key itself must never reach the database. Pure."""

from __future__ import annotations

import re

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")
# Prefixes of common API key formats (OpenAI/Anthropic, Stripe, GitHub, Hugging Face, Slack,
# AWS, Google, GitLab, Replicate). Matched case-insensitively at the start of the value.
KEY_PREFIXES = (
    "sk-", "sk_", "pk_", "rk_", "ghp_", "gho_", "ghs_", "github_pat_", "hf_", "xox", "akia",
    "asia", "aiza", "glpat", "r8_",
)  # fmt: skip
# A single name segment this long that mixes letters and digits is a secret, not a word.
_RANDOM_SEGMENT = re.compile(r"^(?=.*[A-Za-z])(?=.*[0-9])[A-Za-z0-9]{20,}$")


def looks_like_key(value: str) -> bool:
    if value.lower().startswith(KEY_PREFIXES):
        return True
    return any(_RANDOM_SEGMENT.match(part) for part in value.split("_"))


def is_key_name(value: str) -> bool:
    """Whether ``value`` (stripped, non-empty) may be stored as a key's variable name."""
    return bool(ENV_NAME.match(value)) and not looks_like_key(value)
