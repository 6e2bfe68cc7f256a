"""Story's auto-reply suggestions (seed 002, "Story 怎样生成"), pure: the material is the
target reply as stored and at most 6 earlier non-empty visible messages (nothing after it,
never the story's world or narrative); the answer must be a JSON object with exactly three
options, each non-empty, distinct and at most 160 characters, in the requested language's
script. An option is never cut to fit: an answer that breaks a rule is refused with the
reason, which the next attempt is told."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from console import jsontext

OPTIONS, OPTION_CHARS, CONTEXT_MESSAGES, ATTEMPTS = 3, 160, 6, 3
CALL_TIMEOUT_MS = 180_000
TEMPERATURE = 0.7
SCHEMA = {
    "type": "object",
    "properties": {"options": {"type": "array", "items": {"type": "string"}}},
    "required": ["options"],
    "additionalProperties": False,
}


class OptionsInvalid(ValueError):
    pass


def system(character: str, language: str) -> str:
    return (
        f"You suggest what the user might say next in a roleplay with {character}. Write "
        f"exactly three short options in {language}, each a different strategy that fits "
        "this moment (pausing, asking, or changing direction are allowed). Speak only for "
        "the user: never announce that an action succeeds or how anyone else reacts. Each "
        f"option at most {OPTION_CHARS} characters. Answer with JSON only: "
        '{"options": ["...", "...", "..."]}.'
    )


def material(earlier: Sequence[tuple[str, str]], reply: str, *, character: str, user: str) -> str:
    lines = [
        f"{user if role == 'user' else character}: {text.strip()}"
        for role, text in list(earlier)[-CONTEXT_MESSAGES:]
        if text.strip()
    ]
    return "\n\n".join(
        [
            "DIALOGUE\n" + ("\n".join(lines) or "(none)"),
            f"THE REPLY THE USER ANSWERS ({character})\n{reply.strip()}",
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
