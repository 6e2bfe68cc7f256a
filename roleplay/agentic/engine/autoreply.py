"""Auto-reply suggestions (seed 002): three things the user might say next. Pure.

The material is the character's name and description (its first :data:`DESCRIPTION_CHARS`
characters), the target assistant message and up to :data:`CONTEXT_MESSAGES` visible
messages before it (nothing after), with the turn-start state that turn's planning run
recorded as guidance. The model answers with an array, ``{"options": [...]}`` or items
``{"content": ...}``; numbering and quotes are stripped, repeats dropped, each option cut to
:data:`OPTION_CHARS`, and an option not written in the requested language's script (Chinese
needs Han, Japanese kana, Korean Hangul) is refused. Fewer than three valid options is a
retry, at most :data:`ATTEMPTS` calls in all; a model failure in :data:`ENDS_ATTEMPTS` (a
content filter: asking again gets the same refusal) ends them at once (the seed: "内容过滤
… 可能提前结束"). Story's suggestions follow the same rule.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

OPTIONS, OPTION_CHARS, CONTEXT_MESSAGES, ATTEMPTS = 3, 160, 6, 3
DESCRIPTION_CHARS = 12_000
TEMPERATURE = 0.7
ENDS_ATTEMPTS = frozenset({"model_content_filtered"})
DIRECTIONS = (
    "1. follow the plot forward;",
    "2. respond to the emotion, the relationship, or a curiosity;",
    "3. something else the user might plausibly do or say.",
)
# A dash or asterisk is a bullet only before a space: "*smiles*" opens a roleplay action.
_NUMBERING = re.compile(
    r"^\s*(?:[-*](?=\s)|•|\(?\d{1,2}[.)、:：]|option\s*\d+\s*[:.)-]|[一二三][、.．])\s*", re.I
)
_QUOTES = "\"'“”‘’「」『』"
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")
_SCRIPTS = {
    "zh": re.compile(r"[\u4e00-\u9fff]"),
    "ja": re.compile(r"[\u3040-\u30ff]"),
    "ko": re.compile(r"[\uac00-\ud7af\u1100-\u11ff]"),
}


def script_ok(text: str, language: str) -> bool:
    """Whether ``text`` is written in ``language``'s script (only CJK languages checked)."""
    pattern = _SCRIPTS.get(language.strip().lower().replace("_", "-").split("-")[0])
    return pattern is None or bool(pattern.search(text))


def _items(text: str) -> list[Any]:
    body = _FENCE.sub("", (text or "").strip())
    try:
        data = json.loads(body)
    except ValueError:
        start, end = body.find("["), body.rfind("]")
        data = None
        if 0 <= start < end:
            try:
                data = json.loads(body[start : end + 1])
            except ValueError:
                data = None
        # A bracketed aside in a numbered answer ("[2]") is not the options' array.
        if not (isinstance(data, list) and any(isinstance(i, str | dict) for i in data)):
            lines = [line for line in body.splitlines() if line.strip()]
            # A numbered answer's other lines ("Here are three options:") are not options.
            numbered = [line for line in lines if _NUMBERING.match(line)]
            return numbered or lines
    if isinstance(data, dict):
        data = data.get("options", [])
    return data if isinstance(data, list) else []


def _clean(item: Any) -> str:
    if isinstance(item, dict):
        item = item.get("content", "")
    if not isinstance(item, str):
        return ""
    text = _unquote(_NUMBERING.sub("", item.strip()).strip())
    return text[:OPTION_CHARS].strip()


def _unquote(text: str) -> str:
    """``text`` without the quotes around it: a pair that wraps it all (and holds no more of
    its own quote marks), or one dangling mark at an end when it holds no other. Quotes
    inside (``*nods* "Let's go."``) are the option's own and stay."""
    while (
        len(text) >= 2
        and text[0] in _QUOTES
        and text[-1] in _QUOTES
        and text[0] not in text[1:-1]
        and text[-1] not in text[1:-1]
    ):
        text = text[1:-1].strip()
    if sum(text.count(q) for q in _QUOTES) == 1:
        if text[0] in _QUOTES:
            text = text[1:].strip()
        elif text[-1] in _QUOTES:
            text = text[:-1].strip()
    return text


def parse_options(text: str, language: str) -> list[str]:
    """The valid options of one answer: cleaned, deduplicated, in ``language``'s script,
    at most :data:`OPTIONS`."""
    found: list[str] = []
    seen: set[str] = set()
    for item in _items(text):
        option = _clean(item)
        key = option.casefold()
        if option and key not in seen and script_ok(option, language):
            seen.add(key)
            found.append(option)
    return found[:OPTIONS]


def character_part(character: str, description: str) -> list[str]:
    """The character's section of a suggestion's material (none without a description)."""
    text = (description or "").strip()[:DESCRIPTION_CHARS]
    return [f"CHARACTER ({character})\n{text}"] if text else []


def material(
    messages: Sequence[tuple[str, str]],
    *,
    character: str,
    user: str,
    guidance: str,
    description: str = "",
) -> str:
    """The user message of the request: the character, the guidance, then the dialogue up
    to the target reply (its last item), then the three directions."""
    lines = [
        f"{user if role == 'user' else character}: {text.strip()}"
        for role, text in list(messages)[-(CONTEXT_MESSAGES + 1) :]
    ]
    return "\n\n".join(
        [
            *character_part(character, description),
            "GUIDANCE (continuity notes at the start of this turn; hints, not events)\n"
            + (guidance.strip() or "(none)"),
            "DIALOGUE (the last line is the reply the user answers)\n" + "\n".join(lines),
            "Write three options for the user's next message, one for each direction:\n"
            + "\n".join(DIRECTIONS),
        ]
    )
