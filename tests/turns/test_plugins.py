"""Turn plug-ins (``roleplay.turns.plugin``): one registry ordered by ``after``/``before``
(a cycle or an unknown name fails ``manage.py check``), typed per-plug-in slots on the
context, and a new plug-in (read, prepare, tools, settle) that runs in a real turn with
nothing else of the turn changed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from roleplay.llm.scripted_server import Reply
from roleplay.models import Turn
from roleplay.turns import PLUGINS, Phase, TurnPlugin, begin_turn, load_context
from roleplay.turns.plugin import Registry, check_plugins


def _plugin(name: str, after=(), before=(), **hooks) -> TurnPlugin:
    attrs = {"name": name, "after": tuple(after), "before": tuple(before), **hooks}
    return type(f"P_{name}", (TurnPlugin,), attrs)()


def _names(registry) -> list[str]:
    return [p.name for p in registry]


def test_plugins_run_in_the_order_after_and_before_say_ties_in_registration_order():
    registry = Registry()
    for plugin in (
        _plugin("last", after=("middle",)),
        _plugin("middle", after=("first",)),
        _plugin("free"),
        _plugin("first", before=("free",)),
    ):
        registry.register(plugin)
    assert _names(registry) == ["first", "middle", "last", "free"]
    assert registry.problems == []


def test_the_shipped_plugins_keep_the_turns_order():
    assert _names(PLUGINS) == [
        "worldbook",
        "memory_learning",
        "memory_context",
        "memory_pack",
        "memory_external",
        "memory_tools",
        "agentic",
        "story",
        "dio",
        "workflow",
        "compact",
        "compact_ahead",
        "frontloop",
        "moderation",
    ]
    assert [name for name, _ in PLUGINS.readers] == [
        "worldbook",
        "memory_learning",
        "memory_context",
        "memory_pack",
        "agentic",
        "story",
        "compact",
        "moderation",
    ]
    assert [hook.__self__.name for hook in PLUGINS.admitters] == ["moderation"]
    stages = {
        s: [p.name for p in PLUGINS.stage(s, "chat")]
        for s in ("pre_actor", "committed", "post_turn")
    }
    assert stages == {
        "pre_actor": ["memory_prepare", "story", "dio", "workflow", "compact"],
        "committed": ["memory_commit", "moderation"],
        "post_turn": ["story_save", "compact_ahead", "frontloop_pictures"],
    }
    assert check_plugins() == []


@pytest.mark.parametrize(
    ("plugins", "code"),
    [
        ((_plugin("egg", after=("hen",)), _plugin("hen", after=("egg",))), "roleplay.E001"),
        ((_plugin("lonely", after=("nobody",)),), "roleplay.E002"),
        ((_plugin("early", before=("nobody",)),), "roleplay.E002"),
    ],
)
def test_a_cycle_or_an_unknown_name_fails_manage_py_check(plugins, code):
    for plugin in plugins:
        PLUGINS.register(plugin)
    try:
        assert {error.id for error in check_plugins()} == {code}
        with pytest.raises(SystemCheckError, match=code):
            call_command("check")
    finally:
        for plugin in plugins:
            PLUGINS.unregister(plugin.name)
    assert check_plugins() == []
    call_command("check")


@dataclass
class Dice:
    """A test plug-in's state: what its hooks leave for each other."""

    prepared: bool = False
    rolls: list[int] = field(default_factory=list)
    written: list[str] = field(default_factory=list)


@dataclass
class Other:
    value: int = 0


@pytest.mark.django_db
def test_a_slot_is_one_typed_instance_per_state_class_and_turn(conversation):
    turn = begin_turn(conversation, "slot-1", "Hi").turn
    ctx = load_context(turn, "Hi")
    dice = ctx.slot(Dice)
    assert isinstance(dice, Dice) and ctx.slot(Dice) is dice
    assert isinstance(ctx.slot(Other), Other) and ctx.slot(Other) is not dice
    dice.rolls.append(4)
    assert ctx.slot(Dice).rolls == [4]
    again = load_context(turn, "Hi")  # another turn's context starts empty
    assert again.slot(Dice).rolls == []


ROLL = {
    "type": "function",
    "function": {
        "name": "roll_die",
        "description": "Roll a die.",
        "parameters": {"type": "object", "properties": {}},
    },
}


async def _prepare(ctx, run) -> None:
    await run.progress(step="shaking")
    ctx.slot(Dice).prepared = True
    ctx.place("dice:rules", "Dice decide contested actions.")


async def _settle(ctx, run) -> None:
    dice = ctx.slot(Dice)
    ctx.trace["dice"] = {"rolls": dice.rolls, "reply": ctx.reply, "written": dice.written}


class DicePlugin(TurnPlugin):
    """The shape of the next capability: a phase before the Actor, a tool the Actor may
    call, post-turn work, its state in a slot; registered, and nothing else changed."""

    name = "dice"
    after = ("compact",)
    prepare = Phase(name="dice_prepare", run=_prepare)
    settle = Phase(name="dice_settle", run=_settle)

    def read(self, ctx, conversation) -> None:
        ctx.variables["dice"] = "d6"

    def tools(self, ctx):
        return [ROLL] if ctx.slot(Dice).prepared else None

    async def call(self, ctx, call):
        ctx.slot(Dice).rolls.append(4)
        return {"roll": 4}

    def beside(self, ctx):
        return lambda: ctx.slot(Dice).written.append("beside")

    def after_reply(self, ctx):
        return lambda: ctx.slot(Dice).written.append("after_reply")


@pytest.mark.django_db(transaction=True)
def test_a_new_plugin_uses_every_hook_in_a_real_turn(api, conversation, llm):
    llm.enqueue(Reply(tool_calls=[{"name": "roll_die", "arguments": {}}]), Reply(content="A four."))
    PLUGINS.register(DicePlugin())
    try:
        res = api.post(
            f"/api/v1/conversations/{conversation.pk}/turns/run",
            {"client_message_id": "dice-1", "content": "I roll."},
            format="json",
        )
    finally:
        PLUGINS.unregister("dice")
    assert res.status_code == 201, res.content
    first, second = llm.requests[-2:]
    assert [t["function"]["name"] for t in first["tools"]] == ["roll_die"]
    assert "Dice decide contested actions." in json.dumps(first["messages"])
    tool_answers = [json.loads(m["content"]) for m in second["messages"] if m["role"] == "tool"]
    assert tool_answers == [{"roll": 4}]
    turn = Turn.objects.filter(conversation=conversation).order_by("-started_at").first()
    assert turn.status == "complete"
    assert "dice" in turn.trace["hooks_ms"]  # timed under the plug-in's name
    assert [(p["name"], p["stage"], p["outcome"]) for p in turn.trace["phases"]] == [
        ("dice_prepare", "pre_actor", "ok"),
        ("dice_settle", "post_turn", "ok"),
    ]
    assert turn.trace["dice"] == {
        "rolls": [4],
        "reply": "A four.",
        "written": ["beside", "after_reply"],
    }
