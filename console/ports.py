"""A port: one answer a capability asks for, registered by the app that has it.

A capability (worldbook, memory, story) never imports the runtime (``roleplay``), yet its
doors show and resolve the runtime's conversations and characters, and memory's REST door
hands some requests to the runtime's services. The capability names what it needs as a
typed record (``console.owners.Owners``, ``memory.runtime.MemoryRuntime``) behind a
:class:`Port`; the runtime registers the record when its app is ready (``roleplay.apps``),
and the doors ask the port when a request comes in.
"""

from __future__ import annotations

from typing import Generic, TypeVar

T = TypeVar("T")


class Port(Generic[T]):
    """One registered answer of type ``T``; registering again replaces it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._answer: T | None = None

    def register(self, answer: T) -> None:
        self._answer = answer

    def get(self) -> T:
        if self._answer is None:
            raise LookupError(f"{self.name}: nothing registered (the runtime does when ready)")
        return self._answer
