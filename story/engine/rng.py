"""The story's seeded dice: mulberry32, a 32-bit generator whose whole state is one integer
saved in the snapshot, so the same seed gives byte-identical snapshots and a restored turn
can prove it drew nothing (``draws`` is unchanged)."""

from __future__ import annotations

from dataclasses import dataclass

MASK = 0xFFFFFFFF
_STEP = 0x6D2B79F5


@dataclass
class Rng:
    state: int
    draws: int = 0

    @classmethod
    def seeded(cls, seed: int) -> Rng:
        if not 0 <= seed <= MASK:
            raise ValueError("seed must be within 0..2**32-1")
        return cls(state=seed)

    def next_u32(self) -> int:
        self.state = (self.state + _STEP) & MASK
        t = self.state
        t = ((t ^ (t >> 15)) * (t | 1)) & MASK
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & MASK)) & MASK
        self.draws += 1
        return (t ^ (t >> 14)) & MASK

    def below(self, n: int) -> int:
        """A uniform integer in ``0..n-1`` (``n`` ≥ 1)."""
        if n < 1:
            raise ValueError("n must be at least 1")
        return self.next_u32() % n

    def d100(self) -> int:
        """A roll of 1..100."""
        return self.below(100) + 1

    def as_json(self) -> dict:
        return {"state": self.state, "draws": self.draws}

    @classmethod
    def from_json(cls, data: dict) -> Rng:
        return cls(state=int(data["state"]) & MASK, draws=int(data.get("draws", 0)))
