"""``bench_turns --capabilities compare``: the same players with every capability off, and
with the capabilities a plain character runs on (memory at its defaults, and a bound
worldbook), so the report says what they add to a turn and each hook's share of it.

The bench tenant's own character (``roleplay.bench.tenant``) is the ``off`` arm: its memory
settings turn memory off and it has no book, so no hook does more than notice that. The
``on`` arm is a second character of the same tenant with memory at the shipped defaults
(learning from the local rules, pre-turn packs) and a synthetic worldbook of ``entries``
entries bound to it, prepared before the run as a publish prepares it. Agent V2, Story and
Compact are scenario capabilities, measured by ``--agentic compare``, ``bench_story --live``
and ``bench_continuity``.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from console.models import Player
from memory.configs.services import put_settings
from roleplay.models import Character, Conversation
from worldbook import services as worldbooks
from worldbook.bench.synthetic import synthetic_book
from worldbook.engine.schema import BookIn

OFF, ON = "off", "on"
BOOK_ENTRIES = 5000


@dataclass
class CapabilitySet:
    character: Character
    conversations: list[Conversation]
    warmup: list[Conversation]


def turn_off(character: Character) -> None:
    """Memory off for ``character`` (it has no book): the ``off`` arm."""
    put_settings(character.tenant, {"enabled": False}, character_id=str(character.pk))


@transaction.atomic
def add_capabilities(
    tenant, *, players: int, warmup: int = 0, entries: int = BOOK_ENTRIES
) -> CapabilitySet:
    """The ``on`` arm: a character with memory at its defaults and a bound book of
    ``entries`` entries, with ``players`` measured and ``warmup`` unmeasured conversations."""
    character = Character.objects.create(
        tenant=tenant,
        name="Bench Keeper",
        description="A lighthouse keeper of the harbor who knows every lantern and canal.",
        first_message="Welcome to the lighthouse.",
    )
    book, _revision = worldbooks.create_book(  # stored prepared, as a publish does
        tenant, BookIn.model_validate(synthetic_book(entries))
    )
    worldbooks.put_bindings(tenant, str(character.pk), [{"book_id": str(book.pk)}])
    conversations = []
    for index in range(players + warmup):
        player = Player.objects.create(
            tenant=tenant, external_id=f"bench-on-{index}", display_name=f"Player on {index}"
        )
        conversations.append(
            Conversation.objects.create(tenant=tenant, player=player, character=character)
        )
    return CapabilitySet(character, conversations[warmup:], conversations[:warmup])


def hook_table(off: dict, on: dict) -> list[dict]:
    """Each context hook's p50 share of a turn in either arm (``hooks.hook_figures``)."""
    names = sorted(set(off.get("hook_p50_ms", {})) | set(on.get("hook_p50_ms", {})))
    return [
        {
            "hook": name,
            "off_p50_ms": off.get("hook_p50_ms", {}).get(name, 0.0),
            "on_p50_ms": on.get("hook_p50_ms", {}).get(name, 0.0),
        }
        for name in names
    ]


def comparison(off: dict, on: dict) -> dict:
    """What the capabilities add: turn and first-delta p50s, server CPU per turn."""

    def p50(report: dict, key: str) -> float:
        return report[key]["p50"] or 0.0

    return {
        "turn_p50_ms": {OFF: p50(off, "turn_ms"), ON: p50(on, "turn_ms")},
        "ttfd_p50_ms": {OFF: p50(off, "ttfd_ms"), ON: p50(on, "ttfd_ms")},
        "server_cpu_ms_per_turn": {
            OFF: off.get("server_cpu_ms_per_turn"),
            ON: on.get("server_cpu_ms_per_turn"),
        },
        "added_turn_p50_ms": round(p50(on, "turn_ms") - p50(off, "turn_ms"), 2),
        "hooks": hook_table(off["hooks"], on["hooks"]),
        "goal": {"off_turn_p50_ms": 15.0, "met": p50(off, "turn_ms") <= 15.0},
    }


def render(data: dict) -> str:
    lines = [
        f"turn p50: off {data['turn_p50_ms'][OFF]} ms, on {data['turn_p50_ms'][ON]} ms "
        f"(adds {data['added_turn_p50_ms']} ms; goal off <= {data['goal']['off_turn_p50_ms']:g}"
        f" ms: {'met' if data['goal']['met'] else 'MISSED'})",
        f"first delta p50: off {data['ttfd_p50_ms'][OFF]} ms, on {data['ttfd_p50_ms'][ON]} ms",
        f"server CPU per turn: off {data['server_cpu_ms_per_turn'][OFF]} ms, "
        f"on {data['server_cpu_ms_per_turn'][ON]} ms",
        "hook p50 (ms)            off      on",
    ]
    lines += [f"  {h['hook']:<22}{h['off_p50_ms']:>5}  {h['on_p50_ms']:>6}" for h in data["hooks"]]
    return "\n".join(lines)
