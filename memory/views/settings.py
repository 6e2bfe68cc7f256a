"""Console page of memory settings: the tenant's, and each character's override.

One form per scope with every field of ``memory.engine.config`` (a checkbox per boolean with
a "set here" box, number inputs within ``RANGES``, the document slot, the consolidation
object as JSON); an empty field is not stored, so it inherits (the deployment's defaults for
the tenant, the tenant's settings for a character), and the inherited value is shown as the
placeholder. Save replaces the scope's stored settings (``put_settings``) with the fields
filled in; "Remove override" deletes a character's (``delete_settings``).

Roles, as for the other settings-like pages (model configs: admins write the tenant-wide
ones): everyone reads; the tenant's settings are an admin's to change; a character's
override is an operator's. A refused write is a flash message and its 4xx status (a value
out of range names the field, 422) and stores nothing.
"""

from __future__ import annotations

import json
import uuid

from django.contrib import messages as flash
from django.shortcuts import redirect, render
from django.urls import reverse

from console.access import console_view, has_role
from console.failures import DomainError
from console.models import Role
from console.owners import character_model
from console.refusals import refused
from console.scoping import scoped
from console.storable import unstorable_at
from memory.configs import selectors as config_reads
from memory.configs import services as config_writes
from memory.engine.config import BOOLEANS, FIELDS, PER_PLAYER, RANGES, as_dict
from memory.engine.consolidation import Settings
from memory.engine.consolidation import as_dict as as_settings
from memory.errors import MemoryInvalid, MemoryNotFound
from memory.models import MemorySettings

MAX_JSON_CHARS = 20_000
CHARACTER_FIELDS = tuple(name for name in FIELDS if name not in PER_PLAYER)
JSON_FIELDS = ("consolidation", "embedder")
HELP = {
    "enabled": "Learn, select and place memory at all.",
    "learn_from_rules": "Learn from the local rules of a chat turn.",
    "max_entries": "Entries one player may hold (per player: the tenant's value counts).",
    "max_handoffs": "Handoffs one player may hold (per player: the tenant's value counts).",
    "max_selected": "Preferences and agreements placed per turn.",
    "max_selected_chars": "Their characters in all.",
    "temporary_days": "Days before a rule-found temporary preference expires.",
    "document_tools": "The Actor may read and replace the conversation's JSON document.",
    "document_slot": "The slot of that document: letters, digits, _ . : - (at most 64).",
    "document_commit": "When the Actor's changes to it are stored: immediate, or on_accept "
    "(held until the player goes on from the reply; dropped if it is regenerated).",
    "memory_table": "The Actor reads the conversation's memory table (document slot "
    "table) and its replies' <tableEdit> calls change it.",
    "beliefs": "Build beliefs in the background from each player's facts and episodes (a "
    "model call per build).",
    "consolidation": "Background consolidation of the player's messages into review "
    "candidates: a JSON object (fields left out take their defaults: "
    + ", ".join(f"{k} {json.dumps(v)}" for k, v in as_settings(Settings()).items())
    + "), or null for all defaults (off). Switched on (here, or by memory coming on), it "
    "starts from the messages sent after that moment: what was said while it was off is "
    "never consolidated.",
    "embedder": "Recall's embedder (the tenant's alone): null for the local model, or "
    'an OpenAI-compatible endpoint: {"provider": "openai_compatible", "base_url": '
    '"https://host/v1", "model": "…", "api_key_env": "ENV_VAR_NAME", "dimensions": null, '
    '"timeout_ms": 10000, "batch_size": 32}. A change re-indexes recall in the background.',
    "diaries": "Write a diary episode of a conversation after its diary rounds.",
    "diary_first_round": "The round of a conversation's first diary.",
    "diary_every_rounds": "Rounds between one diary and the next.",
    "episode_recall_count": "Diary episodes a pre-turn memory pack may carry.",
}


def _invalid(field: str, message: str) -> MemoryInvalid:
    return MemoryInvalid("validation_error", f"{field}: {message}", {"field": field})


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _json(name: str, text: str):
    if len(text) > MAX_JSON_CHARS:
        raise _invalid(name, f"at most {MAX_JSON_CHARS} characters of JSON")
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise _invalid(name, f"not valid JSON ({exc})") from None
    found = unstorable_at(value, name)
    if found is not None:
        raise _invalid(name, found[1])
    return value


def _posted_data(post, fields) -> dict:
    """The fields filled in, typed; ``check_config`` (in the service) checks the values."""
    data = {}
    for name in fields:
        if name in BOOLEANS:
            if post.get(f"set_{name}"):
                data[name] = bool(post.get(name))
            continue
        text = post.get(name, "").strip()
        if not text:
            continue
        if name in RANGES:
            low, high = RANGES[name]
            try:
                data[name] = int(text)
            except ValueError:
                raise _invalid(name, f"must be an integer from {low} to {high}") from None
        elif name in JSON_FIELDS:
            data[name] = _json(name, text)
        else:
            found = unstorable_at(text, name)
            if found is not None:
                raise _invalid(name, found[1])
            data[name] = text
    return data


def _text(value) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None or isinstance(value, dict):
        return json.dumps(value)
    return str(value)


def _rows(fields, data: dict, inherited: dict, draft=None) -> list[dict]:
    """One form row per field: the stored (or, after a refusal, posted) value, and the
    inherited one as the placeholder."""
    rows = []
    for name in fields:
        row = {"name": name, "help": HELP.get(name, ""), "placeholder": _text(inherited[name])}
        if name in BOOLEANS:
            if draft is not None:
                is_set, on = bool(draft.get(f"set_{name}")), bool(draft.get(name))
            else:
                is_set = name in data
                on = data[name] if is_set else inherited[name]
            row |= {"kind": "boolean", "set": is_set, "checked": on}
        else:
            if draft is not None:
                value = draft.get(name, "")
            elif name in data:
                value = json.dumps(data[name], indent=2) if name in JSON_FIELDS else data[name]
            else:
                value = ""
            row |= {"value": value}
            if name in RANGES:
                row |= {"kind": "number", "min": RANGES[name][0], "max": RANGES[name][1]}
            else:
                row |= {"kind": "json" if name in JSON_FIELDS else "text"}
        rows.append(row)
    return rows


def _page(request, *, status=200, draft_scope=None, draft=None):
    tenant = request.tenant
    is_admin = has_role(request.membership, Role.ADMIN)
    can_edit = has_role(request.membership, Role.OPERATOR)
    names = {str(c.pk): c.name for c in scoped(character_model(), tenant).only("id", "name")}
    tenant_row = config_reads.stored(tenant)
    tenant_in_force = as_dict(config_reads.config_for(tenant))

    def draft_for(key):
        return draft if draft_scope == key else None

    forms = [
        {
            "key": "",
            "id": "settings-tenant",
            "title": "The tenant's settings",
            "note": "Empty fields follow the deployment's defaults (shown greyed).",
            "rows": _rows(
                FIELDS,
                tenant_row.data if tenant_row else {},
                as_dict(config_reads.defaults()),
                draft_for(""),
            ),
            "version": tenant_row.version if tenant_row else 0,
            "editable": is_admin,
            "removable": False,
            "choices": None,
        }
    ]
    overrides = (
        scoped(MemorySettings, tenant).exclude(character_id="").order_by("character_id")[:500]
    )
    overridden = set()
    for row in overrides:
        overridden.add(row.character_id)
        name = names.get(row.character_id, "")
        forms.append(
            {
                "key": row.character_id,
                "id": f"settings-{row.character_id}",
                "title": f"Override of {name}" if name else "Override of a deleted character",
                "note": "Empty fields follow the tenant's settings (shown greyed).",
                "rows": _rows(
                    CHARACTER_FIELDS, row.data, tenant_in_force, draft_for(row.character_id)
                ),
                "version": row.version,
                "editable": can_edit,
                "removable": can_edit,
                "choices": None,
            }
        )
    free = sorted(
        ((key, name) for key, name in names.items() if key not in overridden),
        key=lambda pair: pair[1].lower(),
    )
    new_draft = draft if draft_scope and draft_scope not in overridden else None
    if can_edit:
        forms.append(
            {
                "key": "",
                "id": "settings-new-override",
                "title": "Override for a character",
                "note": "Empty fields follow the tenant's settings (shown greyed).",
                "choices": free,
                "chosen": draft_scope if new_draft is not None else "",
                "rows": _rows(CHARACTER_FIELDS, {}, tenant_in_force, new_draft),
                "editable": True,
                "removable": False,
            }
        )
    context = {"forms": forms, "can_edit": can_edit, "is_admin": is_admin, "per_player": PER_PLAYER}
    return render(request, "roleplay/memory/settings.html", context, status=status)


def _character_id(request, value: str, *, remove: bool) -> tuple[str, str]:
    """(character id, name) of the posted scope; a missing, malformed or another tenant's
    character (or, to remove, one without an override) is a ``MemoryNotFound``."""
    try:
        key = str(uuid.UUID(value))
    except ValueError:
        raise MemoryNotFound("not_found", "no such character in this tenant") from None
    character = scoped(character_model(), request.tenant).filter(pk=key).first()
    if remove:
        if config_reads.stored(request.tenant, key) is None:
            raise MemoryNotFound("not_found", "this character has no override")
    elif character is None:
        raise MemoryNotFound("not_found", "no such character in this tenant")
    return key, character.name if character else "a deleted character"


def _key(scope: str) -> str:
    try:
        return str(uuid.UUID(scope)) if scope else ""
    except ValueError:
        return scope


@console_view()
def memory_settings(request):
    """The settings page; a POST saves one scope (``character`` empty: the tenant's) or,
    with ``action=remove``, removes a character's override."""
    if request.method != "POST":
        return _page(request)
    action = request.POST.get("action", "save")
    scope = request.POST.get("character", "").strip()
    if action not in ("save", "remove") or (action == "remove" and not scope):
        flash.error(request, "Unknown action: nothing was changed.")
        return _page(request, status=400)
    if not scope and not has_role(request.membership, Role.ADMIN):
        flash.error(request, "Only an admin changes the tenant's memory settings.")
        return _page(request, status=403)
    try:
        if not scope:
            data = _posted_data(request.POST, FIELDS)
            config_writes.put_settings(request.tenant, data)
            flash.success(request, "Saved the tenant's memory settings.")
        else:
            key, name = _character_id(request, scope, remove=action == "remove")
            if action == "remove":
                config_writes.delete_settings(request.tenant, character_id=key)
                flash.success(request, f"Removed the override of {name}: it follows the tenant.")
            else:
                data = _posted_data(request.POST, CHARACTER_FIELDS)
                config_writes.put_settings(request.tenant, data, character_id=key)
                flash.success(request, f"Saved the override of {name}.")
    except DomainError as exc:
        status = refused(request, exc)
        draft = request.POST if action == "save" and status != 404 else None
        return _page(
            request, status=status, draft_scope=_key(scope) if draft else None, draft=draft
        )
    return redirect(reverse("memory_settings"))
