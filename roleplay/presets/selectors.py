"""Reads of presets: the console's list, who uses a preset, and the preset a model config
applies (its own, else the shipped default), loaded and checked once per saved version.

A stored preset passed the rules when it was saved; loading checks it again (rules may have
grown since), so a capability always holds prompts that keep every rule, and a preset that
no longer does fails with :class:`~roleplay.prompting.presets.PresetInvalid` naming the
problem instead of reaching a model. The check runs once per (preset, version) in a process:
``version`` moves on every save, so a cached load is never stale.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from console.lists import row_count
from console.scoping import scoped
from roleplay.models import ModelConfig, Preset
from roleplay.prompting.default_preset import default_preset
from roleplay.prompting.preset_files import REASONING, native_file
from roleplay.prompting.presets import LoadedPreset, dump_prompts, validate_prompts
from roleplay.prompting.sillytavern import export_sillytavern
from roleplay.regex_scripts import selectors as regex_selectors
from roleplay.regex_scripts.services import REGEX_SCRIPTS

CACHE_SIZE = 256
EXPORT_FORMATS = ("native", "sillytavern")


class _Loaded:
    """Loaded presets by (id, version), least recently used first."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[str, int], LoadedPreset] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, row: Preset) -> LoadedPreset:
        key = (str(row.pk), row.version)
        with self._lock:
            hit = self._entries.get(key)
            same = hit is not None and hit.reasoning_in_prompt == row.reasoning_in_prompt
            if hit is not None and same and hit.name == row.name:
                self._entries.move_to_end(key)
                return hit
        loaded = LoadedPreset(
            tuple(validate_prompts(row.prompts)),
            name=row.name,
            id=key[0],
            version=row.version,
            reasoning_in_prompt=row.reasoning_in_prompt,
        )
        with self._lock:
            self._entries[key] = loaded
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return loaded


LOADED = _Loaded()


def load_preset(row: Preset) -> LoadedPreset:
    """``row``'s prompts, checked by every preset rule, with its name, id and version."""
    return LOADED.get(row)


def effective_preset(config: ModelConfig | None) -> LoadedPreset:
    """The preset ``config`` applies: its own, else the shipped default (also for no config,
    or the ``LLM_*`` settings' config, which has no preset). A ``config.preset`` already
    fetched (``select_related("preset")``) costs no query."""
    preset_id = getattr(config, "preset_id", None)
    if config is None or preset_id is None:
        return default_preset()
    row = config.preset if ModelConfig.preset.is_cached(config) else None
    if row is None or row.tenant_id != config.tenant_id:
        row = Preset.objects.filter(pk=preset_id, tenant_id=config.tenant_id).first()
    return default_preset() if row is None else load_preset(row)


def preset_list(tenant):
    """The tenant's presets by name, each with how many model configs use it."""
    return (
        scoped(Preset, tenant)
        .annotate(model_config_count=row_count(ModelConfig, tenant, "preset"))
        .order_by("name", "created_at")
    )


def preset_users(preset: Preset) -> list[ModelConfig]:
    """The model configs that use ``preset``, by name."""
    return list(
        ModelConfig.objects.filter(tenant_id=preset.tenant_id, preset=preset).order_by("name")
    )


def export_preset(preset: Preset, fmt: str) -> tuple[dict, list[str]]:
    """The preset as a file of ``fmt`` (``native`` or ``sillytavern``) and notes on what
    that format cannot carry; its regex scripts go where SillyTavern keeps a preset's
    (``extensions.regex_scripts``), which the import of either format reads back."""
    loaded = load_preset(preset)
    if fmt == "sillytavern":
        data, notes = export_sillytavern(loaded.prompts)
        data[REASONING] = {"add_to_prompts": preset.reasoning_in_prompt}
    else:
        data = native_file(preset.name, preset.description, dump_prompts(loaded.prompts))
        data[REASONING] = {"add_to_prompts": preset.reasoning_in_prompt}
        notes = []
    scripts = regex_selectors.owned(preset.tenant_id, scope="preset", preset=preset)
    if scripts:
        extensions = data.setdefault("extensions", {})
        extensions[REGEX_SCRIPTS] = [row.script for row in scripts]
    return data, notes
