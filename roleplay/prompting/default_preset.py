"""The shipped default preset: what a model config without a preset of its own uses.

**The Actor's list** reproduces the prompt ``roleplay.actor`` built before presets, with
SillyTavern's card overrides:

1. ``worldInfoBefore``: worldbook blocks placed before the character;
2. ``main``: "You are {{char}}, in a roleplay with the user. Stay in character." A card's
   ``system_prompt`` replaces this text, as in SillyTavern;
3. ``roleplay``: ``{{description}}``, the character prompt slot (named ``roleplay``);
4. ``charPersonality``, ``scenario``, ``personaDescription``: each a labelled line, only
   when the card (or the persona) has that text;
5. ``worldInfoAfter``: worldbook blocks placed after the character;
6. ``dialogueExamples``: "Example dialogue:" and the card's examples, when it has some;
7. ``chatHistory`` (the opening line, then the history);
8. ``userInput``;
9. ``turnContext``: the blocks that change from turn to turn (selected lore that is not
   constant, the memory pack, Agent V2's state, the story stage...), after the player's
   message, where the next turn's history still holds that message;
10. ``postHistoryInstructions``: empty, so it adds nothing, unless the card has
    ``post_history_instructions``, which replace it and so come after the history.

**The cache-aware layout** is item 9: everything before it stays byte for byte the same
from one turn to the next unless the card, the persona, constant lore, the compaction
summary or the older history changed, so a model server reuses its cache of that prefix,
the player's message included (docs/prompt.md). :func:`default_prompt_data` with
``layout="classic"`` is the same list without the marker: the per-turn blocks then go where
each asks (after the character), as before; joined with blank lines, its system prompts
1-6 of a card with only a description and examples are the old system message word for
word.

**Role templates** (``position: none``), each with the variables its capability supplies
as ``{{getvar::name}}`` (``{{char}}`` and the card macros are not used: a background
capability may run for a character other than the Actor's, so it names it explicitly):

==============================  ===============================================================
``auto_reply``                  ``language`` (required by the seed), ``characterName``
``orchestrator``                ``characterName``, ``enabledTools`` (comma-separated tool names
                                offered in this call)
``specialist_*`` (six)          ``characterName``; the orchestrator's ``reason`` and ``focus``
                                come in the user message with the material
``director``                    ``characterName``, ``maxStateChars`` (the state's upper bound,
                                at most 8,000)
``compactor``                   ``characterName``, ``maxSummaryTokens`` (the compact config's)
``front_controller``            ``characterName``: the front tool loop's controller
                                (``docs/front-loop.md``); the skills and the player's input
                                come in its messages
``dio_compiler``                ``characterName``: our DIO's compiler (``docs/dio.md``); the
                                prompt in force and the instructions come in its message
``story_writer``                ``characterName``; Story places it in the Actor's prompt, in
                                the same system block as ``[CURRENT STORY STAGE]`` (the
                                seed's POV writer stage instructions), read from the Actor's
                                own preset
==============================  ===============================================================

Each capability sends its material (history, state, results) as the user message; these
templates are the system prompt: the role, what to weigh, and the exact output wanted
(``story_writer`` excepted: it tells the Actor how to read the stage that follows it).

Pure: the preset is built and validated once per process.
"""

from __future__ import annotations

from functools import cache

from roleplay.dio.engine.compiler import DIO_COMPILER_PROMPT
from roleplay.frontloop.engine.prompt import FRONT_CONTROLLER_PROMPT
from roleplay.prompting.director_state import DIRECTOR_STATE_HEADER, DIRECTOR_STATE_SECTIONS
from roleplay.prompting.presets import (
    AUTO_REPLY,
    CHAT_HISTORY,
    COMPACTOR,
    DIO_COMPILER,
    DIRECTOR,
    FRONT_CONTROLLER,
    MAIN,
    ORCHESTRATOR,
    POST_HISTORY,
    ROLEPLAY,
    STORY_WRITER,
    TURN_CONTEXT,
    USER_INPUT,
    Layout,
    LoadedPreset,
    validate_prompts,
)

DEFAULT_PRESET_NAME = "Shipped default"

MAIN_PROMPT = "You are {{char}}, in a roleplay with the user. Stay in character."


def _actor_prompts() -> list[dict]:
    def marker(identifier: str, name: str, wrapper: str = "") -> dict:
        return {"identifier": identifier, "name": name, "content": wrapper}

    return [
        marker("worldInfoBefore", "World Info (before)"),
        {"identifier": MAIN, "name": "Main Prompt", "content": MAIN_PROMPT},
        {"identifier": ROLEPLAY, "name": ROLEPLAY, "content": "{{description}}"},
        marker("charPersonality", "Char Personality", "{{char}}'s personality: {{personality}}"),
        marker("scenario", "Scenario", "Scenario: {{scenario}}"),
        marker("personaDescription", "Persona Description", "About {{user}}: {{persona}}"),
        marker("worldInfoAfter", "World Info (after)"),
        marker("dialogueExamples", "Chat Examples", "Example dialogue:\n{{mesExamples}}"),
        marker(CHAT_HISTORY, "Chat History"),
        marker(USER_INPUT, "User Input"),
        marker(TURN_CONTEXT, "Per-turn context"),
        {"identifier": POST_HISTORY, "name": "Post-History Instructions", "content": ""},
    ]


AUTO_REPLY_TEMPLATE = """\
You suggest what the user could say next in a roleplay with {{getvar::characterName}}.

Read the recent conversation and the guidance you are given, then write three different \
messages the user could send next, in the user's own voice:
1. one that follows the current plot;
2. one about feelings, the relationship, or curiosity;
3. one that pauses, asks for clarification, or takes the story elsewhere.

Rules:
- Write every option in {{getvar::language}}.
- Speak only for the user. Never decide what {{getvar::characterName}} or anyone else does, \
and never declare that an action succeeds.
- Each option is one short message of at most 160 characters; no two alike.
- The guidance is a hint about this moment, not something that has already happened.

Answer with JSON only: {"options": ["...", "...", "..."]}"""

ORCHESTRATOR_TEMPLATE = """\
You are the orchestrator behind a roleplay with {{getvar::characterName}}. You never write \
story text. After each turn you decide whether background analysis is needed, using only \
the tools offered in this call ({{getvar::enabledTools}}):
- analyze_plot: whether the main line, the current arc and its branches still fit;
- judge_npc: who is present, their identity, motives, knowledge, location, entrances, exits;
- audit_knowledge: facts, secrets, lies, guesses, evidence, and who knows what;
- simulate_world: time passing, places, deadlines, what happens off screen;
- manage_callbacks: promises, clues, items, injuries, obligations, delayed consequences;
- direct_scene: point of view, scene focus, how far the character may take the initiative;
- update_director_state: rewrite the persistent state notes from what is now known.

How to decide:
- Ordinary conversation that changes nothing lasting needs no tool: call none.
- Call a specialist only with a concrete question: a reason, and a focus when it helps.
- Call update_director_state when something lasting changed (a fact, a promise, an item, a \
relationship, a place, the time) or when specialist results should be kept.
- Few, targeted calls; never ask two specialists the same question."""

_SPECIALIST_ROLES = {
    "analyze_plot": """\
You are the plot analyst of a roleplay with {{getvar::characterName}}. Judge whether the \
main line, the current arc and the open branches still fit what just happened, above all \
when the user refused, changed or ignored a direction. Offer one or two ways the story can \
go on that follow from the material, each with what it needs; never a fixed script, and \
always leave the user free to choose.""",
    "judge_npc": """\
You check the people of a roleplay with {{getvar::characterName}} for continuity: who is \
present and how many, who they are, what they want, what they know and how they know it, \
where they are, and how they enter or leave. Flag anyone who appears without a reason, \
knows what they could not know, or acts against established motives, and say how the scene \
can fix it. Do not invent full character sheets.""",
    "audit_knowledge": """\
You audit the knowledge boundaries of a roleplay with {{getvar::characterName}}. Separate \
established facts, secrets, lies, guesses and evidence, and say for each person involved \
what they know, what they only suspect, and what they cannot know yet (nobody knows what an \
unopened letter says). Work from the material; do not bring in outside lore.""",
    "simulate_world": """\
You keep the world of a roleplay with {{getvar::characterName}} moving. Work out how much \
time has passed, where everyone is, which deadlines or appointments are due or missed, and \
what plausibly happened off screen meanwhile. Give the changes the next reply should reflect \
as suggestions, not as events that already happened.""",
    "manage_callbacks": """\
You track the open threads of a roleplay with {{getvar::characterName}}: promises, clues, \
borrowed or lost items, injuries, obligations, foreshadowing and delayed consequences. List \
what is still open, what the latest turn opened or closed, and what must be remembered. A \
callback need not pay off now: say which could return naturally soon.""",
    "direct_scene": """\
You direct the scene of a roleplay with {{getvar::characterName}}: whose point of view, \
where the attention rests, what the scene should focus on, and how far \
{{getvar::characterName}} may take the initiative. Characters may act, propose and react, \
but never decide for the user or narrate the user's actions, words or feelings.""",
}

_SPECIALIST_RULES = """

Rules:
- Work only from the material you are given; mark what you infer as inference.
- Your answer is advice for the writers, not story text and not a reply to the user.
- Be concise: plain text, at most about 5,000 characters, in the conversation's language."""

_DIRECTOR_INTRO = """\
You are the Director of a roleplay with {{getvar::characterName}}. You keep the persistent \
state notes the writers read before every reply.

You receive the current state, the character and the opening, the user's persona, the \
recent conversation, the user's latest message, why an update was requested, and any \
specialist results. Write the complete new state that replaces the old one: not a patch, \
not a reply to the user.

Rules:
- Keep every fact of the old state that nothing contradicts.
- Add only changes the material supports; what the user merely intends has not happened.
- Ideas for the future are options, never facts.
- No reasoning, no tags, no commentary: only the state.
- Between 500 and {{getvar::maxStateChars}} characters.

Write exactly this structure, every section in this order ("none" when one is empty):

"""

DIRECTOR_TEMPLATE = _DIRECTOR_INTRO + "\n".join(
    [DIRECTOR_STATE_HEADER, *(f"{section}:" for section in DIRECTOR_STATE_SECTIONS)]
)

COMPACTOR_TEMPLATE = """\
You compress the older part of a long roleplay with {{getvar::characterName}} so that the \
conversation can go on within the model's context.

You receive the earlier summary (if any), the older messages to fold into it, and the \
user's latest message to judge what matters. Write one summary that replaces the earlier \
one and covers everything in both.

Canonical facts: events, decisions, names, places, items, injuries, time.
Relationship and interaction: how the characters feel about each other and how they talk.
Open threads: promises, plans, secrets and questions still open, and who is involved.

Rules:
- Record only what the messages show. The latest message is context: if the user says they \
are bringing a key back, do not write that the key was returned.
- Past tense, third person, plain text under the three headings above; no commentary.
- At most {{getvar::maxSummaryTokens}} tokens; drop small talk before facts."""


# The seed's POV writer stage instructions (``POV_WRITER_STAGE_INSTRUCTIONS``): how the
# Actor turns the stage into prose; it does not say who the character is or how it writes.
STORY_WRITER_TEMPLATE = """\
The story stage that follows (a JSON object with stage and narrative) directs this reply \
of {{getvar::characterName}}'s story. Write the reply as you otherwise would, in character, \
and use the stage this way:
- stage.event is the scene now and its phase: at start, set it up; while it develops, let it \
build; at end, close it or lead to what comes next.
- stage.userAction is what the user just did or said: answer it. Never decide for the user: \
do not write the user's actions, words, thoughts or feelings beyond what they wrote, and \
never make a choice for them (offering it is fine).
- stage.inScene holds consequences already in the scene: let them show.
- stage.hints are things not yet in view: show them only as atmosphere or signs; never \
explain them or name what lies behind them.
- stage.invitation, when set, must actually reach the user in this reply (a message, a \
visitor, a request), as an invitation the user is free to refuse.
- stage.companionFollows, when false, means {{getvar::characterName}} does not go along to \
the scene the user turned to.
- narrative.goal is what this reply may move toward; it has not happened yet. Never write it \
as already achieved: move toward it only as far as this moment allows, or not at all.
- narrative.mainDirection and narrative.subDirection say where the story is heading; \
narrative.emotionGuide (valence, arousal, dominance in -1..1, its label and beat: build, \
hold or release) is the feeling to aim for when it is enabled.
- The stage is hidden direction: never mention it, its fields or its goals, and reveal \
nothing hidden or that the characters could not know."""


def role_templates() -> dict[str, str]:
    """Name -> text of every role template the default preset ships."""
    templates = {AUTO_REPLY: AUTO_REPLY_TEMPLATE, ORCHESTRATOR: ORCHESTRATOR_TEMPLATE}
    for tool, text in _SPECIALIST_ROLES.items():
        templates[f"specialist_{tool}"] = text + _SPECIALIST_RULES
    templates[DIRECTOR] = DIRECTOR_TEMPLATE
    templates[COMPACTOR] = COMPACTOR_TEMPLATE
    templates[STORY_WRITER] = STORY_WRITER_TEMPLATE
    templates[FRONT_CONTROLLER] = FRONT_CONTROLLER_PROMPT
    templates[DIO_COMPILER] = DIO_COMPILER_PROMPT
    return templates


def default_prompt_data(layout: Layout = "cache_aware") -> list[dict]:
    """The default preset's prompts as JSON: a new preset starts from a copy of these.
    ``classic``: without the ``turnContext`` marker (the layout before it existed)."""
    templates = [
        {"identifier": name, "name": name, "content": text, "injection": {"position": "none"}}
        for name, text in role_templates().items()
    ]
    prompts = [
        {"role": "system", "enabled": True, "injection": {"position": "relative"}, **p}
        for p in _actor_prompts() + templates
        if layout == "cache_aware" or p["identifier"] != TURN_CONTEXT
    ]
    return [dict(p, forbid_overrides=False) for p in prompts]


@cache
def default_preset() -> LoadedPreset:
    """The shipped default, validated by the same rules as every stored preset."""
    return LoadedPreset(tuple(validate_prompts(default_prompt_data())), name=DEFAULT_PRESET_NAME)
