"""Beliefs (seed 003), pure: what the model is asked, and the checks its answer must pass.

A belief is a generalisation the player's facts and episodes support together ("Ann is
afraid of deep water": a fact that she cannot swim, an episode where she refused the
boat). Each names the entries that support it, at least :data:`MIN_SUPPORTERS`; a belief
citing an entry it was not given, or with fewer supporters, refuses the whole answer, so a
belief never stands on nothing. A belief whose supporter is deleted later is demoted to a
candidate (``memory.entries.beliefs``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from memory.engine.consolidation import Rejected, parse
from memory.engine.entries import max_chars

MAX_SOURCES = 40  # the newest facts and episodes given to the model
MAX_BELIEFS = 5
MIN_SUPPORTERS = 2
TEMPERATURE = 0.2

SYSTEM = (
    "You read what is remembered about a player of a roleplay chat (facts and episodes, "
    "each with an id) and note at most {max} beliefs: lasting generalisations about the "
    "player that at least two of the entries support together. Do not restate a single "
    "entry, do not guess beyond what the entries say, keep a plan a plan. Each belief is "
    "one short sentence and lists the ids of its supporting entries. Answer with JSON only: "
    '{{"beliefs": [{{"content": "...", "supporters": ["id", "id"]}}]}}; an empty list when '
    "nothing qualifies."
)


def request(sources: Sequence[tuple[str, str, str]]) -> tuple[list[dict[str, str]], dict]:
    """The model's messages and ``response_format`` for ``(id, kind, text)`` sources."""
    lines = "\n".join(
        f"[{entry_id}] ({kind}) {json.dumps(text, ensure_ascii=False)}"
        for entry_id, kind, text in sources
    )
    schema = {
        "type": "object",
        "properties": {
            "beliefs": {
                "type": "array",
                "maxItems": MAX_BELIEFS,
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string"},
                        "supporters": {
                            "type": "array",
                            "items": {"type": "string"},
                            "minItems": MIN_SUPPORTERS,
                        },
                    },
                    "required": ["content", "supporters"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["beliefs"],
        "additionalProperties": False,
    }
    messages = [
        {"role": "system", "content": SYSTEM.format(max=MAX_BELIEFS)},
        {"role": "user", "content": f"Remembered entries, one per line:\n\n{lines}"},
    ]
    return messages, {"type": "json_schema", "json_schema": {"name": "beliefs", "schema": schema}}


def parse_beliefs(reply: str) -> list[Any]:
    """The ``beliefs`` list of the answer (raises ``Unparsable`` like consolidation)."""
    return parse(reply, "beliefs")


def check(raw: Sequence[Any], known: Mapping[str, str]) -> list[tuple[str, tuple[str, ...]]]:
    """``(content, supporter ids)`` of each belief; raises ``Rejected`` (the whole answer)
    on the first that cites an entry not in ``known`` or has too few supporters."""
    if len(raw) > MAX_BELIEFS:
        raise Rejected("too_many_beliefs", f"{len(raw)} beliefs, at most {MAX_BELIEFS}")
    out = []
    for index, item in enumerate(raw):
        where = f"beliefs[{index}]"
        if not isinstance(item, dict) or set(item) - {"content", "supporters"}:
            raise Rejected("invalid_belief", f"{where}: not a belief object")
        content, supporters = item.get("content"), item.get("supporters")
        if not isinstance(content, str) or not content.strip():
            raise Rejected("invalid_belief", f"{where}: no content")
        if len(content.strip()) > max_chars("belief"):
            raise Rejected("invalid_belief", f"{where}: content over {max_chars('belief')} chars")
        if not isinstance(supporters, list) or not all(isinstance(s, str) for s in supporters):
            raise Rejected("invalid_belief", f"{where}: supporters must be entry ids")
        unique = tuple(dict.fromkeys(supporters))
        unknown = [s for s in unique if s not in known]
        if unknown:
            raise Rejected("unknown_supporter", f"{where}: cites {unknown[0][:64]!r}")
        if len(unique) < MIN_SUPPORTERS:
            raise Rejected("too_few_supporters", f"{where}: at least {MIN_SUPPORTERS} entries")
        out.append((" ".join(content.split()), unique))
    return out
