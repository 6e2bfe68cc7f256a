"""Character files of older tools, read as the CCv1 card SillyTavern makes of them. Pure.

- **Pygmalion / Gradio** (JSON, or YAML as text-generation-webui once wrote it):
  ``char_name``, ``char_persona`` (the description), ``char_greeting`` (the first
  message), ``world_scenario`` and ``example_dialogue``.
- **text-generation-webui** (``.yaml``/``.yml``): ``name``, ``context`` (the description)
  and ``greeting`` (the first message).

A JSON file's other fields go on as a card's unknown fields do (kept in the character's
extensions). A YAML file gives only the fields named above, as text: YAML's anchors can
make a small file expand into a huge value, and its dates are not JSON.
"""

from __future__ import annotations

from typing import Any

import yaml

from roleplay.characters.cards.errors import CardFailure

INVALID_YAML = "invalid_yaml"
YAML_NAMES = (".yaml", ".yml")
PYGMALION = {
    "char_name": "name",
    "char_persona": "description",
    "char_greeting": "first_mes",
    "world_scenario": "scenario",
    "example_dialogue": "mes_example",
}
WEBUI = {"name": "name", "context": "description", "greeting": "first_mes"}
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(data: bytes) -> dict[str, Any]:
    """A YAML character file's named text fields; ``invalid_yaml`` when it is not one."""
    try:
        value = yaml.load(data.decode("utf-8-sig"), Loader=_LOADER)  # noqa: S506 - safe loader
    except UnicodeDecodeError as exc:
        raise CardFailure(INVALID_YAML, "the file is not UTF-8 text", {}) from exc
    except (yaml.YAMLError, RecursionError) as exc:
        raise CardFailure(INVALID_YAML, f"the file is not valid YAML: {_problem(exc)}", {}) from exc
    if not isinstance(value, dict):
        raise CardFailure(INVALID_YAML, "the YAML file is not a mapping of fields", {})
    names = set(PYGMALION) | set(WEBUI)
    return {key: value[key] for key in names if isinstance(value.get(key), str)}


def legacy_card(obj: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """``(CCv1 card, tool)`` for an older tool's character object; None for anything else."""
    if "spec" in obj or "data" in obj:
        return None
    if "char_name" in obj:
        mapping, tool = PYGMALION, "Pygmalion"
    elif isinstance(obj.get("name"), str) and "context" in obj and "first_mes" not in obj:
        mapping, tool = WEBUI, "text-generation-webui"
    else:
        return None
    card = {ours: obj[theirs] for theirs, ours in mapping.items() if theirs in obj}
    card.setdefault("first_mes", "")
    card.update({key: value for key, value in obj.items() if key not in mapping})
    return card, tool


def _problem(exc: BaseException) -> str:
    mark = getattr(exc, "problem_mark", None)
    where = f" (line {mark.line + 1})" if mark is not None else ""
    return f"{getattr(exc, 'problem', None) or type(exc).__name__}{where}"
