"""A scenario's config objects, with the seed's field names verbatim (camelCase): ``agenticV2``,
``storyV1``, ``compact`` and ``preActorDirector`` (and ``worldbook``, in
``worldbook_config``, and ``dio``), each a pydantic model that rejects unknown fields, so a scenario
written for the seed's system validates here. Pure: no Django.

:func:`check_scenario` validates the four together with the cross-rules between them and
raises :class:`ScenarioInvalid` naming the first bad field as a dotted path
(``agenticV2.maxToolCalls``). Which model configs exist, and whether their presets hold the
role prompts, is the service's check (``roleplay.scenarios.services``).

Choices where the seed and a demanding operator differ:

- ``modelConfigs`` needs a config for the orchestrator, and for each enabled tool (the six
  specialists, and the director for ``update_director_state``), not for disabled ones (the
  seed's loader asks for all of them even when ``enabledTools`` leaves some out). A seed
  scenario, which names all, validates unchanged.
- ``jevOrchestration`` is accepted and checked (its argument model may not be the
  orchestrator's) so seed scenarios validate, but it changes nothing here.
- Beyond the seed, with defaults that keep its behaviour: ``commitPolicy`` (``always``, or
  ``reply_completed``: no state from a turn whose reply was cancelled or failed) and
  ``backgroundDeadlineMs`` (an overall deadline for a turn's background work; none by
  default) and ``backgroundWorldbook`` (the background also reads the worldbook entries the
  turn selected for the Actor; off by default, as in the seed).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from console.secrets import is_key_name
from roleplay.frontloop.engine import DirectorInvalid, parse_director
from roleplay.frontloop.engine.prompt import FRONT_CONTROLLER_ROLE
from roleplay.prompting.presets import SPECIALIST_TOOLS
from roleplay.scenarios.worldbook_config import WorldbookConfig
from story.engine.policy import PolicyInvalid, parse_policy

SPECIALISTS = SPECIALIST_TOOLS  # their role prompts are ``specialist_<name>`` in a preset
DIRECTOR_TOOL = "update_director_state"
TOOLS = (*SPECIALISTS, DIRECTOR_TOOL)

ConfigId = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]


class ScenarioInvalid(ValueError):
    """A scenario config breaks a rule; ``field`` is its dotted path."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


# The longest a turn may wait for its compaction (seed 002, Compact).
MAX_COMPACTION_MS = 600_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Specialists(_Strict):
    analyze_plot: ConfigId | None = None
    judge_npc: ConfigId | None = None
    audit_knowledge: ConfigId | None = None
    simulate_world: ConfigId | None = None
    manage_callbacks: ConfigId | None = None
    direct_scene: ConfigId | None = None


class ModelConfigs(_Strict):
    actor: ConfigId
    orchestrator: ConfigId
    specialists: Specialists = Specialists()
    director: ConfigId | None = None
    autoReply: ConfigId | None = None  # noqa: N815 - the seed's name


class ContextGovernance(_Strict):
    mode: Literal["shadow", "enforce"]
    safetyMarginTokens: int = Field(256, ge=1, le=8192)  # noqa: N815
    maxToolResultChars: int = Field(5000, ge=512, le=20000)  # noqa: N815


class Recovery(_Strict):
    transientRetryModelConfigId: ConfigId | None = None  # noqa: N815
    tolerateMissingStreamMetadata: bool = False  # noqa: N815


class JevOrchestration(_Strict):
    argumentModelConfigId: ConfigId  # noqa: N815


class AgenticV2(_Strict):
    enabled: bool = True
    modelConfigs: ModelConfigs  # noqa: N815
    enabledTools: list[Literal[TOOLS]] = Field(default_factory=lambda: list(TOOLS))  # type: ignore[valid-type]  # noqa: N815, E501
    routingMode: Literal["manual", "auto"] = "manual"  # noqa: N815
    escalationModelConfigId: ConfigId | None = None  # noqa: N815
    escalationToolCallThreshold: int = Field(3, ge=1, le=20)  # noqa: N815
    maxToolCalls: int = Field(7, ge=1, le=20)  # noqa: N815
    maxParallelTools: int = Field(6, ge=1, le=20)  # noqa: N815
    maxStateChars: int = Field(8000, ge=800, le=8000)  # noqa: N815
    modelCallTimeoutMs: int = Field(180000, ge=10000, le=300000)  # noqa: N815
    contextGovernance: ContextGovernance | None = None  # noqa: N815
    recovery: Recovery = Recovery()
    jevOrchestration: JevOrchestration | None = None  # noqa: N815
    autoReplyWaitMs: int = Field(30000, ge=0, le=120000)  # noqa: N815
    # Beyond the seed; the defaults keep its behaviour.
    commitPolicy: Literal["always", "reply_completed"] = "always"  # noqa: N815
    backgroundDeadlineMs: int | None = Field(None, ge=10000, le=3600000)  # noqa: N815
    backgroundWorldbook: bool = False  # noqa: N815 - the turn's selected lore to the background


class StoryV1(_Strict):
    enabled: bool = True
    modelConfigId: ConfigId  # noqa: N815
    initializerModelConfigId: ConfigId | None = None  # noqa: N815
    modelCallTimeoutMs: int = Field(45000, ge=1000, le=180000)  # noqa: N815
    postTurnTimeoutMs: int = Field(90000, ge=1000, le=180000)  # noqa: N815
    maxStateBytes: int = Field(60000, ge=4000, le=60000)  # noqa: N815
    seed: int = Field(731, ge=0, le=2**32 - 1)
    # Beyond the seed: the world's and the narrative's policy numbers (story.engine.policy).
    policy: dict[str, Any] | None = None

    @field_validator("policy")
    @classmethod
    def _policy(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        try:
            parse_policy(value)
        except PolicyInvalid as exc:
            raise ValueError(f"{exc.field}: {exc.message}") from None
        return value


class Reliability(_Strict):
    version: Literal["v1.1"] = "v1.1"
    minGenerationTokens: int = Field(256, ge=1, le=32768)  # noqa: N815
    maxCandidateAttempts: int = Field(24, ge=1, le=100)  # noqa: N815
    maxModelCalls: int = Field(2, ge=1, le=10)  # noqa: N815
    maxCompactionMs: int = Field(120000, ge=1000, le=MAX_COMPACTION_MS)  # noqa: N815


class Recursive(_Strict):
    segmentContentTokens: int = Field(ge=256, le=32768)  # noqa: N815


class Compact(_Strict):
    enabled: bool = True
    boundaryMode: Literal["selected_turns", "explicit_groups"] = "selected_turns"  # noqa: N815
    compactorModelConfigId: ConfigId  # noqa: N815
    triggerRatio: float = Field(0.8, gt=0, lt=1)  # noqa: N815
    keepLastCanonicalGroups: int = Field(2, ge=0, le=100)  # noqa: N815
    checkpointMutationTimeoutMs: int = Field(2000, ge=1000, le=10000)  # noqa: N815
    safetyMarginTokens: int = Field(512, ge=0, le=8192)  # noqa: N815
    maxSummaryTokens: int = Field(700, ge=16, le=8192)  # noqa: N815
    reliability: Reliability | None = None
    profile: Literal["generic-json-v1", "configurable-v2"] = "generic-json-v1"
    inputProtocol: Literal[  # noqa: N815
        "harness_json_v1", "dream_text_v0", "automemory_recursive_v1"
    ] = "harness_json_v1"
    outputFormat: Literal["structured_json", "plain_text"] = "structured_json"  # noqa: N815
    lengthPolicy: Literal["reject", "accept_bounded"] = "reject"  # noqa: N815
    executionPolicy: Literal["bounded_recent"] | None = None  # noqa: N815
    recursive: Recursive | None = None


class DirectorSkill(_Strict):
    """A skill of the front tool loop, in its stored (object) form: the loop's own parser
    (``roleplay.frontloop.engine.skills``) read it first, legacy strings included."""

    name: str
    afterActorTools: list[Literal["generate_image"]] = Field(default_factory=list)  # noqa: N815
    prompt: str | None = None


class PreActorDirector(_Strict):
    """The front tool loop (``docs/front-loop.md``): the controller's model config, its
    skills, the image prompt producer's system prompt."""

    modelConfigId: ConfigId  # noqa: N815
    skills: list[DirectorSkill] = Field(default_factory=list, max_length=50)
    imagePromptProducerPrompt: str | None = Field(None, max_length=20000)  # noqa: N815


class ExternalMemory(_Strict):
    """The prepare/commit memory service a scenario with ``memoryRuntime: external`` uses
    (ours at ``/v1/memory/…`` on another deployment, or any service with that contract)."""

    url: Annotated[str, StringConstraints(max_length=500, pattern=r"^https?://[^\s/]+")]
    apiKeyEnv: Annotated[str, StringConstraints(pattern=r"^[A-Z_][A-Z0-9_]{0,99}$")] | None = (  # noqa: N815
        None
    )
    timeoutMs: int = Field(10_000, ge=1_000, le=60_000)  # noqa: N815
    failClosed: bool = True  # noqa: N815


# DIO's backend calls (the active prompt a turn reads, a submission): bounded so a slow
# service costs a turn at most this much before it degrades to the normal prompt.
DIO_TIMEOUT_MS = (100, 30_000)
DIO_DEFAULT_TIMEOUT_MS = 3_000


ServiceUrl = Annotated[str, StringConstraints(max_length=500, pattern=r"^https?://[^\s/]+")]
KeyName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]


class Dio(_Strict):
    """DIO (``docs/dio.md``): ``internal`` (ours: ``modelConfigId`` compiles), ``external``
    (the service at ``serviceUrl``, its key in the variable ``apiKeyEnv``) or ``off``;
    ``timeoutMs`` bounds each call to it (the turn's read of the active prompt, a
    submission). Fields of the other mode are kept, so switching back loses nothing."""

    mode: Literal["internal", "external", "off"]
    modelConfigId: ConfigId | None = None  # noqa: N815
    serviceUrl: ServiceUrl | None = None  # noqa: N815
    apiKeyEnv: KeyName | None = None  # noqa: N815
    timeoutMs: int = Field(  # noqa: N815
        DIO_DEFAULT_TIMEOUT_MS, ge=DIO_TIMEOUT_MS[0], le=DIO_TIMEOUT_MS[1]
    )

    @field_validator("apiKeyEnv")
    @classmethod
    def _key_name(cls, value: str | None) -> str | None:
        if value is not None and not is_key_name(value):
            raise ValueError("must be the name of an environment variable, not a key")
        return value

    @property
    def on(self) -> bool:
        return self.mode != "off"


class ScenarioConfig(_Strict):
    """The config objects of a scenario (each absent one is off) and its memory runtime:
    ``internal`` (ours), ``external`` (``externalMemory``'s service) or ``off``."""

    agenticV2: AgenticV2 | None = None  # noqa: N815
    storyV1: StoryV1 | None = None  # noqa: N815
    compact: Compact | None = None
    preActorDirector: PreActorDirector | None = None  # noqa: N815
    memoryRuntime: Literal["internal", "external", "off"] = "internal"  # noqa: N815
    externalMemory: ExternalMemory | None = None  # noqa: N815
    worldbook: WorldbookConfig | None = None  # roleplay.scenarios.worldbook_config
    dio: Dio | None = None
    # A declared workflow (``docs/workflows.md``): checked by its own parser and static
    # planner on save (``roleplay.workflows.checks``), so kept here as the JSON it is.
    workflow: dict[str, Any] | None = None

    @property
    def route(self) -> Literal["story", "agentic_v2", "plain"]:
        """Which product runs the turn: Story wins over Agent V2 when both are on (the
        seed's ``if (storyV1) … else if (agenticV2)``)."""
        if self.storyV1 is not None and self.storyV1.enabled:
            return "story"
        if self.agenticV2 is not None and self.agenticV2.enabled:
            return "agentic_v2"
        return "plain"


def check_scenario(data: Any, *, actor_config_id: str | Collection[str] | None) -> ScenarioConfig:
    """``data`` (``{agenticV2?, storyV1?, compact?, preActorDirector?}``) validated, with
    the rules between fields; ``actor_config_id`` is the scenario's own Actor config (or
    every way to name it: its id and its name)."""
    if isinstance(data, dict) and isinstance(data.get("compact"), dict):
        if "contentPolicy" in data["compact"]:
            raise ScenarioInvalid(
                "compact.contentPolicy",
                "is not supported: the compactor's preset prompt expresses content policy",
            )
    data = _director_read(data)
    try:
        config = ScenarioConfig.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "scenario"
        raise ScenarioInvalid(field, error["msg"]) from None
    if actor_config_id is None:
        actor_refs: Collection[str] = ()
    elif isinstance(actor_config_id, str):
        actor_refs = (actor_config_id,)
    else:
        actor_refs = actor_config_id
    _check_agentic(config.agenticV2, config.compact, actor_refs)
    _check_compact(config.compact)
    if config.storyV1 is not None and config.preActorDirector is not None:
        raise ScenarioInvalid("preActorDirector", "cannot be set together with storyV1")
    if config.memoryRuntime == "external" and config.externalMemory is None:
        raise ScenarioInvalid("externalMemory", "is required when memoryRuntime is external")
    _check_dio(config)
    return config


def _director_read(data: Any) -> Any:
    """``data`` with its ``preActorDirector`` read by the front loop's parser (skills as
    objects, legacy strings read as ``{name}``; every rejection names its field)."""
    if not isinstance(data, dict) or data.get("preActorDirector") is None:
        return data
    try:
        director = parse_director(data["preActorDirector"])
    except DirectorInvalid as exc:
        raise ScenarioInvalid(exc.field, exc.message) from None
    return {**data, "preActorDirector": director.to_json()}


def _check_dio(config: ScenarioConfig) -> None:
    """DIO on needs what its mode calls for, and the front tool loop: ``schedule_dio`` is
    offered there (and the DIO page and ``POST …/dio/`` act only for a scenario whose DIO
    is on, so the rule holds for every door)."""
    dio = config.dio
    if dio is None or not dio.on:
        return
    if dio.mode == "internal" and dio.modelConfigId is None:
        raise ScenarioInvalid("dio.modelConfigId", "is required when mode is internal")
    if dio.mode == "external" and dio.serviceUrl is None:
        raise ScenarioInvalid("dio.serviceUrl", "is required when mode is external")
    if config.preActorDirector is None:
        raise ScenarioInvalid("dio.mode", "DIO needs preActorDirector (the front tool loop)")


def _check_agentic(v2: AgenticV2 | None, compact: Compact | None, actor: Collection[str]) -> None:
    if v2 is None:
        return
    if len(set(v2.enabledTools)) != len(v2.enabledTools):
        raise ScenarioInvalid("agenticV2.enabledTools", "names a tool twice")
    if v2.modelConfigs.actor not in actor:
        raise ScenarioInvalid(
            "agenticV2.modelConfigs.actor", "must be the scenario's Actor model config"
        )
    for name in SPECIALISTS:
        if name in v2.enabledTools and getattr(v2.modelConfigs.specialists, name) is None:
            raise ScenarioInvalid(
                f"agenticV2.modelConfigs.specialists.{name}",
                "is required while the specialist is in enabledTools",
            )
    if DIRECTOR_TOOL in v2.enabledTools and v2.modelConfigs.director is None:
        raise ScenarioInvalid(
            "agenticV2.modelConfigs.director", f"is required while {DIRECTOR_TOOL} is enabled"
        )
    if v2.routingMode == "auto" and v2.escalationModelConfigId is None:
        raise ScenarioInvalid(
            "agenticV2.escalationModelConfigId", "is required by routingMode auto"
        )
    if v2.jevOrchestration is not None:
        argument = v2.jevOrchestration.argumentModelConfigId
        if argument in (v2.modelConfigs.orchestrator, v2.escalationModelConfigId):
            raise ScenarioInvalid(
                "agenticV2.jevOrchestration.argumentModelConfigId",
                "may not be an orchestrator's model config",
            )
    compact_on = compact is not None and compact.enabled
    governance = v2.contextGovernance
    if compact_on and governance is None:
        raise ScenarioInvalid("agenticV2.contextGovernance", "is required when compact is on")
    if governance is not None and governance.mode == "enforce" and not compact_on:
        raise ScenarioInvalid("agenticV2.contextGovernance.mode", "enforce requires compact")


def _check_compact(compact: Compact | None) -> None:
    if compact is None:
        return
    custom = compact.profile == "configurable-v2"
    if compact.keepLastCanonicalGroups == 0 and not custom:
        raise ScenarioInvalid("compact.keepLastCanonicalGroups", "0 requires configurable-v2")
    if custom and compact.reliability is None:
        raise ScenarioInvalid("compact.reliability", "is required by configurable-v2")
    if not custom:
        for name, default in (
            ("inputProtocol", "harness_json_v1"),
            ("outputFormat", "structured_json"),
            ("lengthPolicy", "reject"),
        ):
            if getattr(compact, name) != default:
                raise ScenarioInvalid(f"compact.{name}", "a custom protocol needs configurable-v2")
    if compact.lengthPolicy == "accept_bounded" and compact.outputFormat != "plain_text":
        raise ScenarioInvalid("compact.lengthPolicy", "accept_bounded is for plain_text only")
    if compact.executionPolicy == "bounded_recent" and compact.reliability is None:
        raise ScenarioInvalid("compact.reliability", "is required by bounded_recent")
    if compact.recursive is not None and not (
        custom and compact.inputProtocol == "automemory_recursive_v1"
    ):
        raise ScenarioInvalid(
            "compact.recursive", "requires configurable-v2 with automemory_recursive_v1"
        )


def model_config_refs(config: ScenarioConfig) -> list[tuple[str, str, str | None]]:
    """Every model config the scenario names, as (field, reference, the named role prompt
    its preset must hold, or None): only the parts that are on."""
    refs: list[tuple[str, str, str | None]] = []
    v2 = config.agenticV2
    if v2 is not None and v2.enabled:
        configs = v2.modelConfigs
        refs.append(("agenticV2.modelConfigs.orchestrator", configs.orchestrator, "orchestrator"))
        for name in SPECIALISTS:
            ref = getattr(configs.specialists, name)
            if ref is not None:
                role = f"specialist_{name}" if name in v2.enabledTools else None
                refs.append((f"agenticV2.modelConfigs.specialists.{name}", ref, role))
        if configs.director is not None:
            role = "director" if DIRECTOR_TOOL in v2.enabledTools else None
            refs.append(("agenticV2.modelConfigs.director", configs.director, role))
        if configs.autoReply is not None:
            refs.append(("agenticV2.modelConfigs.autoReply", configs.autoReply, "auto_reply"))
        for field, ref in (
            ("escalationModelConfigId", v2.escalationModelConfigId),
            ("recovery.transientRetryModelConfigId", v2.recovery.transientRetryModelConfigId),
        ):
            if ref is not None:
                refs.append((f"agenticV2.{field}", ref, None))
    story = config.storyV1
    if story is not None and story.enabled:
        refs.append(("storyV1.modelConfigId", story.modelConfigId, None))
        if story.initializerModelConfigId is not None:
            refs.append(("storyV1.initializerModelConfigId", story.initializerModelConfigId, None))
    if config.compact is not None and config.compact.enabled:
        ref = config.compact.compactorModelConfigId
        refs.append(("compact.compactorModelConfigId", ref, "compactor"))
    if config.preActorDirector is not None:
        ref = config.preActorDirector.modelConfigId
        refs.append(("preActorDirector.modelConfigId", ref, FRONT_CONTROLLER_ROLE))
    dio = config.dio
    if dio is not None and dio.mode == "internal" and dio.modelConfigId is not None:
        refs.append(("dio.modelConfigId", dio.modelConfigId, None))
    return refs


def as_json(config: ScenarioConfig) -> dict[str, Any]:
    """The four objects as stored and answered: each set one with its defaults filled, an
    absent one null."""
    return config.model_dump(mode="json")
