"""The visual world of a conversation (issue: faces and places stay consistent from picture
to picture): each character's appearance, clothing and injuries, and the scene's look.

Read by the image prompt producer (``describe``) and rewritten after a turn that drew
pictures by a model answering with the whole new state as JSON (``parse_update``). Every
state, whoever writes it (the model, an operator, a restore), is checked here
(``check_state``): only these fields, strings within their limits, at most
:data:`MAX_CHARACTERS` characters; a bad one is a :class:`WorldInvalid` naming its field.
"""

from __future__ import annotations

import json
from typing import Any

MAX_CHARACTERS = 12
MAX_NAME = 100
MAX_TRAIT = 1_000
MAX_SCENE = 2_000
MAX_ANSWER_CHARS = 40_000
TRAITS = ("appearance", "clothing", "injuries")
EMPTY: dict[str, Any] = {"characters": {}, "scene": ""}

UPDATE_PROMPT = """\
You keep the visual record of a roleplay so its pictures stay consistent. You are given the \
current record (JSON) and the newest part of the story. Answer with the whole updated record \
as one JSON object and nothing else:
{"characters": {"<name>": {"appearance": "permanent looks: face, hair, build", \
"clothing": "what they wear now", "injuries": "visible wounds, dirt, or empty"}}, \
"scene": "where the story is now and how it looks: place, light, weather"}
Keep what did not change word for word; change only what the story changed; never invent \
looks the story does not give."""


class WorldInvalid(ValueError):
    """A visual world state breaks a rule; ``field`` is its dotted path."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def check_state(value: object) -> dict[str, Any]:
    """``value`` as a valid state (missing parts filled empty), or :class:`WorldInvalid`."""
    if not isinstance(value, dict):
        raise WorldInvalid("state", "must be a JSON object")
    unknown = sorted(set(value) - {"characters", "scene"})
    if unknown:
        raise WorldInvalid(unknown[0], "is not a field of the visual world")
    scene = _text(value.get("scene", ""), "scene", MAX_SCENE)
    characters = value.get("characters", {})
    if not isinstance(characters, dict):
        raise WorldInvalid("characters", "must be an object of names")
    if len(characters) > MAX_CHARACTERS:
        raise WorldInvalid("characters", f"at most {MAX_CHARACTERS} characters")
    checked: dict[str, dict[str, str]] = {}
    for name, traits in characters.items():
        where = f"characters.{str(name)[:40]}"
        key = _text(name, where, MAX_NAME).strip()
        if not key:
            raise WorldInvalid(where, "a character needs a name")
        if key.casefold() in {k.casefold() for k in checked}:
            raise WorldInvalid(where, "names a character twice")
        if not isinstance(traits, dict):
            raise WorldInvalid(where, "must be an object")
        extra = sorted(set(traits) - set(TRAITS))
        if extra:
            raise WorldInvalid(f"{where}.{extra[0]}", "is not a trait of the visual world")
        checked[key] = {t: _text(traits.get(t, ""), f"{where}.{t}", MAX_TRAIT) for t in TRAITS}
    return {"characters": checked, "scene": scene}


def _text(value: object, field: str, limit: int) -> str:
    if not isinstance(value, str):
        raise WorldInvalid(field, "must be text")
    if len(value) > limit:
        raise WorldInvalid(field, f"at most {limit} characters")
    if "\x00" in value or any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        raise WorldInvalid(field, "holds characters that cannot be stored")
    return value


def parse_update(answer: str) -> dict[str, Any]:
    """The state a model answered (its first JSON object, code fences and prose around it
    ignored), checked; :class:`WorldInvalid` when there is none or it breaks a rule."""
    text = (answer or "")[:MAX_ANSWER_CHARS]
    start = text.find("{")
    if start < 0:
        raise WorldInvalid("state", "the answer holds no JSON object")
    try:
        value, _end = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as exc:
        raise WorldInvalid("state", f"the answer is not JSON: {exc.msg}") from None
    return check_state(value)


def describe(state: dict[str, Any]) -> str:
    """The state as the lines the image prompt producer reads in ``<visual_state>``."""
    lines = []
    for name, traits in state.get("characters", {}).items():
        parts = [f"{t}: {traits[t]}" for t in TRAITS if traits.get(t)]
        if parts:
            lines.append(f"{name}: " + "; ".join(parts))
    if state.get("scene"):
        lines.append(f"scene: {state['scene']}")
    return "\n".join(lines)


def update_messages(state: dict[str, Any], story: str) -> list[dict[str, str]]:
    """The world updater's messages: its prompt, then the record and the newest story."""
    record = json.dumps(state, ensure_ascii=False)
    return [
        {"role": "system", "content": UPDATE_PROMPT},
        {"role": "user", "content": f"<record>{record}</record>\n<story>{story}</story>"},
    ]
