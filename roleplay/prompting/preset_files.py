"""Preset files: our own format, telling it from SillyTavern's, and reading the bytes.

Our format is the preset as the API shows it, marked so an import knows it:

    {"format": "roleplay-preset", "format_version": 1, "name": "...", "description": "...",
     "prompts": [...]}

A file is read as ours when it says so, or when it has no ``prompt_order`` and every prompt
has our ``injection`` object (a preset body pasted as it is); anything else goes to
:mod:`.sillytavern`. Pure: the service validates the prompts as for any other save.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from roleplay.prompting.sillytavern import PresetFileInvalid, import_sillytavern

NATIVE_FORMAT = "roleplay-preset"
NATIVE_VERSION = 1
# ``extensions`` holds what travels with a preset beside its prompts (its regex scripts,
# read by the import as from a SillyTavern preset).
# ``reasoning`` is SillyTavern's shape in both formats: ``{"add_to_prompts": bool}``.
REASONING = "reasoning"
NATIVE_KEYS = {
    "format", "format_version", "name", "description", "prompts", "extensions", REASONING
}  # fmt: skip


@dataclass(frozen=True)
class PresetFile:
    """What a file holds: prompts (JSON, not yet validated), the name and description it
    suggests, and the import report."""

    prompts: Any
    name: str | None = None
    description: str | None = None
    report: dict[str, Any] = field(default_factory=dict)
    # whether history replies carry their reasoning back (``reasoning.add_to_prompts``)
    reasoning_in_prompt: bool = False


def native_file(name: str, description: str, prompts: list[dict]) -> dict[str, Any]:
    return {
        "format": NATIVE_FORMAT,
        "format_version": NATIVE_VERSION,
        "name": name,
        "description": description,
        "prompts": prompts,
    }


def _is_native(data: dict) -> bool:
    if "format" in data:
        return data["format"] == NATIVE_FORMAT
    prompts = data.get("prompts")
    return (
        "prompt_order" not in data
        and isinstance(prompts, list)
        and bool(prompts)
        and all(isinstance(p, dict) and isinstance(p.get("injection"), dict) for p in prompts)
    )


def _text(data: dict, key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise PresetFileInvalid(message=f"{key} must be text")
    return value


def read_preset_file(data: Any) -> PresetFile:
    """A decoded file (ours or SillyTavern's) as a :class:`PresetFile`."""
    if not isinstance(data, dict):
        raise PresetFileInvalid(message="a preset file is a JSON object")
    if "format" in data and data["format"] != NATIVE_FORMAT:
        raise PresetFileInvalid(message=f"unknown preset format {str(data['format'])[:50]!r}")
    if not _is_native(data):
        prompts, report = import_sillytavern(data)
        return PresetFile(
            prompts, report=report.as_dict(), reasoning_in_prompt=_reasoning_in_prompt(data)
        )
    unknown = sorted(set(data) - NATIVE_KEYS)
    if unknown:
        raise PresetFileInvalid(message=f"unknown keys: {', '.join(unknown)[:200]}")
    if data.get("format_version", NATIVE_VERSION) != NATIVE_VERSION:
        raise PresetFileInvalid(message=f"format_version {NATIVE_VERSION} is the one we read")
    return PresetFile(
        data.get("prompts"),
        name=_text(data, "name"),
        description=_text(data, "description"),
        report={"format": "native"},
        reasoning_in_prompt=_reasoning_in_prompt(data),
    )


def _reasoning_in_prompt(data: dict) -> bool:
    """``reasoning.add_to_prompts`` when the file says ``true``; anything else is off."""
    reasoning = data.get(REASONING)
    return isinstance(reasoning, dict) and reasoning.get("add_to_prompts") is True


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode_json(raw: bytes) -> Any:
    """The bytes of an uploaded file as JSON: UTF-8 (a BOM is allowed), no ``NaN`` or
    ``Infinity``, nesting the parser can hold; else :class:`PresetFileInvalid`."""
    try:
        return json.loads(raw.decode("utf-8-sig"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise PresetFileInvalid(message=f"the file is not JSON text: {str(exc)[:200]}") from exc
