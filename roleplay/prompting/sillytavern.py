"""SillyTavern chat-completion presets: their ``prompts`` + ``prompt_order`` to ours and back.

**Their format** (``default/content/presets/openai/Default.json``): ``prompts`` is a library
of ``{identifier, name, role, content, system_prompt, marker, injection_position (0
relative, 1 in the chat), injection_depth, injection_order, forbid_overrides,
injection_trigger}``; ``prompt_order`` lists ``{character_id, order: [{identifier,
enabled}]}``, where character 100001 is the global order of current versions and 100000
that of older ones. A library prompt the order does not list is not sent.

**Import** (:func:`import_sillytavern`) maps, and reports in :class:`ImportReport`
(a file from before their prompt manager is first upgraded by :mod:`.sillytavern_legacy`):

- identifiers: ``nsfw`` -> ``auxiliary``, ``jailbreak`` -> ``postHistoryInstructions``;
  ``main``, ``enhanceDefinitions``, the markers and custom prompts keep theirs (an
  identifier our pattern refuses is rewritten); ``userInput`` is added right after
  ``chatHistory`` (their history ends with the input);
- the order: the 100001 list, else 100000, else the first; prompts it does not list are
  kept as ``position: none`` (stored, not sent; their own ``enabled`` kept, so role
  templates of our export come back usable), markers among them as disabled;
- ``injection_position`` 1 -> ``at_depth`` with their depth and order (SillyTavern sends
  higher orders later at one depth: our ascending order); ``forbid_overrides`` as is;
- ``personality_format`` / ``scenario_format`` become the ``charPersonality`` /
  ``scenario`` marker wrappers;
- what cannot map is reported, never dropped in silence: unknown markers, order entries
  without a prompt, ``injection_trigger`` (our prompts go to every kind of turn), a
  disabled ``chatHistory`` (the history is always sent). Sampler settings (temperature,
  top_p, max tokens, context size...) are **reported, not applied**: they belong to a model
  config, which an import never changes; the report names the model config field of each.

**Export** (:func:`export_sillytavern`) writes a file SillyTavern imports: every prompt with
the keys of their default preset's prompts, the Actor's list as the order of both 100000 and
100001, role templates and other unplaced prompts in the library only. It cannot carry the
``charDescription``, ``personaDescription`` and ``dialogueExamples`` wrappers (SillyTavern
has no setting for them) nor ``userInput``; prompts between ``chatHistory`` and
``userInput`` go in the chat at depth 1, which is the same place. Each loss is a note. The
``turnContext`` marker (the cache-aware layout) is exported as a marker in its place, which
SillyTavern ignores, and comes back after ``userInput`` on import, as in our default.

Pure: plain JSON in and out; the service validates the result as any other preset.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from console import failures
from roleplay.errors import RoleplayError
from roleplay.prompting.presets import (
    AUXILIARY,
    CHAT_HISTORY,
    DEFAULT_ORDER,
    MARKERS,
    MAX_DEPTH,
    MAX_IDENTIFIER_CHARS,
    MAX_NAME_CHARS,
    ORDER_LIMIT,
    POST_HISTORY,
    ROLES,
    TURN_CONTEXT,
    USER_INPUT,
    Prompt,
)
from roleplay.prompting.sillytavern_legacy import is_legacy, upgrade

FORMAT = "sillytavern"
GLOBAL_ORDERS = (100001, 100000)
ST_DEFAULT_DEPTH = 4
TO_OURS = {"nsfw": AUXILIARY, "jailbreak": POST_HISTORY}
TO_THEIRS = {ours: theirs for theirs, ours in TO_OURS.items()}
# Their built-in prompts (``system_prompt: true``): not deletable in their editor.
BUILT_IN = ("main", "nsfw", "jailbreak", "enhanceDefinitions")
# Their settings a model config holds: setting -> ModelConfig field.
MODEL_CONFIG_SETTINGS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "openai_max_tokens": "max_output_tokens",
    "openai_max_context": "context_limit",
}
SAMPLER_SETTINGS = (
    "frequency_penalty",
    "presence_penalty",
    "top_k",
    "top_a",
    "min_p",
    "repetition_penalty",
    "seed",
    "n",
)
# Their format settings that are our marker wrappers: setting -> (marker, its field macro).
FORMAT_SETTINGS = {
    "personality_format": ("charPersonality", "{{personality}}"),
    "scenario_format": ("scenario", "{{scenario}}"),
}
_BAD_ID_CHARS = re.compile(r"[^A-Za-z0-9_.:-]")


class PresetFileInvalid(RoleplayError, failures.BadRequest):
    """The file is not a preset we can read (400 ``preset_file_invalid``)."""

    default_code = "preset_file_invalid"


@dataclass
class ImportReport:
    """What an import kept, changed, added and could not map; the console shows it."""

    format: str = FORMAT
    order: str = ""
    mapped: list[dict] = field(default_factory=list)
    added: list[dict] = field(default_factory=list)
    changed: list[dict] = field(default_factory=list)
    dropped: list[dict] = field(default_factory=list)
    unplaced: list[str] = field(default_factory=list)
    model_config_settings: list[dict] = field(default_factory=list)
    ignored_settings: list[str] = field(default_factory=list)

    def note(self, kind: str, identifier: str, reason: str, **extra: Any) -> None:
        entry = {"identifier": identifier[:MAX_IDENTIFIER_CHARS], "reason": reason, **extra}
        getattr(self, kind).append(entry)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _json_value(value: Any) -> Any:
    """A setting's value as the report can hold it (JSON, finite, 64-bit, short)."""
    if isinstance(value, list) and len(value) <= 20:
        return [_json_value(item) for item in value]
    if value is None or isinstance(value, bool | str) and len(str(value)) <= 200:
        return value
    if isinstance(value, int) and abs(value) < 2**53:
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    return repr(value)[:200]


def _int(value: Any, default: int, low: int, high: int) -> int:
    """Their numbers arrive as numbers or digit strings; out of range is clamped."""
    if isinstance(value, bool):
        return default
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]{1,12}", value.strip()):
        value = int(value)
    if isinstance(value, float) and math.isfinite(value):
        value = int(value)
    if not isinstance(value, int):
        return default
    return max(low, min(high, value))


class _Identifiers:
    """Their identifiers to ours: renamed built-ins, then rewritten where our pattern
    refuses them, unique; ``userInput`` is ours alone."""

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.taken = {USER_INPUT}

    def map(self, theirs: str) -> str:
        ours = TO_OURS.get(theirs, theirs)
        if ours != theirs:
            self.report.mapped.append({"from": theirs, "to": ours})
        clean = _BAD_ID_CHARS.sub("_", ours)[:MAX_IDENTIFIER_CHARS] or "prompt"
        candidate, n = clean, 1
        while candidate in self.taken:
            n += 1
            candidate = f"{clean[: MAX_IDENTIFIER_CHARS - 4]}-{n}"
        if candidate != ours:
            reason = "not usable as an identifier here (letters, digits, _ . : - only; unique)"
            self.report.note("changed", theirs, reason, to=candidate)
        self.taken.add(candidate)
        return candidate


def _order_list(data: dict, report: ImportReport, library: dict) -> list[tuple[str, bool]]:
    orders = data.get("prompt_order")
    if orders is None:
        report.order = "no prompt_order: the prompts in file order, all enabled"
        return [(identifier, True) for identifier in library]
    if not isinstance(orders, list) or not all(isinstance(o, dict) for o in orders):
        raise PresetFileInvalid(message="prompt_order must be a list of objects")
    chosen = next(
        (o for gid in GLOBAL_ORDERS for o in orders if o.get("character_id") == gid),
        orders[0] if orders else {"order": []},
    )
    report.order = f"prompt_order of character_id {chosen.get('character_id')}"
    entries = chosen.get("order")
    if not isinstance(entries, list):
        raise PresetFileInvalid(message="prompt_order[].order must be a list")
    out: list[tuple[str, bool]] = []
    for entry in entries:
        identifier = entry.get("identifier") if isinstance(entry, dict) else None
        if not isinstance(identifier, str) or identifier not in library:
            report.note("dropped", str(identifier), "the order names no prompt of the file")
        elif any(identifier == seen for seen, _ in out):
            report.note("dropped", identifier, "listed twice in the order; the first is kept")
        else:
            out.append((identifier, entry.get("enabled", True) is not False))
    return out


def _prompt(raw: dict, ours: str, enabled: bool, placed: bool, report: ImportReport) -> dict:
    theirs = raw["identifier"]
    given = raw.get("name")
    name: str = given if isinstance(given, str) and given else theirs
    if len(name) > MAX_NAME_CHARS:
        report.note("changed", theirs, f"name cut to {MAX_NAME_CHARS} characters")
        name = name[:MAX_NAME_CHARS]
    role = raw.get("role", "system")
    if role not in ROLES:
        report.note("changed", theirs, f"role {role!r} is not system, user or assistant: system")
        role = "system"
    content = raw.get("content") if isinstance(raw.get("content"), str) else ""
    injection: dict[str, Any] = {"position": "relative" if placed else "none"}
    marker = ours in MARKERS
    if marker:
        if content:
            report.note("changed", theirs, "a marker takes its content from the card: dropped")
        content = ""
        if _int(raw.get("injection_position"), 0, 0, 1) == 1:
            report.note("changed", theirs, "markers stay in the list: in-chat position dropped")
        if not placed:  # a marker is always in the list; unlisted means not sent
            injection, enabled = {"position": "relative"}, False
    elif placed and _int(raw.get("injection_position"), 0, 0, 1) == 1:
        injection = {
            "position": "at_depth",
            "depth": _int(raw.get("injection_depth"), ST_DEFAULT_DEPTH, 0, MAX_DEPTH),
            "order": _int(raw.get("injection_order"), DEFAULT_ORDER, -ORDER_LIMIT, ORDER_LIMIT),
        }
    if raw.get("injection_trigger"):
        reason = "sent only for some generation types there; here for every turn"
        report.note("changed", theirs, reason, triggers=_json_value(raw["injection_trigger"]))
    return {
        "identifier": ours,
        "name": name,
        "role": role,
        "content": content,
        "enabled": enabled,
        "injection": injection,
        "forbid_overrides": raw.get("forbid_overrides") is True,
    }


def import_sillytavern(data: Any) -> tuple[list[dict], ImportReport]:
    """Their preset as our prompts (JSON, not yet validated) and the report."""
    legacy = is_legacy(data)
    if legacy:
        data = upgrade(data)
    if not isinstance(data, dict) or not isinstance(data.get("prompts"), list):
        raise PresetFileInvalid(message="a SillyTavern preset is an object with a prompts list")
    report = ImportReport()
    if legacy:
        report.note(
            "changed",
            "main",
            "a preset from before the prompt manager: its "
            "main_prompt, nsfw_prompt and jailbreak_prompt fill the default prompts",
        )
    library: dict[str, dict] = {}
    for raw in data["prompts"]:
        identifier = raw.get("identifier") if isinstance(raw, dict) else None
        if not isinstance(identifier, str) or not identifier:
            report.note("dropped", str(identifier), "a prompt without an identifier")
        elif identifier in library:
            report.note("dropped", identifier, "a second prompt with this identifier")
        elif raw.get("marker") is True and identifier not in MARKERS:
            report.note("dropped", identifier, "a marker this platform does not fill")
        else:
            library[identifier] = raw
    order = _order_list(data, report, library)
    ids = _Identifiers(report)
    listed = {identifier for identifier, _ in order}
    prompts = [_prompt(library[i], ids.map(i), enabled, True, report) for i, enabled in order]
    for identifier, raw in library.items():
        if identifier not in listed:
            enabled = raw.get("enabled", True) is not False
            prompts.append(_prompt(raw, ids.map(identifier), enabled, False, report))
            report.unplaced.append(identifier)
    prompts = _with_history_and_input(prompts, report)
    _settings(data, prompts, report)
    return prompts, report


def _with_history_and_input(prompts: list[dict], report: ImportReport) -> list[dict]:
    """``chatHistory`` placed and enabled, ``userInput`` right after it."""
    history = next((p for p in prompts if p["identifier"] == CHAT_HISTORY), None)
    if history is None:
        history = {"identifier": CHAT_HISTORY, "name": "Chat History", "role": "system"}
        history.update(content="", enabled=True, injection={"position": "relative"})
        history["forbid_overrides"] = False
        placed = [p for p in prompts if p["injection"]["position"] != "none"]
        prompts.insert(len(placed), history)
        report.note("added", CHAT_HISTORY, "the file has none: the history goes last")
    elif not history["enabled"]:
        history["enabled"] = True
        report.note("changed", CHAT_HISTORY, "enabled: the history is always sent here")
    index = prompts.index(history)
    user_input = dict(history, identifier=USER_INPUT, name="User Input")
    prompts.insert(index + 1, user_input)
    report.note("added", USER_INPUT, "the player's message, right after the history")
    return prompts


def _settings(data: dict, prompts: list[dict], report: ImportReport) -> None:
    markers = {p["identifier"]: p for p in prompts}
    for key in sorted(k for k in data if k not in ("prompts", "prompt_order")):
        value = data[key]
        if key in MODEL_CONFIG_SETTINGS or key in SAMPLER_SETTINGS:
            report.model_config_settings.append(
                {
                    "setting": key,
                    "value": _json_value(value),
                    "model_config_field": MODEL_CONFIG_SETTINGS.get(key, "extra"),
                }
            )
        elif key in FORMAT_SETTINGS and isinstance(value, str):
            marker, macro = FORMAT_SETTINGS[key]
            if value.strip() in ("", macro):
                continue
            if marker in markers and macro.lower() in value.lower():
                markers[marker]["content"] = value
                report.mapped.append({"from": key, "to": f"{marker} wrapper"})
            else:
                report.ignored_settings.append(key)
        else:
            report.ignored_settings.append(key)


# --- export -------------------------------------------------------------------------------


def _their_prompt(p: Prompt, st_id: str, injection: dict[str, int]) -> dict:
    return {
        "identifier": st_id,
        "name": p.name,
        "system_prompt": st_id in BUILT_IN or p.is_marker,
        "marker": p.is_marker,
        "role": p.role,
        "content": "" if p.is_marker else p.content,
        "injection_position": injection.get("position", 0),
        "injection_depth": injection.get("depth", ST_DEFAULT_DEPTH),
        "injection_order": injection.get("order", DEFAULT_ORDER),
        "forbid_overrides": p.forbid_overrides,
        "enabled": p.enabled,
    }


def export_sillytavern(prompts: Sequence[Prompt]) -> tuple[dict, list[str]]:
    """Our prompts as their preset file, and notes on what it cannot carry."""
    notes: list[str] = []
    library, order = [], []
    settings: dict[str, str] = {}
    between = False  # after chatHistory, before userInput
    gap_order = DEFAULT_ORDER
    for p in prompts:
        if p.identifier == USER_INPUT:
            between = False
            continue
        st_id = TO_THEIRS.get(p.identifier, p.identifier)
        injection: dict[str, int] = {}
        if p.injection.position == "at_depth":
            injection = {"position": 1, "depth": p.injection.depth, "order": p.injection.order}
        elif between and p.placed and p.identifier != TURN_CONTEXT:
            injection = {"position": 1, "depth": 1, "order": gap_order}
            gap_order += 1
            notes.append(f"{p.identifier}: sent in the chat at depth 1 (before the input)")
        library.append(_their_prompt(p, st_id, injection))
        if p.placed:
            order.append({"identifier": st_id, "enabled": p.enabled})
        if p.is_marker and p.content:
            setting = next((k for k, (m, _) in FORMAT_SETTINGS.items() if m == p.identifier), None)
            if setting:
                settings[setting] = p.content
            else:
                notes.append(f"{p.identifier}: its wrapper has no SillyTavern setting: dropped")
        between = between or p.identifier == CHAT_HISTORY
    data: dict[str, Any] = {
        "prompts": library,
        "prompt_order": [
            {"character_id": gid, "order": [dict(e) for e in order]}
            for gid in sorted(GLOBAL_ORDERS)
        ],
        **settings,
    }
    return data, notes
