"""Writes of regex scripts: every door (REST, console, card and preset import) goes here, so
a script that cannot run is refused when it is saved (422 with the engine's code) or, in an
import, listed in the import's report, never found at a turn."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Max

from roleplay.models import Character, Preset

from .engine import RegexScriptError, compile_all, compile_script
from .errors import RegexScopeInvalid, RegexScriptRefused
from .models import RegexScript, ScriptScope

# Where cards and SillyTavern presets carry scripts: ``extensions.regex_scripts``.
REGEX_SCRIPTS = "regex_scripts"
# Scripts one owner (the tenant's globals, a character, a preset) may hold.
MAX_SCRIPTS_PER_OWNER = 100


def normalized(raw: Any) -> dict[str, Any]:
    """``raw`` checked by the engine and written back in SillyTavern's shape; raises
    :class:`RegexScriptRefused`."""
    try:
        return compile_script(raw).spec.to_sillytavern()
    except RegexScriptError as exc:
        raise RegexScriptRefused.from_engine(exc) from exc


def create_script(
    tenant,
    *,
    scope: str,
    script: Any,
    character: Character | None = None,
    preset: Preset | None = None,
    position: int | None = None,
) -> RegexScript:
    """A new script of ``scope`` (its owner given), last in its owner's order unless
    ``position`` says where."""
    _check_owner(scope, character, preset)
    body = normalized(script)
    with transaction.atomic():
        owned = _owned(tenant, scope, character, preset)
        if owned.count() >= MAX_SCRIPTS_PER_OWNER:
            raise RegexScriptRefused(
                "regex_script_limit",
                f"an owner holds at most {MAX_SCRIPTS_PER_OWNER} scripts",
                {"limit": MAX_SCRIPTS_PER_OWNER},
            )
        if position is None:
            position = (owned.aggregate(top=Max("position"))["top"] or 0) + 1
        return RegexScript.objects.create(
            tenant=tenant, scope=scope, character=character, preset=preset,
            position=position, script=body,
        )  # fmt: skip


def update_script(
    row: RegexScript, *, script: Any = None, position: int | None = None, **owner: Any
) -> RegexScript:
    """Change a script's body or position (its owner stays: delete and create to move it)."""
    for key in ("scope", "character", "preset"):
        if key in owner and owner[key] != getattr(row, key):
            raise RegexScopeInvalid({key: ["a script's owner cannot change"]})
    if script is not None:
        row.script = normalized(script)
    if position is not None:
        row.position = position
    row.save(update_fields=["script", "position", "updated_at"])
    return row


def delete_script(row: RegexScript) -> None:
    row.delete()


def set_allowed(character: Character, allow: bool) -> Character:
    """Let the character's scripts run (or stop them)."""
    Character.objects.filter(pk=character.pk).update(allow_regex=allow)
    character.allow_regex = allow
    return character


def import_scripts(
    tenant, raws: Any, *, character: Character | None = None, preset: Preset | None = None
) -> dict[str, Any]:
    """Store the scripts a card or a preset carries (``extensions.regex_scripts``): those that
    compile, in order; the others are listed (``refused``: index, name, code, message). The
    caller is inside its import's transaction."""
    if not isinstance(raws, list):
        return {"imported": 0, "refused": [_not_a_list(raws)]}
    raws = raws[:MAX_SCRIPTS_PER_OWNER]
    good, problems = compile_all(raws)
    scope = ScriptScope.CHARACTER if character is not None else ScriptScope.PRESET
    RegexScript.objects.bulk_create(
        RegexScript(
            tenant=tenant, scope=scope, character=character, preset=preset,
            position=index + 1, script=compiled.spec.to_sillytavern(),
        )
        for index, compiled in enumerate(good)
    )  # fmt: skip
    return {"imported": len(good), "refused": problems}


def import_file(
    tenant,
    file: Any,
    *,
    scope: str,
    character: Character | None = None,
    preset: Preset | None = None,
) -> dict[str, Any]:
    """A regex file (SillyTavern's one script, or a list of scripts as bulk exports write
    them) added after the scripts its owner has, in order: those that compile, up to the
    owner's limit; the others listed (``refused``: index, name, code, message). None that
    compiles: 422 with the first one's code, nothing written."""
    _check_owner(scope, character, preset)
    raws = file if isinstance(file, list) else [file]
    head = raws[:MAX_SCRIPTS_PER_OWNER]
    good, problems = compile_all(head)
    if not good:
        first = problems[0] if problems else {"code": "regex_script_invalid",
                                               "message": "the file holds no script",
                                               "details": {"field": "file"}}  # fmt: skip
        raise RegexScriptRefused(first["code"], first["message"], first["details"])
    refused = {problem["index"] for problem in problems}
    indexes = [i for i in range(len(head)) if i not in refused] + list(range(len(head), len(raws)))
    with transaction.atomic():
        owned = _owned(tenant, scope, character, preset).select_for_update()
        positions = list(owned.values_list("position", flat=True))
        room, top = max(MAX_SCRIPTS_PER_OWNER - len(positions), 0), max(positions, default=0)
        created = RegexScript.objects.bulk_create(
            RegexScript(
                tenant=tenant, scope=scope, character=character, preset=preset,
                position=top + index + 1, script=compiled.spec.to_sillytavern(),
            )
            for index, compiled in enumerate(good[:room])
        )  # fmt: skip
    for index in indexes[len(created) :]:
        name = raws[index].get("scriptName") if isinstance(raws[index], dict) else None
        problems.append(
            {
                "index": index,
                "script": name if isinstance(name, str) else "",
                "code": "regex_script_limit",
                "message": f"an owner holds at most {MAX_SCRIPTS_PER_OWNER} scripts",
                "details": {"limit": MAX_SCRIPTS_PER_OWNER},
            }  # fmt: skip
        )
    problems.sort(key=lambda problem: problem["index"])
    return {"imported": [str(row.pk) for row in created], "refused": problems}


def check_scripts(raws: Any) -> list[dict[str, Any]]:
    """What :func:`import_scripts` would refuse in ``raws`` (nothing is written)."""
    if not isinstance(raws, list):
        return [_not_a_list(raws)]
    return compile_all(raws[:MAX_SCRIPTS_PER_OWNER])[1]


def refused_warning(problem: dict[str, Any]) -> tuple[str, str]:
    """An import report's warning for a script that was not imported."""
    name = problem.get("script") or f"#{problem.get('index', 0) + 1}"
    return "regex_script_refused", f"regex script {name!r} was not imported: {problem['message']}"


def _not_a_list(raws: Any) -> dict[str, Any]:
    return {
        "index": 0,
        "script": "",
        "code": "regex_script_invalid",
        "message": f"regex_scripts is a list, not {type(raws).__name__}",
        "details": {"field": "regex_scripts"},
    }


def _check_owner(scope: str, character, preset) -> None:
    wants = {
        ScriptScope.GLOBAL: (False, False),
        ScriptScope.CHARACTER: (True, False),
        ScriptScope.PRESET: (False, True),
    }.get(scope)
    if wants is None:
        raise RegexScopeInvalid({"scope": [f"one of {', '.join(ScriptScope.values)}"]})
    if (character is not None, preset is not None) != wants:
        need = {"global": "neither character nor preset", "character": "character only",
                "preset": "preset only"}[scope]  # fmt: skip
        raise RegexScopeInvalid({"scope": [f"a {scope} script names {need}"]})


def _owned(tenant, scope: str, character, preset):
    rows = RegexScript.objects.filter(tenant=tenant, scope=scope)
    if character is not None:
        rows = rows.filter(character=character)
    if preset is not None:
        rows = rows.filter(preset=preset)
    return rows
