"""Story's auto-reply suggestions (seed 002, "Story 怎样生成"), pure: the material is the
character's name and description, the target reply as stored and at most 6 earlier
non-empty visible messages (nothing after it, never the story's world or narrative); the
answer must be a JSON object with exactly three options, each non-empty, distinct and at
most 160 characters, in the requested language's script. An option is never cut to fit: an
answer that breaks a rule is refused with the reason, which the next attempt is told."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from console import jsontext

OPTIONS, OPTION_CHARS, CONTEXT_MESSAGES, ATTEMPTS = 3, 160, 6, 3
CALL_TIMEOUT_MS = 180_000
ASK = (
    f"Write exactly {OPTIONS} options for what the user might say or do next, each a "
    "different strategy that fits this moment (following the story, pausing, asking, or "
    "changing direction are all allowed; there are no fixed slots). Speak only for the user: "
    "never announce that an action succeeds or how anyone else reacts. Each option at most "
    f'{OPTION_CHARS} characters. Answer with JSON only: {{"options": ["...", "...", "..."]}}.'
)
SCHEMA = {
    "type": "object",
    "properties": {"options": {"type": "array", "items": {"type": "string"}}},
    "required": ["options"],
    "additionalProperties": False,
}


class OptionsInvalid(ValueError):
    pass


def material(
    earlier: Sequence[tuple[str, str]],
    reply: str,
    *,
    character: str,
    user: str,
    about: Sequence[str] = (),
) -> str:
    """The user message: ``about`` (the character's section, as the runtime writes it for
    every suggestion), the dialogue before the reply, the stored reply, then what Story asks
    of the three options (the system prompt is the ``auto_reply`` role prompt of the
    config's preset)."""
    lines = [
        f"{user if role == 'user' else character}: {text.strip()}"
        for role, text in list(earlier)[-CONTEXT_MESSAGES:]
        if text.strip()
    ]
    return "\n\n".join(
        [
            *about,
            "DIALOGUE\n" + ("\n".join(lines) or "(none)"),
            f"THE REPLY THE USER ANSWERS ({character})\n{reply.strip()}",
            ASK,
        ]
    )


def parse(text: str, language: str, script_ok: Callable[[str, str], bool]) -> list[str]:
    """The three options of ``text``; :class:`OptionsInvalid` says why not."""
    try:
        data = jsontext.loads(text)
    except ValueError:
        raise OptionsInvalid("the answer is not JSON") from None
    options = data.get("options") if isinstance(data, dict) else None
    if not isinstance(options, list) or len(options) != OPTIONS:
        raise OptionsInvalid(f"options must be a list of exactly {OPTIONS}")
    seen: set[str] = set()
    for option in options:
        if not isinstance(option, str) or not option.strip():
            raise OptionsInvalid("every option must be non-empty text")
        if len(option.strip()) > OPTION_CHARS:
            raise OptionsInvalid(f"an option is over {OPTION_CHARS} characters")
        if option.strip().casefold() in seen:
            raise OptionsInvalid("the options must be distinct")
        if not script_ok(option, language):
            raise OptionsInvalid(f"an option is not written in {language}")
        seen.add(option.strip().casefold())
    return [o.strip() for o in options]
