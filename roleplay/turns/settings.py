"""The scenario's settings as one turn reads them (``ctx.settings``): each part parsed at
most once per turn, on first use, so every plug-in of the turn reads the same typed object
instead of parsing the scenario again (the parsers behind it are ``roleplay.selectors``'s,
memoized per stored JSON)."""

from __future__ import annotations

from functools import cached_property

from roleplay.frontloop.engine import DirectorConfig
from roleplay.models import Scenario
from roleplay.scenarios.config import AgenticV2, Compact, Dio, ExternalMemory, StoryV1
from roleplay.scenarios.selectors import (
    agentic_config,
    compact_config,
    dio_config,
    front_loop_config,
    story_config,
)
from roleplay.scenarios.worldbook_config import DEFAULT, WorldbookConfig


def runtime_of(scenario: Scenario | None) -> str:
    """The scenario's memory runtime: ``internal`` (the default), ``external`` or ``off``."""
    return getattr(scenario, "memory_runtime", None) or "internal"


def worldbook_of(scenario: Scenario | None) -> WorldbookConfig:
    """The scenario's ``worldbook`` object, else the defaults."""
    raw = getattr(scenario, "worldbook", None)
    return WorldbookConfig.model_validate(raw, strict=False) if raw else DEFAULT


class ScenarioSettings:
    """The typed settings of the scenario a turn runs (None for a part it leaves off)."""

    def __init__(self, scenario: Scenario | None) -> None:
        self.scenario = scenario

    @cached_property
    def agentic(self) -> AgenticV2 | None:
        """Agent V2's config when the turn runs Agent V2 (``selectors.agentic_config``)."""
        return agentic_config(self.scenario)

    @cached_property
    def story(self) -> StoryV1 | None:
        """``storyV1`` when the turn runs Story (``selectors.story_config``)."""
        return story_config(self.scenario)

    @cached_property
    def compact(self) -> Compact | None:
        """``compact`` when it is on (``selectors.compact_config``)."""
        return compact_config(self.scenario)

    @cached_property
    def front_loop(self) -> DirectorConfig | None:
        """``preActorDirector`` when the scenario has one (``selectors.front_loop_config``)."""
        return front_loop_config(self.scenario)

    @cached_property
    def dio(self) -> Dio | None:
        """``dio`` when it is on (``selectors.dio_config``)."""
        return dio_config(self.scenario)

    @cached_property
    def worldbook(self) -> WorldbookConfig:
        return worldbook_of(self.scenario)

    @cached_property
    def memory_runtime(self) -> str:
        return runtime_of(self.scenario)

    @cached_property
    def external_memory(self) -> ExternalMemory | None:
        """The ``externalMemory`` object when the runtime is ``external`` and names one, with
        its defaults (the model's, the one place they are written)."""
        scenario = self.scenario
        if scenario is None or self.memory_runtime != "external" or not scenario.external_memory:
            return None
        return ExternalMemory.model_validate(scenario.external_memory, strict=False)
