"""The typed samplers of a text-completion model config: their ranges (one table, which the
model's field validators, the REST schema and the console form all read) and each server's
own name for each of them. A sampler left unset (None) is never sent: the server's default
applies."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

WIRES = ("koboldcpp", "llamacpp", "openai_completions")


@dataclass(frozen=True)
class Sampler:
    """A sampler field: its type, inclusive range and the name each wire gives it."""

    name: str
    kind: type
    low: float
    high: float
    koboldcpp: str
    llamacpp: str
    openai_completions: str
    help: str


def _s(name: str, kind: type, low: float, high: float, kobold: str, llama: str, help: str):
    return Sampler(name, kind, low, high, kobold, llama, name, help)


SAMPLERS: tuple[Sampler, ...] = (
    _s("top_k", int, 0, 1000, "top_k", "top_k", "Keep the k likeliest tokens (0: off)."),
    _s("min_p", float, 0.0, 1.0, "min_p", "min_p", "Drop tokens under this share of the top one."),
    _s("typical_p", float, 0.0, 1.0, "typical", "typical_p", "Locally typical sampling (1: off)."),
    _s("repetition_penalty", float, 1.0, 3.0, "rep_pen", "repeat_penalty",
       "Penalty on tokens already seen (1: off)."),
    _s("repetition_penalty_range", int, 0, 131072, "rep_pen_range", "repeat_last_n",
       "How many recent tokens the penalty looks at (0: none)."),
    _s("dry_multiplier", float, 0.0, 5.0, "dry_multiplier", "dry_multiplier",
       "DRY: strength against repeated sequences (0: off)."),
    _s("dry_base", float, 1.0, 4.0, "dry_base", "dry_base", "DRY: growth of the penalty."),
    _s("dry_allowed_length", int, 1, 20, "dry_allowed_length", "dry_allowed_length",
       "DRY: longest repeat left unpunished."),
    _s("xtc_threshold", float, 0.0, 0.5, "xtc_threshold", "xtc_threshold",
       "XTC: tokens above this probability may be excluded."),
    _s("xtc_probability", float, 0.0, 1.0, "xtc_probability", "xtc_probability",
       "XTC: chance that the exclusion applies (0: off)."),
    _s("mirostat_mode", int, 0, 2, "mirostat", "mirostat", "Mirostat version (0: off, 1, 2)."),
    _s("mirostat_tau", float, 0.0, 20.0, "mirostat_tau", "mirostat_tau", "Mirostat: target."),
    _s("mirostat_eta", float, 0.0, 1.0, "mirostat_eta", "mirostat_eta", "Mirostat: rate."),
)  # fmt: skip
SAMPLER_NAMES = tuple(s.name for s in SAMPLERS)
_BY_NAME = {s.name: s for s in SAMPLERS}


class SamplerError(ValueError):
    """A sampler value out of its range or of the wrong type (``field`` names it)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def check_samplers(values: Mapping[str, Any]) -> dict[str, float | int]:
    """The set samplers of ``values`` (None left out), each checked against its range."""
    checked: dict[str, float | int] = {}
    for name, value in values.items():
        sampler = _BY_NAME.get(name)
        if sampler is None:
            raise SamplerError(name, f"unknown sampler {name}")
        if value is None:
            continue
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        if not numeric or (sampler.kind is int and not float(value).is_integer()):
            raise SamplerError(
                name, f"{name} must be {'a whole number' if sampler.kind is int else 'a number'}"
            )
        if not sampler.low <= value <= sampler.high:
            raise SamplerError(name, f"{name} must be between {sampler.low:g} and {sampler.high:g}")
        checked[name] = sampler.kind(value)
    return checked


def wire_samplers(wire: str, values: Mapping[str, Any]) -> dict[str, float | int]:
    """The set samplers under ``wire``'s own field names (``koboldcpp``'s ``rep_pen``...)."""
    if wire not in WIRES:
        raise ValueError(f"unknown wire {wire!r}")
    return {getattr(_BY_NAME[n], wire): v for n, v in check_samplers(values).items()}
