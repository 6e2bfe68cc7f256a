"""Reads of a conversation's scenario and its parsed config parts (each parsed once per
scenario version and kept, so a turn never parses twice)."""

from __future__ import annotations

import copy

from roleplay.frontloop.engine import DirectorConfig, parse_director
from roleplay.models import (
    Conversation,
    Scenario,
)
from roleplay.scenarios.config import AgenticV2, Compact, Dio, ScenarioConfig, StoryV1


def scenario_for(conversation: Conversation) -> Scenario | None:
    """The scenario the conversation runs: its own, else its character's default, else none
    (the same precedence as model configs; a scenario of another tenant is none). The one
    scenario rule: the chat turn's one-statement read (``turns/reads.py``) is pinned to it
    by tests/fastpaths/test_turn_reads.py."""
    ids = (conversation.scenario_id, conversation.character.default_scenario_id)
    for scenario_id in ids:
        if scenario_id is not None:
            found = Scenario.objects.filter(
                tenant_id=conversation.tenant_id, pk=scenario_id
            ).first()
            if found is not None:
                return found
    return None


_PARSED_MAX = 2048
# Parsed scenario configs, by scenario and part, with the stored JSON they were parsed
# from: a turn's capabilities each ask for them, and validating ``agenticV2`` costs more
# than comparing it with what was parsed last. The models are frozen, so sharing is safe.
_PARSED: dict[tuple, tuple] = {}


def _parsed(scenario: Scenario, part: str, raw: object, parse):
    key = (scenario.pk, part)
    hit = _PARSED.get(key)
    if hit is not None and hit[0] == raw:
        return hit[1]
    value = parse()
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.clear()
    _PARSED[key] = (copy.deepcopy(raw), value)
    return value


def _routed(scenario: Scenario) -> ScenarioConfig:
    raw = {"agenticV2": scenario.agentic_v2, "storyV1": scenario.story_v1}
    return _parsed(
        scenario, "routed", raw, lambda: ScenarioConfig.model_validate(raw, strict=False)
    )


def agentic_config(scenario: Scenario | None) -> AgenticV2 | None:
    """The scenario's Agent V2 config when its turns run Agent V2 (``ScenarioConfig.route``:
    on, and Story, which wins, not on); else None. A stored config that no longer validates
    raises ``ValidationError``."""
    if scenario is None or not scenario.agentic_v2:
        return None
    config = _routed(scenario)
    return config.agenticV2 if config.route == "agentic_v2" else None


def story_config(scenario: Scenario | None) -> StoryV1 | None:
    """The scenario's ``storyV1`` when its turns run Story (on; it wins over Agent V2);
    else None."""
    if scenario is None or not scenario.story_v1:
        return None
    config = _routed(scenario)
    return config.storyV1 if config.route == "story" else None


def compact_config(scenario: Scenario | None) -> Compact | None:
    """The scenario's ``compact`` when it is on; else None."""
    if scenario is None or not scenario.compact:
        return None
    raw = scenario.compact
    config = _parsed(scenario, "compact", raw, lambda: Compact.model_validate(raw, strict=False))
    return config if config.enabled else None


def auto_reply_config(scenario: Scenario | None) -> AgenticV2 | None:
    """The scenario's Agent V2 config when it is on and names an ``autoReply`` model config
    (what auto-reply suggestions need); else None."""
    if scenario is None or not scenario.agentic_v2:
        return None
    config = AgenticV2.model_validate(scenario.agentic_v2, strict=False)
    return config if config.enabled and config.modelConfigs.autoReply else None


def front_loop_config(scenario: Scenario | None) -> DirectorConfig | None:
    """The scenario's ``preActorDirector`` (the front tool loop) when it has one; else None.
    Story's turns never run it (the two cannot be saved together)."""
    if scenario is None or not scenario.pre_actor_director:
        return None
    raw = scenario.pre_actor_director
    return _parsed(scenario, "preActorDirector", raw, lambda: parse_director(raw))


def dio_config(scenario: Scenario | None) -> Dio | None:
    """The scenario's ``dio`` when it is on (``internal`` or ``external``); else None (no
    object, or ``mode: off``)."""
    if scenario is None or not scenario.dio:
        return None
    raw = scenario.dio
    config = _parsed(scenario, "dio", raw, lambda: Dio.model_validate(raw, strict=False))
    return config if config.on else None
