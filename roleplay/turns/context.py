"""What a turn's generation reads before the first model call: the character, the player's
persona, the model config that applies, the history with message ids, and whatever each
turn plug-in adds through its ``read`` hook (``plugin``: worldbook selection, memory, Agent
V2, Story, Compact) or its pre-Actor phase (``phases``).

The turn's kind decides what the history and the input are:

- ``chat`` (and ``edit_regenerate`` of a player message nobody answered yet): the history
  before the player's message, which is the input;
- ``regenerate`` / ``edit_regenerate``: the history before the reply being rewritten, whose
  user message (the last one before it) is the input;
- ``continue``: the history before the reply being continued; that reply's text is what the
  model goes on from, and there is no new input;
- ``group``: a group member speaks without a new player message (force-talk, auto-mode):
  the whole history, no input.

In a group (``roleplay.groups``), the turn's ``speaker`` is the member whose card the
prompt shows; the others' replies carry their names and a block lists them. The
conversation's ``character`` stays what the plug-ins read (worldbook bindings, memory, the
character's regex scripts): those layers are the conversation's (docs/groups.md).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.utils import timezone

from console.tokens import CL100K, TokenCounter
from memory import selectors as message_reads
from roleplay.agentic.services.agent_state import Snapshot
from roleplay.characters.selectors import greeting_for
from roleplay.dio.reads import NOT_READ, Prefetched
from roleplay.groups import speaking
from roleplay.groups.speaking import GroupTurn
from roleplay.llm.gateway import provider_config
from roleplay.llm.reasoning import with_reasoning
from roleplay.llm.tokenizers.counters import counter_for
from roleplay.models import Character, Conversation, ModelConfig, Scenario, Turn, TurnKind
from roleplay.players.selectors import ActivePersona, persona_from
from roleplay.presets.selectors import effective_preset
from roleplay.prompting.assembly import (
    ActorInputs,
    AssembledPrompt,
    AuthorNote,
    Card,
    assemble,
    capabilities,
)
from roleplay.prompting.notes import effective_note
from roleplay.prompting.presets import LoadedPreset
from roleplay.quotas.admission import UNLIMITED_ADMISSION, Admission
from roleplay.quotas.engine.periods import capped
from roleplay.regex_scripts.selectors import active_scripts
from roleplay.regex_scripts.turns import TurnScripts, prompt_history

from .plugin import PLUGINS
from .reads import turn_conversation
from .records import answers_new_message
from .settings import ScenarioSettings

# The newest messages a turn reads; the prompt's token budget decides how many it keeps.
HISTORY_LIMIT = 200
# Where a capability's block goes (``TurnContext.place``): after the character sheet where
# the layout has one, else at this depth above the latest messages.
BLOCK_POSITIONS = ("after_character", "at_depth")
FALLBACK_DEPTH = 4

S = TypeVar("S")


@dataclass(frozen=True)
class HistoryMessage:
    """One stored message as capabilities see it: ids and timestamps included, so what a
    phase derives from it can point back at the message (and at its edits)."""

    id: uuid.UUID
    ts: int
    role: str
    content: str
    edited: bool = False
    # A reply's reasoning, read only when the preset sends it back (``reasoning_in_prompt``).
    reasoning: str = ""

    def chat(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass
class TurnContext:
    """Everything generation needs, read once before the first model call; pre-Actor phases
    add ``variables`` and ``blocks`` and their own sections of ``trace``."""

    kind: str
    turn: Turn
    conversation: Conversation
    character: Character
    persona: ActivePersona
    config: ModelConfig | None
    preset: LoadedPreset
    history: list[HistoryMessage]
    user_input: str | None
    continuing: str | None = None
    greeting: str = ""
    # The scenario the conversation runs (``selectors.scenario_for``), read with it.
    scenario: Scenario | None = None
    # Its settings, each part parsed once for the turn (``settings.ScenarioSettings``).
    settings: ScenarioSettings = field(default_factory=lambda: ScenarioSettings(None))
    # Agent V2's state in force under the scenario, read with the conversation
    # (``reads.turn_conversation``).
    agent_state: Snapshot | None = None
    # Our own DIO's prompt in force, read with the conversation when the scenario's DIO is
    # internal (``roleplay.dio.reads``; the ``dio`` plug-in applies it).
    dio: Prefetched = NOT_READ
    # Whether the tenant's moderation judges the reply, read with the conversation (the
    # ``moderation`` plug-in's after-commit check applies then).
    checks_replies: bool = False
    author_note: AuthorNote | None = None
    variables: dict[str, str] = field(default_factory=dict)
    # Placed context: the worldbook's selected blocks and any a phase adds, as placement
    # blocks ``{id, position, content, order?, depth?, role?, outlet_name?}``.
    blocks: list[dict[str, Any]] = field(default_factory=list)
    trace: dict[str, Any] = field(default_factory=dict)
    # False for a preview: hooks read state (worldbook timed effects...) but write none.
    record: bool = True
    # Each plug-in's state for this turn, by its type (``slot``).
    _slots: dict[type, Any] = field(default_factory=dict, repr=False)
    # The Actor's stream may end without a finish_reason (a scenario's Agent V2
    # ``recovery.tolerateMissingStreamMetadata``, set by its context hook).
    tolerate_missing_stream_metadata: bool = False
    # (the variables it was computed with, the layout's positions): see placement_capabilities.
    _capabilities: tuple[dict[str, str], tuple[str, ...]] | None = field(default=None, repr=False)
    # The reply as stored, once committed (what post-turn phases read of it).
    reply: str | None = None
    # What plug-ins keep in the reply message's metadata beside its text (the front loop's
    # ``segments``), stored with a new message or a regenerated alternative.
    message_metadata: dict[str, Any] = field(default_factory=dict)
    # The anchors of the conversation's newest prompt: its per-turn blocks that did not
    # change stay where they were (``prompting.anchoring``); None: anchor nothing.
    prompt_anchors: dict[str, Any] | None = None
    # What the model config's budgets count with (``llm.tokenizers.counters``): the
    # Actor's window, the worldbook's budget, Compact's trigger.
    tokens: TokenCounter = CL100K
    # (what it was assembled from, the Actor prompt): see actor_prompt.
    _prompt: tuple[tuple, AssembledPrompt] | None = field(default=None, repr=False)
    # In a group, the speaker and the members around it (``groups.speaking``); None in a
    # one-character conversation, whose character speaks.
    group: GroupTurn | None = None
    # What the player's plan lets the turn ask of the model (``roleplay.quotas``): its reply
    # and context caps, its features.
    admission: Admission = UNLIMITED_ADMISSION

    @property
    def speaker(self) -> Character:
        """The character who speaks the reply."""
        return self.group.speaker if self.group is not None else self.character

    def slot(self, kind: type[S]) -> S:
        """This turn's instance of ``kind``, a plug-in's state (made with no arguments on
        first use): what one hook of a plug-in leaves for another, or for a plug-in that
        runs after it, typed, instead of a key in a shared dict."""
        found = self._slots.get(kind)
        if found is None:
            found = self._slots[kind] = kind()
        return found

    @property
    def user_name(self) -> str:
        return self.persona.name

    def chat_history(self) -> list[dict[str, str]]:
        return [m.chat() for m in self.history]

    def placement_capabilities(self) -> tuple[str, ...]:
        """The positions (and outlets) this turn's prompt layout offers, where a capability
        may place a block (``assembly.capabilities``). Building the layout costs a prompt
        assembly, so it is done once for every hook, again only if the variables change."""
        if self._capabilities is None or self._capabilities[0] != self.variables:
            found = capabilities(self.preset, self.actor_inputs(blocks=False, history=False))
            self._capabilities = (dict(self.variables), found)
        return self._capabilities[1]

    def place(
        self, block_id: str, content: str, *, per_turn: bool = True, order: int | None = None
    ) -> str | None:
        """Place ``content`` as one system block where the layout has room: after the
        character sheet, else just above the latest messages (:data:`BLOCK_POSITIONS`). The
        position, or None when the layout has neither (nothing is placed). ``per_turn``:
        the text may change from one turn to the next (the cache-aware layout moves it after
        the history, ``prompting.stability``); False for text that changes rarely (the
        compaction summary). ``order``: before (lower) or after the blocks of the same place
        (placement sorts by order, then id)."""
        available = self.placement_capabilities()
        position = next((p for p in BLOCK_POSITIONS if p in available), None)
        if position is None:
            return None
        block: dict[str, Any] = {"id": block_id, "position": position, "content": content}
        if per_turn:
            block["per_turn"] = True
        if order is not None:
            block["order"] = order
        if position == "at_depth":
            block.update(depth=FALLBACK_DEPTH, role="system")
        self.blocks.append(block)
        return position

    def actor_inputs(self, *, blocks: bool = True, history: bool = True) -> ActorInputs:
        """What the Actor prompt is assembled from (``prompting.assembly``); without the
        blocks or the history's messages for what reads neither (the layout's positions)."""
        player_messages = sum(1 for m in self.history if m.role == "user")
        return ActorInputs(
            card=self._card(),
            persona_name=self.persona.name,
            persona_description=self.persona.description,
            history=self._history() if history else (),
            user_input=self.user_input,
            continuing=self.continuing,
            blocks=list(self.blocks) if blocks else [],
            author_note=self.author_note,
            player_messages=player_messages + (1 if self.user_input is not None else 0),
            variables=dict(self.variables),
            now=timezone.now(),
            seed=str(self.turn.id),
            anchors=self.prompt_anchors,
            read_limit=HISTORY_LIMIT,
        )

    def _history(self) -> list[dict[str, str]]:
        """The history as the Actor reads it: with the speakers' names in a group, and the
        replies' reasoning before their text when the preset sends it back."""
        history = self.group.history(self.history) if self.group else self.chat_history()
        if not self.preset.reasoning_in_prompt:
            return history
        return [
            {**sent, "content": with_reasoning(sent["content"], message.reasoning)}
            if message.role == "assistant"
            else sent
            for sent, message in zip(history, self.history, strict=True)
        ]

    def _card(self) -> Card:
        character = self.character
        if self.group is not None:
            return Card(**self.group.card_fields(character), greeting=self.greeting)
        return Card(
            name=character.name,
            description=character.description,
            personality=character.personality,
            scenario=character.scenario,
            mes_examples=character.example_dialogues,
            system_prompt=character.system_prompt,
            post_history_instructions=character.post_history_instructions,
            greeting=self.greeting,
        )


_UNREAD: Any = object()


def load_context(
    turn: Turn,
    user_input: str | None = None,
    *,
    preset: LoadedPreset | None = None,
    record: bool = True,
    scripts: bool | None = None,
    group: GroupTurn | None = _UNREAD,
) -> TurnContext:
    """The context of ``turn``: its conversation as it is now (a renamed character or
    persona, a changed model config), the history the turn's kind calls for, and every
    plug-in's ``read`` additions. ``preset`` replaces the model config's (the preset
    editor's preview of unsaved prompts); ``record=False`` keeps hooks from writing;
    ``scripts=False``: the caller found that no regex script can apply (None: the first
    read says whether one may);
    ``group`` the speaker ``groups.speaking.choose`` gave the turn (read from the turn when
    not given)."""
    first = turn_conversation(turn.conversation_id)
    conversation, config, scenario = first.conversation, first.config, first.scenario
    preset = preset or effective_preset(config)
    stored = stored_history(conversation, reasoning=preset.reasoning_in_prompt)
    history, user_input, continuing = _split(turn, stored, user_input)
    ctx = TurnContext(
        kind=turn.kind,
        turn=turn,
        conversation=conversation,
        character=conversation.character,
        persona=persona_from(conversation, first.default_persona),
        config=config,
        preset=preset,
        history=history,
        user_input=user_input,
        continuing=continuing,
        greeting=greeting_for(conversation),
        scenario=scenario,
        settings=ScenarioSettings(scenario),
        agent_state=first.agent_state,
        dio=first.dio,
        checks_replies=first.checks_replies,
        author_note=effective_note(conversation.author_note, conversation.character.author_note),
        record=record,
        prompt_anchors=first.anchors if record else None,
        group=speaking.for_turn(conversation, turn) if group is _UNREAD else group,
        tokens=counter_for(config),
    )
    if ctx.group is not None:
        _seat(ctx)
    if scripts is not False and first.scripts_may_apply:  # ``regex_scripts.may_apply``
        _prompt_scripts(ctx)
    ctx.trace["read"] = {
        "kind": turn.kind,
        "history_messages": len(history),
        "model_config": str(config.id) if config else "env-default",
        "preset": ctx.preset.id or "default",
        "tokenizer": ctx.tokens.name,
    }
    # Each read hook's time on the turn's critical path, by its plug-in's name
    # ("memory_pack"): what bench_turns reports of the memory hooks under load.
    timings = ctx.trace.setdefault("hooks_ms", {})
    for name, read in PLUGINS.readers:
        began = time.perf_counter()
        read(ctx, conversation)
        timings[name] = round((time.perf_counter() - began) * 1000, 3)
    return ctx


def _seat(ctx: TurnContext) -> None:
    """A group turn: the reply keeps its speaker, the trace names it, and the other
    members' block is placed (none when every card is joined)."""
    group = ctx.group
    assert group is not None
    ctx.message_metadata.update(group.metadata())
    ctx.trace["speaker"] = group.metadata()["speaker"]
    block = group.members_block()
    if block:
        ctx.place("group_members", block, per_turn=False)


def _prompt_scripts(ctx: TurnContext) -> None:
    """The conversation's regex scripts, read once for the turn (its reply passes them
    before it is stored), and the prompt-only ones on the turn's copy of the history and
    input (``regex_scripts.turns``): what is stored stays as it is."""
    conversation = ctx.conversation
    scripts = active_scripts(conversation.tenant, ctx.character, ctx.preset.id, ctx.user_name)
    ctx.slot(TurnScripts).active = scripts
    if scripts:
        ctx.history, ctx.user_input = prompt_history(scripts, ctx.history, ctx.user_input)


def stored_history(conversation: Conversation, *, reasoning: bool = False) -> list[HistoryMessage]:
    """The conversation's newest :data:`HISTORY_LIMIT` messages, oldest first; with their
    reasoning when asked."""
    lines = message_reads.get_history_lines(
        conversation.tenant, conversation.session_id, HISTORY_LIMIT, reasoning=reasoning
    )
    return [HistoryMessage(*line) for line in lines]


def next_chat_history(conversation: Conversation) -> list[HistoryMessage]:
    """The history the conversation's next ``chat`` turn will read, as far as it is written
    (its own message, the input, is not)."""
    return _chat(stored_history(conversation))


def actor_prompt(ctx: TurnContext) -> AssembledPrompt:
    """The Actor's messages for ``ctx`` within its model config's window: what a turn sends,
    what the bench times and what the preset editor previews. A phase that assembled it
    already (Compact counts it) leaves it for the Actor: assembled again only when what it
    is made of changed since."""
    key = _prompt_key(ctx)
    if ctx._prompt is not None and ctx._prompt[0] == key:
        return ctx._prompt[1]
    pconfig = provider_config(ctx.config)
    prompt = assemble(
        ctx.preset,
        ctx.actor_inputs(),
        count_messages=ctx.tokens.count_messages,
        context_limit=capped(pconfig.context_limit, ctx.admission.max_context_tokens),
        max_output_tokens=capped(pconfig.max_output_tokens, ctx.admission.max_reply_tokens),
    )
    ctx._prompt = (key, prompt)
    return prompt


def _prompt_key(ctx: TurnContext) -> tuple:
    """Everything of the context the Actor prompt is assembled from."""
    return (
        id(ctx.preset),
        id(ctx.config),
        tuple((m.id, m.role, m.content) for m in ctx.history),
        ctx.user_input,
        ctx.continuing,
        json.dumps(ctx.blocks, sort_keys=True, default=str),
        tuple(sorted(ctx.variables.items())),
        ctx.author_note,
        ctx.greeting,
        ctx.persona,
        ctx.speaker.pk,
    )


def _split(
    turn: Turn, rows: list[HistoryMessage], user_input: str | None
) -> tuple[list[HistoryMessage], str | None, str | None]:
    """(history, input, text being continued) for the turn's kind (see the module doc)."""
    if turn.kind == TurnKind.GROUP:  # a member speaks on its own: no new input
        return _chat(rows), None, None
    if answers_new_message(turn):
        if user_input is None:
            user_input = next((m.content for m in rows if m.id == turn.user_message_id), "")
        return _chat(m for m in rows if m.id != turn.user_message_id), user_input, None
    target = next((i for i, m in enumerate(rows) if m.id == turn.assistant_message_id), None)
    before = rows[:target] if target is not None else rows
    if turn.kind == TurnKind.CONTINUE:
        continuing = rows[target].content if target is not None else ""
        return _chat(before), None, continuing
    last_user = next((i for i in range(len(before) - 1, -1, -1) if before[i].role == "user"), None)
    if last_user is None:  # rewriting the opening reply: nothing the player said to answer
        return _chat(before), None, None
    return _chat(before[:last_user] + before[last_user + 1 :]), before[last_user].content, None


def _chat(messages) -> list[HistoryMessage]:
    return [m for m in messages if m.role in ("user", "assistant") and m.content]
