"""Writes of presets: create, compare-and-set update, delete, import.

Every door (REST, console, seed data) saves prompts through :func:`create_preset` and
:func:`update_preset`, so the preset rules (``roleplay.prompting.presets``) hold for every
stored preset. ``version`` moves on every update, which is one conditional UPDATE on the
version the editor read: a stale write is :class:`PresetVersionConflict` (409
``revision_conflict`` with the current version), never a silent overwrite.

Deleting a preset that model configs use is refused (409 ``preset_in_use`` naming them)
unless the caller says ``detach``: the configs then use the shipped default preset, which
is also what their foreign key's ``SET_NULL`` means. The console asks before detaching.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from console import failures
from roleplay.errors import FieldErrors, NotFound, RoleplayError
from roleplay.models import ModelConfig, Preset
from roleplay.prompting.default_preset import default_prompt_data
from roleplay.prompting.preset_files import read_preset_file
from roleplay.prompting.presets import MAX_NAME_CHARS, dump_prompts, validate_prompts
from roleplay.regex_scripts import services as regex_scripts
from roleplay.services import rows

PRESET_FIELDS = ("name", "description", "prompts", "reasoning_in_prompt")
MAX_DESCRIPTION_CHARS = 2000


class PresetVersionConflict(RoleplayError, failures.Conflict):
    """Another save moved the preset past the version the caller edited (409
    ``revision_conflict``); ``details.current_version`` is the version to retry against."""

    default_code = "revision_conflict"

    def __init__(self, current: int, expected: int) -> None:
        super().__init__(
            message=f"the preset is at version {current}, not {expected}; reload and retry",
            details={
                "current_version": current,
                "expected_version": expected,
                "current_revision": current,
            },
        )


class PresetInUse(RoleplayError, failures.Conflict):
    """Model configs use the preset (409 ``preset_in_use``); ``details.model_configs`` names
    them. Delete with ``detach`` to move them to the shipped default preset."""

    default_code = "preset_in_use"

    def __init__(self, configs: list[dict]) -> None:
        names = ", ".join(c["name"] for c in configs[:5])
        super().__init__(
            message=f"{len(configs)} model config(s) use this preset ({names}); "
            "delete with detach to move them to the shipped default preset",
            details={"model_configs": configs},
        )


def _normalized(fields: dict) -> dict:
    """``fields`` with ``prompts`` validated and in their stored form."""
    if "prompts" in fields:
        fields = {**fields, "prompts": dump_prompts(validate_prompts(fields["prompts"]))}
    return fields


def _rules(preset: Preset) -> dict[str, list[str]]:
    # TextField.max_length is not a validator: the description's limit is checked here.
    if len(preset.description or "") > MAX_DESCRIPTION_CHARS:
        return {"description": [f"at most {MAX_DESCRIPTION_CHARS} characters"]}
    return {}


def create_preset(
    tenant,
    *,
    name: str,
    description: str = "",
    prompts: list | None = None,
    reasoning_in_prompt: bool = False,
) -> Preset:
    """A new preset of the tenant; without ``prompts`` it starts as a copy of the shipped
    default's."""
    fields = {
        "name": name,
        "description": description,
        "prompts": default_prompt_data() if prompts is None else prompts,
        "reasoning_in_prompt": reasoning_in_prompt,
    }
    return rows.write(
        Preset(tenant=tenant),
        _normalized(fields),
        allowed=PRESET_FIELDS,
        update=False,
        rules=_rules,
    )


def update_preset(preset: Preset, *, version: int, **fields) -> Preset:
    """Change ``fields`` of a preset still at ``version`` (else 409); the version moves."""
    fields = _normalized(fields)
    rows.assign(preset, fields, PRESET_FIELDS)
    rows.check(preset, _rules(preset))
    rows.compare_and_set(preset, fields, version=version, conflict=PresetVersionConflict)
    return preset


@transaction.atomic
def delete_preset(preset: Preset, *, detach: bool = False) -> int:
    """Delete the preset; returns how many model configs moved to the shipped default.

    The row is locked first: a config being pointed at it meanwhile (its foreign key takes
    a share lock on the row) waits, then fails, instead of keeping a dangling choice.
    """
    locked = Preset.objects.select_for_update().filter(pk=preset.pk, tenant_id=preset.tenant_id)
    if not locked.exists():
        raise NotFound(message="this preset no longer exists")
    users = ModelConfig.objects.filter(tenant_id=preset.tenant_id, preset_id=preset.pk)
    configs = [
        {"id": str(c["id"]), "name": c["name"]} for c in users.order_by("name").values("id", "name")
    ]
    if configs and not detach:
        raise PresetInUse(configs)
    users.update(preset=None)
    locked.delete()
    return len(configs)


def import_preset(
    tenant, data, *, name: str | None = None, description: str | None = None, filename: str = ""
) -> tuple[Preset, dict]:
    """A new preset from a decoded file, ours or SillyTavern's, and its import report.

    The name is ``name``, else the one the file carries (ours), else the file's name without
    its extension; the prompts pass the same rules as any other save.
    """
    parsed = read_preset_file(data)
    stem = filename.rsplit("/", 1)[-1].rsplit(".", 1)[0].strip()[:MAX_NAME_CHARS]
    chosen = name or parsed.name or stem
    if not chosen:
        raise FieldErrors({"name": ["give the preset a name: the file does not have one"]})
    with transaction.atomic():
        preset = create_preset(
            tenant,
            name=chosen,
            description=description if description is not None else parsed.description or "",
            prompts=parsed.prompts,
            reasoning_in_prompt=parsed.reasoning_in_prompt,
        )
        report = dict(parsed.report)
        scripts = _regex_scripts_of(data)
        if scripts is not None:  # SillyTavern presets carry them (``regex_scripts``)
            report["regex_scripts"] = regex_scripts.import_scripts(tenant, scripts, preset=preset)
    return preset, report


def _regex_scripts_of(data) -> object:
    """The regex scripts a preset file carries: SillyTavern's ``extensions.regex_scripts``,
    then those the SPreset extension binds to it (``extensions.SPreset.RegexBinding.regexes``,
    common in Chinese presets), each script once (by its ``id``)."""
    extensions = data.get("extensions") if isinstance(data, dict) else None
    if not isinstance(extensions, dict):
        return None
    scripts = extensions.get(regex_scripts.REGEX_SCRIPTS)
    spreset = extensions.get("SPreset")
    binding = spreset.get("RegexBinding") if isinstance(spreset, dict) else None
    bound = binding.get("regexes") if isinstance(binding, dict) else None
    if not isinstance(bound, list) or not bound:
        return scripts
    if scripts is None:
        return bound
    if not isinstance(scripts, list):
        return scripts  # refused by the import, which names the field
    seen = {_script_id(s) for s in scripts} - {None}
    return scripts + [s for s in bound if _script_id(s) is None or _script_id(s) not in seen]


def _script_id(script: Any) -> str | None:
    value = script.get("id") if isinstance(script, dict) else None
    return value if isinstance(value, str) and value else None
