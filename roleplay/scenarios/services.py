"""Writes of scenarios: create, compare-and-set update, delete.

Every door comes here. The config objects are validated by ``roleplay.scenarios.config`` (the
seed's field names; a bad one is a 422 ``validation_error`` naming its dotted path), then
checked against the tenant on save, not at the first turn: every model config a part that
is on names must be one of the tenant's (by id or by name), and its preset (else the shipped
default) must hold the role prompt that part needs (``orchestrator``, ``specialist_<name>``,
``director``, ``auto_reply``, ``compactor``), and with DIO on, the Actor's preset must
have one character prompt slot.
"""

from __future__ import annotations

from django.db import transaction

from console import failures
from console.storable import unstorable_at
from roleplay.dio.engine.ports import DioError
from roleplay.dio.engine.slots import slot_of
from roleplay.errors import RoleplayError
from roleplay.llm.configs.selectors import model_configs_by_ref
from roleplay.models import Character, Conversation, Scenario
from roleplay.presets.selectors import effective_preset, load_preset
from roleplay.prompting.presets import NamedPromptMissing
from roleplay.scenarios.config import ScenarioInvalid, as_json, check_scenario, model_config_refs
from roleplay.services import rows
from roleplay.workflows.checks import WorkflowInvalid, checked
from worldbook import services as worldbooks

# The workflow capability whose model config and role prompt are checked on save.
MODEL_CALL = "model_call"
SCENARIO_FIELDS = ("name", "description", "model_config", "preset", "image_config")
# The API's names of the config objects (the seed's) -> the model's fields.
CONFIG_FIELDS = {
    "agenticV2": "agentic_v2",
    "storyV1": "story_v1",
    "compact": "compact",
    "preActorDirector": "pre_actor_director",
    "memoryRuntime": "memory_runtime",  # a string: internal, external or off
    "externalMemory": "external_memory",
    "worldbook": "worldbook",
    "dio": "dio",
    "workflow": "workflow",
}


class ScenarioConfigInvalid(RoleplayError, failures.Invalid):
    """A config object breaks a rule (422 ``validation_error``; ``details.field`` is its
    dotted path, in the seed's names)."""

    default_code = "validation_error"

    def __init__(self, field: str, message: str, **details) -> None:
        super().__init__(message=f"{field}: {message}", details={"field": field, **details})


class ScenarioDioUnfit(ScenarioConfigInvalid):
    """DIO is on but the Actor's preset cannot take a compiled prompt (422 with the slot
    rule's code; ``details.field`` is ``dio.mode``, ``details.preset`` the preset)."""

    def __init__(self, code: str, message: str, **details) -> None:
        super().__init__("dio.mode", message, **details)
        self.code = code


class ScenarioVersionConflict(RoleplayError, failures.Conflict):
    """Another save moved the scenario past the version the caller edited (409
    ``revision_conflict``; ``details.current_version``)."""

    default_code = "revision_conflict"

    def __init__(self, current: int, expected: int) -> None:
        super().__init__(
            message=f"the scenario is at version {current}, not {expected}; reload and retry",
            details={"current_version": current, "expected_version": expected},
        )


def create_scenario(tenant, **fields) -> Scenario:
    scenario = Scenario(tenant=tenant)
    _apply(scenario, fields)
    rows.save(scenario)
    return scenario


def update_scenario(scenario: Scenario, *, version: int, **fields) -> Scenario:
    """Change ``fields`` of a scenario still at ``version`` (else 409); the version moves."""
    _apply(scenario, fields)
    values = {name: getattr(scenario, name) for name in (*SCENARIO_FIELDS, *CONFIG_FIELDS.values())}
    rows.compare_and_set(scenario, values, version=version, conflict=ScenarioVersionConflict)
    return scenario


@transaction.atomic
def delete_scenario(scenario: Scenario) -> None:
    """Delete it; characters and conversations that named it run without a scenario, and
    the worldbooks bound to it are unbound (the books stay)."""
    worldbooks.forget_scope(scenario.tenant, "scenario", [scenario.pk])
    Character.objects.filter(tenant_id=scenario.tenant_id, default_scenario=scenario).update(
        default_scenario=None
    )
    Conversation.objects.filter(tenant_id=scenario.tenant_id, scenario=scenario).update(
        scenario=None
    )
    scenario.delete()


def _apply(scenario: Scenario, fields: dict) -> None:
    """Set ``fields`` (the config objects by the seed's names) and check the whole result."""
    configs = {name: fields.pop(name) for name in list(fields) if name in CONFIG_FIELDS}
    for name, value in configs.items():
        found = unstorable_at(value, name)
        if found is not None:  # PostgreSQL's jsonb holds no NUL and no lone surrogate
            raise ScenarioConfigInvalid(found[0], found[1])
    rows.check_same_tenant(
        scenario.tenant_id,
        **{name: fields[name] for name in ("model_config", "preset") if name in fields},
    )
    rows.assign(scenario, fields, SCENARIO_FIELDS)
    current = {seed: getattr(scenario, field) for seed, field in CONFIG_FIELDS.items()}
    current.update(configs)
    actor = scenario.model_config
    actor_refs = (str(actor.pk), actor.name) if actor is not None else ()
    try:
        config = check_scenario(
            {name: value for name, value in current.items() if value is not None},
            actor_config_id=actor_refs,
        )
    except ScenarioInvalid as exc:
        raise ScenarioConfigInvalid(exc.field, exc.message) from None
    _check_worldbook_tenant(scenario, config)
    _check_references(scenario.tenant_id, config)
    _check_dio_preset(scenario, config)
    _check_workflow(scenario, config)
    stored = as_json(config)
    for seed, field in CONFIG_FIELDS.items():
        setattr(scenario, field, stored[seed])
    rows.check(scenario)


def _check_worldbook_tenant(scenario: Scenario, config) -> None:
    """``worldbook.tenantId``, when given, names the scenario's own tenant (its id or name):
    a scenario never selects from another tenant's books."""
    named = config.worldbook.tenantId if config.worldbook is not None else None
    if named is not None and named not in (str(scenario.tenant_id), scenario.tenant.name):
        raise ScenarioConfigInvalid(
            "worldbook.tenantId", "must name this scenario's own tenant (its id or name)"
        )


def _check_dio_preset(scenario: Scenario, config) -> None:
    """A scenario with DIO on needs an Actor preset with one character prompt slot (the
    seed's rule, ``roleplay.dio.engine.slots``): its own preset, else its model config's,
    else the shipped default. Refused with the rule's code (``dio_slot_missing``,
    ``dio_slot_duplicate_roleplay``, ``dio_slot_ambiguous_placeholder``)."""
    if config.dio is None or not config.dio.on:
        return
    if scenario.preset is not None:
        preset = load_preset(scenario.preset)
    else:
        preset = effective_preset(scenario.model_config)
    try:
        slot_of(preset)
    except DioError as exc:
        raise ScenarioDioUnfit(exc.code, exc.message, preset=preset.name) from None


def _check_workflow(scenario: Scenario, config) -> None:
    """The ``workflow`` parsed and planned with the scenario's id as its profile id and the
    capabilities registered now (``roleplay.workflows.checks``), and each ``model_call``
    node's model config and role prompt checked like the other parts' (a 422 naming the
    node)."""
    if config.workflow is None:
        return
    try:
        spec, _plan = checked(config.workflow, scenario.pk)
    except WorkflowInvalid as exc:
        details = {k: v for k, v in exc.details.items() if k != "field"}
        raise ScenarioConfigInvalid(exc.field, exc.text, **details) from None
    refs = []
    for index, node in enumerate(spec.nodes):
        ref, role = node.input.get("modelConfigId"), node.input.get("rolePrompt")
        if node.capability == MODEL_CALL and isinstance(ref, str) and isinstance(role, str):
            field = f"workflow.executionGraph.nodes.{index}.input.modelConfigId"
            refs.append((field, ref, role, {"node": node.id}))
    _check_refs(scenario.tenant_id, refs)


def _check_references(tenant_id, config) -> None:
    _check_refs(
        tenant_id, [(field, ref, role, {}) for field, ref, role in model_config_refs(config)]
    )


def _check_refs(tenant_id, refs: list[tuple[str, str, str | None, dict]]) -> None:
    """Each (field, model config reference, role prompt or None, details) names a model
    config of the tenant whose preset holds the role prompt."""
    if not refs:
        return
    by_ref = model_configs_by_ref(tenant_id, [ref for _field, ref, _role, _details in refs])
    for field, ref, role, details in refs:
        row = by_ref.get(ref)
        if row is None:
            raise ScenarioConfigInvalid(field, f"no model config {ref!r} in this tenant", **details)
        if role is None:
            continue
        preset = effective_preset(row)
        try:
            preset.named(role)
        except NamedPromptMissing as exc:
            raise ScenarioConfigInvalid(
                field,
                f"model config {row.name!r}: {exc.message}",
                preset=preset.name,
                role=role,
                **details,
            ) from None
