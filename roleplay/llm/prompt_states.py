"""The local model process's prompt cache: model states kept by the prompt they hold.

llama.cpp keeps the last prompt's keys and values in its context, so a prompt that starts
like the one before is processed only from where the two differ. When another prompt comes
in between (a memory extraction, a director, a summary between two turns of one
conversation), that context is overwritten and the next turn would start again from
scratch. This cache keeps the context's state just before it is overwritten and brings it
back for a later prompt that shares more of it, in at most ``capacity_bytes``, least
recently used first out.

Why not llama-cpp-python's ``LlamaRAMCache``: its saved state copies the logits of every
batch row beside the keys and values (for a 262,144-token vocabulary, 512 rows of 4 bytes:
half a gigabyte, more than the whole cache), and it saves after every completion. Here a
state is the keys and values alone (llama.cpp's state, a few MB per thousand tokens of the
bundled model), saved only when it is about to be lost.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

MIN_SAVED_TOKENS = 64  # a context holding fewer tokens than this is not worth keeping


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class PromptStates:
    """Saved states of one ``llama_cpp.Llama``, by the tokens each holds."""

    def __init__(self, llm: Any, capacity_bytes: int) -> None:
        self.llm = llm
        self.capacity = capacity_bytes
        self._states: OrderedDict[tuple[int, ...], bytes] = OrderedDict()

    @property
    def size(self) -> int:
        return sum(len(state) for state in self._states.values())

    def __len__(self) -> int:
        return len(self._states)

    def prepare(self, tokens: list[int]) -> int:
        """Before ``tokens`` are processed: keep the context if the prompt would overwrite
        much of it, bring back a saved state that shares more of ``tokens`` than the
        context does, and return how many leading tokens are held (need no processing)."""
        held = self.llm._input_ids.tolist()
        in_context = common_prefix(held, tokens)
        if self.capacity <= 0:
            return in_context
        best_key, best = None, in_context
        for key in self._states:
            shared = common_prefix(key, tokens)
            if shared > best:
                best_key, best = key, shared
        if len(held) - in_context >= MIN_SAVED_TOKENS:
            self._save(tuple(held))
        if best_key is not None:
            self._restore(best_key)
            return best
        return in_context

    def _save(self, key: tuple[int, ...]) -> None:
        import llama_cpp

        ctx = self.llm._ctx.ctx
        size = llama_cpp.llama_state_get_size(ctx)
        if size > self.capacity:
            return
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_get_data(ctx, buffer, size)
        self._states.pop(key, None)
        self._states[key] = bytes(memoryview(buffer)[:written])
        while self.size > self.capacity and len(self._states) > 1:
            self._states.popitem(last=False)

    def _restore(self, key: tuple[int, ...]) -> None:
        import llama_cpp

        state = self._states[key]
        self._states.move_to_end(key)
        buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if llama_cpp.llama_state_set_data(self.llm._ctx.ctx, buffer, len(state)) != len(state):
            raise RuntimeError("could not restore a saved model state")
        self.llm.input_ids[: len(key)] = key
        self.llm.n_tokens = len(key)
        self.llm._requires_eval = True  # the logits are the saved prompt's, not ours
