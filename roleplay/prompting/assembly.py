"""The Actor's prompt: preset → layout → placement → token budget. Pure.

1. **Preset.** The preset's enabled Actor prompts (``presets.LoadedPreset.actor_prompts``), in
   order, become messages: each prompt's macros are expanded (``macros``; the seed names the
   turn and the prompt, so a retry expands alike); markers are filled from the card, the
   persona, the history and the input; a card's ``system_prompt`` and
   ``post_history_instructions`` replace ``main`` and ``postHistoryInstructions`` unless
   the prompt forbids overrides. A prompt whose text comes out blank adds nothing.
2. **Layout.** What the messages offer the placement engine: the character region (between
   the ``worldInfoBefore`` and ``worldInfoAfter`` markers, else the character's own prompts),
   the examples region (``dialogueExamples``), the real history (the opening line and the
   stored messages, with ``chatHistory``'s place when empty), the author's note message
   (inserted in the history at its depth when its frequency says so) and the
   ``{{outlet::name}}`` slots. :func:`capabilities` tells the worldbook, before it selects,
   which positions the layout will have.
3. **Placement.** Worldbook blocks and the preset's ``at_depth`` prompts are placed
   (``placement``); a block whose position the layout lacks is never dropped silently: it is
   returned in ``unavailable``. With the cache-aware layout (the preset has the
   ``turnContext`` marker) the blocks marked ``per_turn`` that ask for a place near the
   character go to the marker instead, after the history (``stability``). Then the system
   messages before the history are joined with blank lines into one (many chat templates
   accept only one system message), and so are the per-turn system messages at the marker.
   Each piece is labelled stable or per turn; the run of stable pieces from the start is
   the stable prefix a model server can keep cached from one turn to the next.
4. **Budget.** ``context_limit - max_output_tokens - margin``, counted on the final messages;
   the oldest history goes first, one whole message at a time; everything else is fixed and
   never dropped; when the fixed part alone does not fit it is ``context_overflow``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from console.failures import Invalid
from roleplay.prompting import anchoring, offered, trimming
from roleplay.prompting import presets as p
from roleplay.prompting.joining import JOIN, join_system, with_turn_context
from roleplay.prompting.macros import VOLATILE_MACROS, MacroContext, expand_macros
from roleplay.prompting.placement import (
    Block,
    History,
    Layout,
    Placement,
    Span,
    place_context_blocks,
    placement_capabilities,
)
from roleplay.prompting.stability import (
    per_turn_ids,
    prefix_length,
    split_turn_blocks,
    stable_pieces,
)
from roleplay.prompting.syntax import outside_macros

SAFETY_MARGIN_TOKENS = 64
MessageCounter = Callable[[Sequence[Mapping[str, Any]]], int]
NOTE_POSITIONS = ("author_note_top", "author_note_bottom")
CHARACTER_PROMPTS = (p.MAIN, p.ROLEPLAY, "charDescription", "charPersonality", "scenario")


class ContextOverflow(Invalid):
    """Even without any history the prompt does not fit the model's budget."""

    default_code = "context_overflow"


@dataclass(frozen=True)
class Card:
    """The character's text as the prompt uses it (``greeting``: the conversation's chosen
    opening line)."""

    name: str
    description: str = ""
    personality: str = ""
    scenario: str = ""
    mes_examples: str = ""
    system_prompt: str = ""
    post_history_instructions: str = ""
    greeting: str = ""


@dataclass(frozen=True)
class AuthorNote:
    """SillyTavern's author's note: ``content`` on every ``frequency``-th player message
    (0: never), inserted in the history ``depth`` messages from its end (``in_chat``) or
    just before or after the preset's main prompt (``before_prompt``, ``after_prompt``)."""

    content: str
    depth: int = 4
    frequency: int = 1
    role: str = "system"
    position: str = "in_chat"


@dataclass(frozen=True)
class ActorInputs:
    """Everything of the turn the Actor prompt is made of."""

    card: Card
    persona_name: str
    persona_description: str = ""
    history: Sequence[Mapping[str, str]] = ()
    user_input: str | None = None
    continuing: str | None = None
    blocks: Sequence[Mapping[str, Any]] = ()
    author_note: AuthorNote | None = None
    player_messages: int = 0
    variables: Mapping[str, str] = field(default_factory=dict)
    now: datetime | None = None
    seed: str = ""
    # The anchors of the turn before (``anchoring``): its per-turn blocks that did not
    # change stay where they were, and the history starts where it started (``trimming``).
    # None: anchor nothing (a preview, a first turn).
    anchors: Mapping[str, Any] | None = None
    # How many stored messages the history read holds at most (0: all of them): a new
    # start of the history stays well inside it (``trimming``).
    read_limit: int = 0


@dataclass(frozen=True)
class Part:
    """One message of the result and where it came from, for the trace and the preview."""

    source: str
    role: str
    tokens: int


@dataclass(frozen=True)
class AssembledPrompt:
    messages: list[dict[str, Any]]
    parts: list[Part]
    prompt_tokens: int
    budget: int
    dropped_history: int
    placements: tuple[Placement, ...]
    unavailable: tuple[str, ...]
    unknown_macros: tuple[str, ...]
    missing_variables: tuple[str, ...]
    # (source, message) before the system messages at the head were joined: what the
    # preview counts block by block.
    pieces: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    # For each piece, whether it stays the same on the next turn (``stability``), and the
    # layout it was assembled with (``LoadedPreset.layout``).
    stable: tuple[bool, ...] = ()
    layout: str = "classic"
    # Where this turn's per-turn blocks went, for the next turn (``anchoring``).
    anchors: Mapping[str, Any] = field(default_factory=dict)

    def message_pieces(self) -> list[list[tuple[str, Mapping[str, Any]]]]:
        """For each message, the pieces it was joined from (one for most messages)."""
        pieces = iter(self.pieces)
        return [[next(pieces) for _ in part.source.split("+")] for part in self.parts]

    @property
    def stable_prefix_pieces(self) -> int:
        """How many pieces from the start are stable: the stable prefix."""
        return prefix_length(self.stable)

    def stable_prefix(self) -> list[dict[str, Any]]:
        """The messages of the stable prefix; the last one cut after its last stable piece
        when the prefix ends inside a joined message (the next turn's request starts with
        exactly these, when only per-turn parts changed)."""
        left, out = self.stable_prefix_pieces, []
        for message, joined in zip(self.messages, self.message_pieces(), strict=True):
            if left <= 0:
                break
            if left >= len(joined):
                out.append(message)
            else:
                kept = JOIN.join(str(piece["content"]) for _, piece in joined[:left])
                out.append({**message, "content": kept})
            left -= len(joined)
        return out


def note_active(inputs: ActorInputs) -> bool:
    note = inputs.author_note
    if note is None or not note.content.strip() or note.frequency <= 0:
        return False
    return inputs.player_messages % note.frequency == 0


def capabilities(preset: p.LoadedPreset, inputs: ActorInputs) -> tuple[str, ...]:
    """The positions (and ``outlet:<name>``) the layout of this turn will offer: what the
    worldbook may select for. The history's text changes nothing here, so it is left out;
    the answer is remembered per preset and the inputs that decide it (``offered``)."""

    def compute() -> tuple[tuple[str, ...], bool]:
        built = _Builder(preset, inputs, []).build()
        return placement_capabilities(built.layout), not built.presence_varies

    variables = tuple(sorted(inputs.variables.items()))
    note = inputs.author_note if note_active(inputs) else None
    key = (inputs.card, inputs.persona_name, inputs.persona_description, variables, note)
    return offered.remembered(preset, key, compute)


def assemble(
    preset: p.LoadedPreset,
    inputs: ActorInputs,
    *,
    count_messages: MessageCounter,
    context_limit: int,
    max_output_tokens: int,
) -> AssembledPrompt:
    """The Actor's messages for ``inputs`` (see the module docstring)."""
    budget = context_limit - max_output_tokens - SAFETY_MARGIN_TOKENS
    empty = count_messages([])
    history = list(inputs.history)
    # The cache-aware layout trims with slack and keeps the turn before's start (trimming).
    cache_aware = preset.layout == "cache_aware"
    dropped = trimming.start_of(history, inputs.anchors) if cache_aware else 0
    if cache_aware and dropped == 0:
        dropped = trimming.read_cap(len(history), inputs.read_limit)
    cut_before = False
    # Stale per-turn text kept where it stood (anchoring), counted in the window.
    stale = (
        int(anchoring.STALE_SHARE * budget),
        lambda text: count_messages([_system(text)]) - empty,
    )
    while True:
        built = _Builder(preset, inputs, history[dropped:], stale).build()
        capable = set(placement_capabilities(built.layout))
        blocks = [b for b in built.blocks if _capability(b) in capable]
        unavailable = tuple(b.id for b in built.blocks if _capability(b) not in capable)
        placed = place_context_blocks(built.messages, built.layout, blocks)
        late = with_turn_context(built, placed.messages, placed.placements)
        messages, sources = join_system(late)
        # A message's cost is additive: count each once, for the total and the trace.
        costs = [count_messages([m]) - empty for m in messages]
        tokens = empty + sum(costs)
        if tokens <= budget:
            break
        if built.stale and dropped >= len(history):  # no history left: the stale text goes
            stale = (0, stale[1])
            continue
        if dropped >= len(history):
            raise ContextOverflow(
                message=f"the prompt needs {tokens} tokens but the budget is {budget} "
                f"(context_limit {context_limit} - max_output_tokens {max_output_tokens} "
                f"- margin {SAFETY_MARGIN_TOKENS})",
                details={"tokens": tokens, "budget": budget},
            )
        # Drop enough of the oldest messages to cover the excess (a message's cost is
        # additive; the first cut with slack, and the stale text goes with it: the prompt
        # breaks at the history's start anyway, anchoring), then re-check: merged blocks
        # may still move the total a little.
        history_costs = built.history_costs(count_messages)
        excess = tokens - budget - (0 if cut_before else built.stale)
        step = trimming.cut(history_costs, max(excess, 0), slack=cache_aware and not cut_before)
        if cache_aware and not cut_before:
            step = max(step, trimming.read_cap(len(history) - dropped, inputs.read_limit))
        dropped, cut_before = dropped + max(step, 1), True
    parts = [
        Part(source, m["role"], cost)
        for m, source, cost in zip(messages, sources, costs, strict=True)
    ]
    return AssembledPrompt(
        messages=messages,
        parts=parts,
        prompt_tokens=tokens,
        budget=budget,
        dropped_history=dropped,
        placements=late.placements,
        unavailable=unavailable,
        unknown_macros=built.unknown,
        missing_variables=built.missing,
        pieces=tuple(zip(late.sources, late.messages, strict=True)),
        stable=stable_pieces(
            late.sources,
            per_turn=built.per_turn,
            depth_blocks={b.id for b in blocks if b.position == "at_depth"},
            volatile_prompts=built.volatile,
            note_moves=built.note_moves,
            placements=late.placements,
        ),
        layout=preset.layout,
        anchors=_with_start(built.anchors, history, dropped) if cache_aware else built.anchors,
    )


def _with_start(anchors: Mapping[str, Any], history: list, start: int) -> Mapping[str, Any]:
    """The anchors with where the history started (``trimming``), for the next turn."""
    mark = trimming.mark(history, start)
    return {**anchors, trimming.KEY: mark} if mark is not None else anchors


def _system(text: str) -> dict[str, str]:
    return {"role": "system", "content": text}


def _capability(block: Block) -> str:
    return f"outlet:{block.outlet_name}" if block.position == "outlet" else block.position


@dataclass
class _Built:
    messages: list[dict[str, Any]]
    sources: list[str]
    layout: Layout
    blocks: list[Block]
    head_end: int  # messages before this index precede the history
    unknown: tuple[str, ...]
    missing: tuple[str, ...]
    history_indices: tuple[int, ...] = ()
    # The cache-aware layout's turnContext marker (the builder's index it stands at) and the
    # blocks that go there, the ids of the
    # per-turn blocks, the identifiers of prompts using a volatile macro, and whether the
    # author's note moves from turn to turn (``stability``).
    turn_at: int | None = None
    turn_blocks: tuple[Block, ...] = ()
    per_turn: frozenset[str] = frozenset()
    volatile: frozenset[str] = frozenset()
    note_moves: bool = False
    anchors: Mapping[str, Any] = field(default_factory=dict)
    # whether a volatile macro may decide if a prompt is sent at all (its text outside the
    # macros is blank), and so the layout's positions (``capabilities``)
    presence_varies: bool = False
    stale: int = 0  # the stale per-turn text kept where it stood (anchoring)

    def history_costs(self, count_messages: MessageCounter) -> list[int]:
        """Tokens each stored history message adds, oldest first."""
        empty = count_messages([])
        return [count_messages([self.messages[i]]) - empty for i in self.history_indices]


class _Builder:
    """One pass over the preset's Actor prompts for a given history."""

    def __init__(
        self,
        preset: p.LoadedPreset,
        inputs: ActorInputs,
        history: list,
        stale: tuple[int, Callable[[str], int]] = (0, len),
    ) -> None:
        self.preset, self.inputs, self.history, self.stale = preset, inputs, history, stale
        card = inputs.card
        self.macros = MacroContext(
            char=card.name,
            user=inputs.persona_name,
            persona=inputs.persona_description,
            description=card.description,
            personality=card.personality,
            scenario=card.scenario,
            mes_examples=card.mes_examples,
            variables={"systemPrompt": card.system_prompt, **inputs.variables},
            now=inputs.now,
            seed=inputs.seed,
        )
        self.messages: list[dict[str, Any]] = []
        self.sources: list[str] = []
        self.per_turn = per_turn_ids(inputs.blocks)
        self.blocks, self.turn_blocks = split_turn_blocks(
            [Block.from_mapping(b) for b in inputs.blocks],
            self.per_turn,
            preset.layout == "cache_aware",
        )
        self.anchors: dict[str, Any] = {}
        self.stale_kept = 0
        self.turn_at: int | None = None
        self.input_added = False
        self.marker_follows: dict[str, Any] | None = None
        self.volatile: dict[str, None] = {}
        self.presence_varies = False
        self.unknown: dict[str, None] = {}
        self.missing: dict[str, None] = {}
        self.outlets: dict[str, int] = {}
        self.marks: dict[str, int] = {}
        self.character: list[int] = []
        self.examples: Span | None = None
        self.conversation: History | None = None
        self.note: int | None = None
        self.note_slot = _note_slot(preset, inputs)
        self.history_indices: list[int] = []

    def expand(self, text: str, identifier: str) -> str:
        result = expand_macros(text, _seeded(self.macros, identifier))
        self.unknown.update(dict.fromkeys(result.unknown))
        self.missing.update(dict.fromkeys(result.missing_variables))
        if VOLATILE_MACROS.intersection(result.used):
            self.volatile[identifier] = None
            self.presence_varies = self.presence_varies or not outside_macros(text).strip()
        for name in result.outlets:
            self.outlets[name] = len(self.messages)
        return result.text

    def add(self, role: str, content: str, source: str, **extra: Any) -> int:
        self.messages.append({"role": role, "content": content, **extra})
        self.sources.append(source)
        return len(self.messages) - 1

    def build(self) -> _Built:
        head_end = None
        for prompt in self.preset.actor_prompts():
            if isinstance(prompt.injection, p.AtDepth):
                self.depth_prompt(prompt)
                continue
            ident = prompt.identifier
            if ident in p.WORLD_INFO_MARKERS:
                self.marks[ident] = len(self.messages)
            elif ident == p.CHAT_HISTORY:
                head_end = len(self.messages)
                self.chat_history()
            elif ident == p.USER_INPUT:
                self.user_input()
            elif ident == p.TURN_CONTEXT:
                self.turn_context()
            else:
                self.prompt(prompt)
        if self.inputs.continuing is not None:
            self.add("assistant", self.inputs.continuing, "continuing", name=self.inputs.card.name)
        self.anchor()
        return _Built(
            self.messages,
            self.sources,
            self.layout(),
            self.blocks,
            head_end if head_end is not None else len(self.messages),
            tuple(self.unknown),
            tuple(self.missing),
            tuple(self.history_indices),
            self.turn_at,
            tuple(self.turn_blocks),
            self.per_turn,
            frozenset(self.volatile),
            self.note is not None and self._note_moves(),
            self.anchors,
            self.presence_varies,
            self.stale_kept,
        )

    def anchor(self) -> None:
        """The per-turn blocks that did not change since the turn before stay where they
        were, and within a budget the text no longer current too (``anchoring``): at a
        depth of the history, which every preset sends."""
        inputs = self.inputs
        if self.turn_at is None:  # the classic layout: blocks go where they ask
            return
        anchored = anchoring.anchor(
            self.turn_blocks,
            inputs.anchors,
            inputs.history,
            kept_from=len(inputs.history) - len(self.history),
            then=self.marker_follows,
            stale_budget=self.stale[0],
            measure=self.stale[1],
        )
        self.blocks += anchored.anchored
        self.turn_blocks, self.anchors = anchored.fresh, anchored.anchors
        self.stale_kept = anchored.stale

    def _note_moves(self) -> bool:
        note = self.inputs.author_note
        return self.note_slot == "in_chat" or note is None or note.frequency != 1

    def turn_context(self) -> None:
        """Where the per-turn blocks go: added once the other blocks are placed (so the
        blocks placed at depth 0 stay right after the history). After the player's message
        (the shipped default), they are anchored after it (``anchoring``)."""
        self.turn_at = len(self.messages)
        if self.input_added:  # the next turn's history holds the input before the blocks
            self.marker_follows = {"role": "user", "content": self.inputs.user_input}

    def prompt(self, prompt: p.Prompt) -> None:
        hosts_note = prompt.identifier == p.MAIN and self.note_slot != "in_chat"
        if hosts_note and self.note_slot == "before_prompt":
            self.add_note()
        self.relative_prompt(prompt)
        if hosts_note and self.note_slot == "after_prompt":
            self.add_note()

    def add_note(self) -> None:
        note = self.inputs.author_note
        assert note is not None
        content = self.expand(note.content, "authorNote")
        self.note = self.add(note.role, content, "author_note")

    def relative_prompt(self, prompt: p.Prompt) -> None:
        ident, card = prompt.identifier, self.inputs.card
        text = prompt.content
        if ident in p.MARKER_FIELDS:
            value = _field_value(ident, card, self.inputs)
            if not value.strip():
                return
            text = text or "{{" + p.MARKER_FIELDS[ident] + "}}"
        elif ident == p.MAIN and card.system_prompt.strip() and not prompt.forbid_overrides:
            text = card.system_prompt
        elif ident == p.POST_HISTORY and card.post_history_instructions.strip():
            if not prompt.forbid_overrides:
                text = card.post_history_instructions
        content = self.expand(text, ident)
        if not content.strip():
            return
        index = self.add(prompt.role, content, f"prompt:{ident}")
        if ident in CHARACTER_PROMPTS or prompt.name == p.ROLEPLAY:
            self.character.append(index)
        elif ident == "dialogueExamples":
            self.examples = Span(index, index + 1)

    def depth_prompt(self, prompt: p.Prompt) -> None:
        injection = prompt.injection
        assert isinstance(injection, p.AtDepth)
        content = self.expand(prompt.content, prompt.identifier)
        if content.strip():
            self.blocks.append(
                Block(
                    id=f"prompt:{prompt.identifier}",
                    position="at_depth",
                    content=content,
                    order=injection.order,
                    depth=injection.depth,
                    role=prompt.role,
                )
            )

    def chat_history(self) -> None:
        card, inputs = self.inputs.card, self.inputs
        start = len(self.messages)
        indices = []
        if card.greeting.strip():
            indices.append(
                self.add("assistant", self.expand(card.greeting, "greeting"), "greeting",
                         name=card.name)
            )  # fmt: skip
        for message in self.history:
            role = message["role"]
            name = card.name if role == "assistant" else inputs.persona_name
            indices.append(self.add(role, message["content"], "history", name=name))
        first_stored = 1 if card.greeting.strip() else 0
        if self.note_slot == "in_chat":
            self.insert_note(indices)
        self.history_indices = indices[first_stored:]
        self.conversation = History(tuple(indices), start)

    def insert_note(self, indices: list[int]) -> None:
        """The author's note as a message of its own, ``depth`` messages from the end."""
        note = self.inputs.author_note
        assert note is not None
        count = len(indices)
        if count == 0 or note.depth == 0:
            at = len(self.messages)  # after the last real message
        elif note.depth >= count:
            at = indices[0]  # deeper than the history: before its earliest message
        else:
            at = indices[count - note.depth]
        content = self.expand(note.content, "authorNote")
        self.messages.insert(at, {"role": note.role, "content": content})
        self.sources.insert(at, "author_note")
        for i, index in enumerate(indices):
            if index >= at:
                indices[i] = index + 1
        self.note = at

    def user_input(self) -> None:
        text = self.inputs.user_input
        if text is not None:
            self.add("user", text, "input", name=self.inputs.persona_name)
            self.input_added = True

    def layout(self) -> Layout:
        before, after = self.marks.get("worldInfoBefore"), self.marks.get("worldInfoAfter")
        character = None
        if before is not None and after is not None and before <= after:
            character = Span(before, after)
        elif self.character:
            character = Span(min(self.character), max(self.character) + 1)
        return Layout(
            character=character,
            examples=self.examples,
            conversation=self.conversation,
            author_note=self.note,
            outlets=self.outlets,
        )


def _note_slot(preset: p.LoadedPreset, inputs: ActorInputs) -> str | None:
    """Where this turn's author's note goes: None (no note this turn), ``in_chat``, or
    before/after the main prompt when the preset sends one in its list."""
    if not note_active(inputs):
        return None
    assert inputs.author_note is not None
    position = inputs.author_note.position
    if position == "in_chat":
        return position
    relative = (q for q in preset.actor_prompts() if not isinstance(q.injection, p.AtDepth))
    return position if any(q.identifier == p.MAIN for q in relative) else "in_chat"


def _field_value(identifier: str, card: Card, inputs: ActorInputs) -> str:
    return {
        "charDescription": card.description,
        "charPersonality": card.personality,
        "scenario": card.scenario,
        "personaDescription": inputs.persona_description,
        "dialogueExamples": card.mes_examples,
    }[identifier]


def _seeded(context: MacroContext, identifier: str) -> MacroContext:
    """The turn's seed plus the prompt's identifier: identical macros in two prompts draw
    differently, the same prompt on a retry draws alike."""
    return replace(context, seed=f"{context.seed}:{identifier}")
