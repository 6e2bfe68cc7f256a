"""The scenario config validator (``roleplay.scenarios.config``), pure: the seed's field names
verbatim, every default, every range at its bounds and one past them, unknown fields
refused, and each rule between fields; a seed scenario validates as written."""

from __future__ import annotations

import copy

import pytest

from roleplay.scenarios.config import (
    DIRECTOR_TOOL,
    SPECIALISTS,
    TOOLS,
    ScenarioInvalid,
    check_scenario,
)

ACTOR = "actor-config"


def _v2(**fields):
    body = {
        "modelConfigs": {
            "actor": ACTOR,
            "orchestrator": "orchestrator-config",
            "specialists": {name: f"{name}-config" for name in SPECIALISTS},
            "director": "director-config",
        }
    }
    return {**body, **fields}


def _compact(**fields):
    return {"compactorModelConfigId": "compactor-config", **fields}


def _refused(data, field: str) -> str:
    with pytest.raises(ScenarioInvalid) as refused:
        check_scenario(data, actor_config_id=ACTOR)
    assert refused.value.field == field, refused.value
    return refused.value.message


def test_the_seeds_service_config_validates_as_written():
    # The seed's fragment (002, the service config), with its references filled in.
    seed = {
        "agenticV2": {
            "modelConfigs": {
                "actor": ACTOR,
                "orchestrator": "o",
                "specialists": {
                    "analyze_plot": "a",
                    "judge_npc": "j",
                    "audit_knowledge": "k",
                    "simulate_world": "w",
                    "manage_callbacks": "c",
                    "direct_scene": "d",
                },
                "director": "dir",
            }
        }
    }
    config = check_scenario(seed, actor_config_id=ACTOR)
    v2 = config.agenticV2
    assert config.route == "agentic_v2" and v2.enabled
    assert v2.enabledTools == list(TOOLS) and v2.routingMode == "manual"
    assert (v2.escalationToolCallThreshold, v2.maxToolCalls, v2.maxParallelTools) == (3, 7, 6)
    assert (v2.maxStateChars, v2.modelCallTimeoutMs, v2.autoReplyWaitMs) == (8000, 180000, 30000)
    assert v2.contextGovernance is None and v2.commitPolicy == "always"


def test_the_seeds_compact_sample_validates_as_written():
    sample = {
        "enabled": True,
        "boundaryMode": "selected_turns",
        "compactorModelConfigId": "RP-Harness-Compact-AutoMemory-v0-Native",
        "triggerRatio": 0.8,
        "keepLastCanonicalGroups": 2,
        "checkpointMutationTimeoutMs": 5000,
        "safetyMarginTokens": 512,
        "maxSummaryTokens": 700,
        "reliability": {
            "version": "v1.1",
            "minGenerationTokens": 256,
            "maxCandidateAttempts": 24,
            "maxModelCalls": 2,
            "maxCompactionMs": 120000,
        },
        "profile": "configurable-v2",
        "inputProtocol": "dream_text_v0",
        "outputFormat": "plain_text",
        "lengthPolicy": "accept_bounded",
        "executionPolicy": "bounded_recent",
    }
    config = check_scenario({"compact": sample}, actor_config_id=None)
    assert config.compact.triggerRatio == 0.8 and config.route == "plain"


@pytest.mark.parametrize(
    ("field", "low", "high"),
    [
        ("escalationToolCallThreshold", 1, 20),
        ("maxToolCalls", 1, 20),
        ("maxParallelTools", 1, 20),
        ("maxStateChars", 800, 8000),
        ("modelCallTimeoutMs", 10000, 300000),
        ("autoReplyWaitMs", 0, 120000),
    ],
)
def test_agentic_ranges_at_and_past_their_bounds(field, low, high):
    for good in (low, high):
        check_scenario({"agenticV2": _v2(**{field: good})}, actor_config_id=ACTOR)
    for bad in (low - 1, high + 1, True, 3.0, "3"):
        _refused({"agenticV2": _v2(**{field: bad})}, f"agenticV2.{field}")


@pytest.mark.parametrize(
    ("field", "low", "high"),
    [("safetyMarginTokens", 1, 8192), ("maxToolResultChars", 512, 20000)],
)
def test_governance_ranges(field, low, high):
    for good in (low, high):
        governance = {"mode": "shadow", field: good}
        check_scenario({"agenticV2": _v2(contextGovernance=governance)}, actor_config_id=ACTOR)
    for bad in (low - 1, high + 1):
        governance = {"mode": "shadow", field: bad}
        _refused(
            {"agenticV2": _v2(contextGovernance=governance)},
            f"agenticV2.contextGovernance.{field}",
        )
    defaults = check_scenario(
        {"agenticV2": _v2(contextGovernance={"mode": "shadow"})}, actor_config_id=ACTOR
    ).agenticV2.contextGovernance
    assert (defaults.safetyMarginTokens, defaults.maxToolResultChars) == (256, 5000)


@pytest.mark.parametrize(
    ("field", "low", "high", "default"),
    [
        ("modelCallTimeoutMs", 1000, 180000, 45000),
        ("postTurnTimeoutMs", 1000, 180000, 90000),
        ("maxStateBytes", 4000, 60000, 60000),
        ("seed", 0, 2**32 - 1, 731),
    ],
)
def test_story_ranges_and_defaults(field, low, high, default):
    story = {"modelConfigId": "story-config"}
    assert getattr(check_scenario({"storyV1": story}, actor_config_id=None).storyV1, field) == (
        default
    )
    for good in (low, high):
        check_scenario({"storyV1": {**story, field: good}}, actor_config_id=None)
    for bad in (low - 1, high + 1):
        _refused({"storyV1": {**story, field: bad}}, f"storyV1.{field}")


def test_unknown_fields_are_refused_at_every_level():
    _refused({"agenticV2": _v2(actorControlEnabled=True)}, "agenticV2.actorControlEnabled")
    body = _v2()
    body["modelConfigs"]["specialists"]["generate_image"] = "x"
    _refused({"agenticV2": body}, "agenticV2.modelConfigs.specialists.generate_image")
    _refused({"sumiV1": {}}, "sumiV1")
    _refused({"compact": _compact(contentPolicy="x")}, "compact.contentPolicy")
    _refused({"storyV1": {"modelConfigId": "s", "policy": {"dice": {}}}}, "storyV1.policy")
    world = {"world": {"developMax": 2, "fog": 1}}
    _refused({"storyV1": {"modelConfigId": "s", "policy": world}}, "storyV1.policy")


def test_story_policy_beyond_the_seed_is_validated_by_the_engine():
    policy = {"world": {"developMax": 3}, "narrative": {"dealEveryTurns": 2}}
    config = check_scenario(
        {"storyV1": {"modelConfigId": "s", "policy": policy}}, actor_config_id=ACTOR
    )
    assert config.storyV1.policy == policy
    too_many = {"world": {"maxUndercurrents": 99}}
    _refused({"storyV1": {"modelConfigId": "s", "policy": too_many}}, "storyV1.policy")


def test_enabled_tools_are_the_seven_names_once_each():
    check_scenario({"agenticV2": _v2(enabledTools=["judge_npc"])}, actor_config_id=ACTOR)
    check_scenario({"agenticV2": _v2(enabledTools=[])}, actor_config_id=ACTOR)
    _refused({"agenticV2": _v2(enabledTools=["generate_image"])}, "agenticV2.enabledTools.0")
    twice = ["judge_npc", "judge_npc"]
    _refused({"agenticV2": _v2(enabledTools=twice)}, "agenticV2.enabledTools")


def test_model_configs_are_required_for_what_is_enabled():
    _refused(
        {"agenticV2": _v2(modelConfigs={"actor": ACTOR})}, "agenticV2.modelConfigs.orchestrator"
    )
    for name in SPECIALISTS:
        body = _v2()
        del body["modelConfigs"]["specialists"][name]
        _refused({"agenticV2": body}, f"agenticV2.modelConfigs.specialists.{name}")
        body["enabledTools"] = [tool for tool in TOOLS if tool != name]
        check_scenario({"agenticV2": body}, actor_config_id=ACTOR)
    body = _v2()
    del body["modelConfigs"]["director"]
    _refused({"agenticV2": body}, "agenticV2.modelConfigs.director")
    body["enabledTools"] = list(SPECIALISTS)
    check_scenario({"agenticV2": body}, actor_config_id=ACTOR)
    assert DIRECTOR_TOOL not in body["enabledTools"]


def test_the_actor_must_be_the_scenarios_own():
    with pytest.raises(ScenarioInvalid) as refused:
        check_scenario({"agenticV2": _v2()}, actor_config_id="another")
    assert refused.value.field == "agenticV2.modelConfigs.actor"


def test_auto_routing_needs_an_escalation_model():
    _refused({"agenticV2": _v2(routingMode="auto")}, "agenticV2.escalationModelConfigId")
    check_scenario(
        {"agenticV2": _v2(routingMode="auto", escalationModelConfigId="bigger")},
        actor_config_id=ACTOR,
    )
    _refused({"agenticV2": _v2(routingMode="smart")}, "agenticV2.routingMode")


def test_jev_arguments_may_not_use_an_orchestrators_model():
    jev = {"argumentModelConfigId": "orchestrator-config"}
    _refused(
        {"agenticV2": _v2(jevOrchestration=jev)},
        "agenticV2.jevOrchestration.argumentModelConfigId",
    )
    check_scenario(
        {"agenticV2": _v2(jevOrchestration={"argumentModelConfigId": "args"})},
        actor_config_id=ACTOR,
    )


def test_governance_and_compact_go_together():
    _refused({"agenticV2": _v2(), "compact": _compact()}, "agenticV2.contextGovernance")
    check_scenario(
        {"agenticV2": _v2(contextGovernance={"mode": "shadow"}), "compact": _compact()},
        actor_config_id=ACTOR,
    )
    enforce = {"mode": "enforce"}
    _refused({"agenticV2": _v2(contextGovernance=enforce)}, "agenticV2.contextGovernance.mode")
    off = _compact(enabled=False)
    _refused(
        {"agenticV2": _v2(contextGovernance=enforce), "compact": off},
        "agenticV2.contextGovernance.mode",
    )
    check_scenario(
        {"agenticV2": _v2(contextGovernance=enforce), "compact": _compact()},
        actor_config_id=ACTOR,
    )
    _refused({"agenticV2": _v2(contextGovernance={})}, "agenticV2.contextGovernance.mode")


def test_story_routes_before_agentic_and_refuses_the_pre_actor_director():
    story = {"modelConfigId": "story-config"}
    config = check_scenario({"agenticV2": _v2(), "storyV1": story}, actor_config_id=ACTOR)
    assert config.route == "story"
    off = check_scenario(
        {"agenticV2": _v2(), "storyV1": {**story, "enabled": False}}, actor_config_id=ACTOR
    )
    assert off.route == "agentic_v2"
    assert check_scenario({"agenticV2": _v2(enabled=False)}, actor_config_id=ACTOR).route == (
        "plain"
    )
    director = {"modelConfigId": "front-config"}
    _refused({"storyV1": story, "preActorDirector": director}, "preActorDirector")
    check_scenario({"agenticV2": _v2(), "preActorDirector": director}, actor_config_id=ACTOR)


@pytest.mark.parametrize("ratio", [0, 1, -0.1, 1.5])
def test_compact_trigger_ratio_is_strictly_between_0_and_1(ratio):
    _refused({"compact": _compact(triggerRatio=ratio)}, "compact.triggerRatio")


def test_compact_rules():
    custom = {"profile": "configurable-v2", "reliability": {}}
    for good in (0.01, 0.99):
        check_scenario({"compact": _compact(triggerRatio=good)}, actor_config_id=None)
    _refused({"compact": _compact(keepLastCanonicalGroups=101)}, "compact.keepLastCanonicalGroups")
    _refused({"compact": _compact(keepLastCanonicalGroups=0)}, "compact.keepLastCanonicalGroups")
    check_scenario({"compact": _compact(keepLastCanonicalGroups=0, **custom)}, actor_config_id=None)
    check_scenario({"compact": _compact(keepLastCanonicalGroups=100)}, actor_config_id=None)
    for field, low, high in (("checkpointMutationTimeoutMs", 1000, 10000),):
        for good in (low, high):
            check_scenario({"compact": _compact(**{field: good})}, actor_config_id=None)
        for bad in (low - 1, high + 1):
            _refused({"compact": _compact(**{field: bad})}, f"compact.{field}")
    _refused({"compact": _compact(profile="configurable-v2")}, "compact.reliability")
    _refused({"compact": _compact(inputProtocol="dream_text_v0")}, "compact.inputProtocol")
    _refused({"compact": _compact(lengthPolicy="accept_bounded", **custom)}, "compact.lengthPolicy")
    _refused({"compact": _compact(executionPolicy="bounded_recent")}, "compact.reliability")
    recursive = {"segmentContentTokens": 1024}
    _refused({"compact": _compact(recursive=recursive, **custom)}, "compact.recursive")
    check_scenario(
        {
            "compact": _compact(
                recursive=recursive, inputProtocol="automemory_recursive_v1", **custom
            )
        },
        actor_config_id=None,
    )
    _refused({"compact": _compact(boundaryMode="by_turns")}, "compact.boundaryMode")
    _refused({"compact": {}}, "compact.compactorModelConfigId")


def test_bad_shapes_name_the_field():
    _refused("not an object", "scenario")
    _refused({"agenticV2": []}, "agenticV2")
    _refused(
        {"agenticV2": _v2(modelConfigs={"actor": "", "orchestrator": "o"})},
        ("agenticV2.modelConfigs.actor"),
    )
    body = copy.deepcopy(_v2())
    body["modelConfigs"]["orchestrator"] = 7
    _refused({"agenticV2": body}, "agenticV2.modelConfigs.orchestrator")
