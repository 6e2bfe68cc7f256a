"""API fixtures: clients per scope, and a complete set of another tenant's objects."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from memory import services as message_store
from memory.configs.services import put_settings
from roleplay.dio.identity import identity_for
from roleplay.llm.scripted_server import Reply

AUTOREPLY_MODEL = "autoreply-model"
AUTOREPLY_ANSWER = Reply(content='["Open the door.", "Why are you sad?", "Look outside."]')
COMPACTOR_MODEL = "compactor-model"
COMPACTOR_ANSWER = Reply(
    content='{"canonical": ["Mira keeps the lamp."], "interaction": ["warm"], "open_threads": []}'
)


def answer_the_world(llm) -> None:
    """The scripted model answers the world's auto-reply config with three options and its
    compactor config with a structured summary; anything else as before."""
    default = llm.default
    answers = {AUTOREPLY_MODEL: AUTOREPLY_ANSWER, COMPACTOR_MODEL: COMPACTOR_ANSWER}
    llm.default = Reply.from_callable(lambda request: answers.get(request["model"], default))


@pytest.fixture
def play_api(api_client_for, tenant):
    return api_client_for(tenant, scopes=["play"])


@pytest.fixture
def content_api(api_client_for, tenant):
    return api_client_for(tenant, scopes=["content"])


@pytest.fixture
def other_api(api_client_for, other_tenant):
    return api_client_for(other_tenant)


@dataclass
class World:
    """One tenant's full object graph, keyed the way the route table names models."""

    tenant: object
    model_config: object
    character: object
    player: object
    conversation: object
    messages: list
    persona: object = None
    preset: object = None
    turn: object = None
    entry: object = None
    handoff: object = None
    scenario: object = None
    job: object = None
    quarantine: object = None
    checkpoint: object = None
    image_config: object = None
    image_slot: object = None
    http_endpoint: object = None
    mcp_server: object = None
    regex_script: object = None
    instruct_template: object = None
    member: object = None  # a second character of the conversation's group
    guest: object = None  # a character of the tenant not in the group
    bookmark: object = None
    plan: object = None  # a plan of the tenant, given to no one
    case: object = None  # a moderation case: a report of the character in the conversation

    @property
    def image_token(self) -> str:
        """The signed link token of the world's ready picture (``images.signing``)."""
        from images.signing import token_for

        return token_for(self.tenant.pk, self.image_slot.file)

    def ids_for(self, route) -> dict:
        """The ids of ``route``'s path in this world: ``pk`` its object of the route's model,
        ``message_id`` the conversation's last message, ``turn_id`` its finished turn,
        ``slot`` its memory document's slot, ``entry_id`` the player's memory entry (a
        candidate at version 1), ``handoff_id`` the player's handoff to the character (pending,
        version 1), ``job_id`` the player's learn job (failed), ``version`` the conversation's
        Compact checkpoint (version 1, active), ``bookmark_id`` its named checkpoint."""
        ids = {}
        for name in route.params:
            if name == "pk":
                ids[name] = self.object_for(route.model).pk
            elif name == "message_id":
                ids[name] = self.messages[-1].id
            elif name == "turn_id":
                ids[name] = self.turn.pk
            elif name == "slot":
                ids[name] = "default"
            elif name == "entry_id":
                ids[name] = self.entry.pk
            elif name == "handoff_id":
                ids[name] = self.handoff.pk
            elif name == "job_id":
                ids[name] = self.job.pk
            elif name == "revision":
                ids[name] = 1  # the story's first revision
            elif name == "quarantine_id":
                ids[name] = self.quarantine.pk
            elif name == "version":
                ids[name] = self.checkpoint.version
            elif name == "config_id":
                ids[name] = self.image_config.pk
            elif name == "signed":
                ids[name] = self.image_token
            elif name == "backup_id":
                ids[name] = self.backup_id
            elif name == "member_id":
                ids[name] = self.member.pk
            elif name == "bookmark_id":
                ids[name] = self.bookmark.pk
            else:
                raise LookupError(f"no {name!r} in the test world: add it to World.ids_for")
        return ids

    @property
    def backup_id(self) -> str:
        """A stored backup of the tenant, made on first use (``console.backup``)."""
        if not getattr(self, "_backup_id", None):
            from console.backup.services import create_backup

            self._backup_id = create_backup(self.tenant).id
        return self._backup_id

    def object_for(self, model):
        objects = (self.model_config, self.character, self.player, self.conversation)
        tools = (self.http_endpoint, self.mcp_server, self.regex_script, self.instruct_template)
        kept = (self.persona, self.preset, self.scenario, self.image_config, self.plan)
        kept = (*kept, self.case)
        for obj in (*objects, *kept, *tools):
            if isinstance(obj, model):
                return obj
        raise LookupError(
            f"no {model.__name__} in the test world: add one to tests/api/conftest.py so the "
            "isolation tests cover its routes"
        )


def build_world(tenant, base_url: str, label: str) -> World:
    from console.models import Player
    from memory.entries import services as memory_entries
    from memory.handoffs.services import create_handoff
    from memory.models import MemoryJob
    from roleplay.agentic.services import agent_state
    from roleplay.models import Character, Conversation, ModelConfig, Persona, PlanningRun
    from roleplay.presets.services import create_preset
    from roleplay.scenarios.services import create_scenario

    config = ModelConfig.objects.create(
        tenant=tenant,
        name=f"{label}-config",
        provider="openai_compatible",
        model="scripted-model",
        base_url=base_url,
        api_key_env="SOME_KEY_ENV",
        context_limit=4096,
        max_output_tokens=256,
    )
    character = Character.objects.create(
        tenant=tenant, name=f"{label}-char", first_message="Hi.", model_config=config
    )
    player = Player.objects.create(tenant=tenant, external_id=f"{label}-player")
    persona = Persona.objects.create(
        tenant=tenant, player=player, name=f"{label}-persona", is_default=True
    )
    conversation = Conversation.objects.create(
        tenant=tenant, player=player, character=character, model_config=config, persona=persona
    )
    messages = [
        message_store.save_message(
            tenant, conversation.session_id, role=role, content=f"{label} {i}"
        )
        for i, role in enumerate(["user", "assistant", "user", "assistant"])
    ]
    preset = create_preset(tenant, name=f"{label}-preset")
    turn = _turn_with_a_selection(tenant, conversation, label)
    entry = memory_entries.add_entry(
        tenant, player, kind="preference", scope="shared", content=f"{label}: be brief",
        status="candidate",
    )  # fmt: skip
    handoff = create_handoff(
        tenant, player, from_character_id=f"{label}-earlier-persona",
        to_character_id=str(character.pk), session_id=conversation.session_id,
        summary=f"{label}: we met at the gate", memory_ids=[],
    )  # fmt: skip
    autoreply = ModelConfig.objects.create(
        tenant=tenant, name=f"{label}-autoreply", provider="openai_compatible",
        model=AUTOREPLY_MODEL, base_url=base_url, context_limit=4096, max_output_tokens=256,
    )  # fmt: skip
    agentic = {
        "modelConfigs": {"actor": config.name, "orchestrator": config.name,
                         "director": config.name, "autoReply": autoreply.name},
        "enabledTools": ["update_director_state"],
    }  # fmt: skip
    scenario = create_scenario(
        tenant, name=f"{label}-scenario", model_config=config, agenticV2=agentic
    )
    PlanningRun.objects.create(
        tenant=tenant, turn=turn, conversation=conversation, scenario=scenario,
        assistant_message_id=messages[-1].id, source_turn=2, status="done", outcome="no_tools",
        snapshot={"revision": 0, "guidance": f"{label}: the turn-start state"},
    )  # fmt: skip
    Character.objects.filter(pk=character.pk).update(default_scenario=scenario)
    character.default_scenario = scenario
    agent_state.commit(
        conversation, scenario, expected_head=0, state=f"{label}: the state", tools_called=[],
        source_turn=1, source_message_id=messages[-1].id,
    )  # fmt: skip
    put_settings(tenant, {"consolidation": {"enabled": True}})  # ``memory/consolidate`` acts
    job = MemoryJob.objects.create(
        tenant=tenant, player=player, kind="learn", status="failed", attempts=8,
        payload={"kind": "fact", "scope": "shared", "content": f"{label}: likes tea",
                 "tags": [], "character_id": "", "session_id": ""},
        error_code="delivery_exhausted",
    )  # fmt: skip
    quarantine = _story_with_a_quarantine(tenant, conversation, scenario, messages, label)
    checkpoint = _compact_checkpoint(tenant, conversation, messages, base_url, label)
    image_config, image_slot = _images(tenant, conversation, messages, base_url, label)
    _visual_world(conversation)
    http_endpoint, mcp_server = _workflow_tools(tenant, base_url, label)
    _dio_version(conversation, label)
    regex_script = _regex_script(tenant, label)
    instruct_template = _instruct_template(tenant, label)
    return World(
        tenant,
        config,
        character,
        player,
        conversation,
        messages,
        persona,
        preset,
        turn,
        entry,
        handoff,
        scenario,
        job,
        quarantine,
        checkpoint,
        image_config,
        image_slot,
        http_endpoint,
        mcp_server,
        regex_script,
        instruct_template,
        *_group(tenant, conversation, label),
        _bookmark(conversation, messages, label),
        _plan(tenant, label),
        _case(conversation, label),
    )


def _plan(tenant, label: str):
    from roleplay.quotas.services import create_plan

    return create_plan(tenant, name=f"{label}-plan", messages_per_day=100)


def _case(conversation, label: str):
    """A moderation case: a report of the conversation's character (``roleplay.moderation``)."""
    from roleplay.moderation.models import Case

    return Case.objects.create(
        tenant=conversation.tenant, source="report", reason=f"{label} report",
        player=conversation.player, conversation=conversation,
        character=conversation.character,
    )  # fmt: skip


def _group(tenant, conversation, label: str):
    """(a second member of the conversation's group, a character not in it)."""
    from roleplay.groups.services import add_member
    from roleplay.models import Character

    member = Character.objects.create(tenant=tenant, name=f"{label}-member")
    add_member(conversation, member)
    return member, Character.objects.create(tenant=tenant, name=f"{label}-guest")


def _bookmark(conversation, messages, label: str):
    """A named checkpoint on the conversation's first message."""
    from roleplay.branches.services import add_bookmark

    return add_bookmark(conversation, messages[0].id, f"{label}: the start")


def _instruct_template(tenant, label: str):
    """An imported instruct template of the tenant (no config names it)."""
    from roleplay.textgen.services import import_template

    file = {"name": f"{label}-instruct", "input_sequence": "U:", "output_sequence": "A:"}
    return import_template(tenant, file=file)


def _regex_script(tenant, label: str):
    """A global regex script of the tenant (it changes nothing the tests send)."""
    from roleplay.regex_scripts.services import create_script

    script = {"scriptName": f"{label}-regex", "findRegex": "/never-said-\\d{9}/g",
              "placement": [1, 2]}  # fmt: skip
    return create_script(tenant, scope="global", script=script)


def _workflow_tools(tenant, base_url: str, label: str):
    """An HTTP endpoint and an MCP server a workflow may call (on the scripted server, which
    speaks no MCP: a test of the server answers ``mcp_unavailable``)."""
    from roleplay.workflows.tools import services

    endpoint = services.create_http_endpoint(
        tenant, name=f"{label}-lore", url_prefix=f"{base_url}/lore"
    )
    server = services.create_mcp_server(
        tenant, name=f"{label}-rules", url=f"{base_url}/mcp", allowed_tools=["gate_rule"],
        timeout_ms=2_000,
    )  # fmt: skip
    return endpoint, server


def _visual_world(conversation) -> None:
    """A first revision of the conversation's visual world (what a restore names)."""
    from roleplay.frontloop import world

    world.commit(conversation, expected=0, state={"scene": "the gate"}, source="operator")


def _dio_version(conversation, label: str) -> None:
    """A DIO task and the first version of the conversation's character prompt (what a
    revert names, what the active prompt answers)."""
    from roleplay.dio import services
    from roleplay.dio.engine.protocol import Submission

    identity = identity_for(conversation)
    request = f"{label}-turn:dio"
    submission = Submission(identity, request, f"{request}:assistant", f"{label}: be terse")
    services.schedule(conversation.tenant_id, submission)
    services.commit_version(
        conversation, identity, expected=0, kind="compiled", compiled_prompt=f"{label}: terse"
    )


def _images(tenant, conversation, messages, base_url: str, label: str):
    """An image config on the scripted server and a ready picture of the last message."""
    from images.services.configs import create_image_config
    from images.services.slots import draw_slot, reserve_slot

    config = create_image_config(
        tenant, name=f"{label}-images", provider="openai_compatible", base_url=base_url,
        default_width=64, default_height=64, timeout_seconds=10,
    )  # fmt: skip
    slot = reserve_slot(
        tenant, conversation.pk, messages[-1].id, 0, f"{label}: the lighthouse at dusk", config,
        session_id=conversation.session_id, enqueue=False,
    )  # fmt: skip
    slot = draw_slot(slot.pk)
    assert slot is not None and slot.status == "ready", slot and (slot.status, slot.code)
    return config, slot


def _compact_checkpoint(tenant, conversation, messages, base_url: str, label: str):
    """Version 1 (active) of a Compact checkpoint over the first two messages, under a
    scenario of its own whose compactor is the scripted ``compactor-model`` (what
    ``.../checkpoints/{version}/regenerate`` asks). The conversation does not run that
    scenario, so its turns are as before; its checkpoints are still the ones shown."""
    from roleplay.compact.engine import checkpoint as cp
    from roleplay.compact.services import checkpoints as store
    from roleplay.models import ModelConfig
    from roleplay.scenarios.services import create_scenario

    compactor = ModelConfig.objects.create(
        tenant=tenant, name=f"{label}-compactor", provider="openai_compatible",
        model=COMPACTOR_MODEL, base_url=base_url, context_limit=4096, max_output_tokens=256,
    )  # fmt: skip
    scenario = create_scenario(
        tenant, name=f"{label}-compact", model_config=compactor,
        compact={"enabled": True, "compactorModelConfigId": compactor.name},
    )  # fmt: skip
    covered = messages[:2]
    checkpoint = cp.Checkpoint(
        version=1,
        summary={"format": "structured_json", "canonical": [f"{label}: the gate"],
                 "interaction": [], "open_threads": []},
        first_id=str(covered[0].id), last_id=str(covered[-1].id), covered_count=len(covered),
        fingerprint=cp.fingerprint(covered), config_fingerprint=f"{label}-config",
    )  # fmt: skip
    return store.save(
        tenant.pk, conversation.pk, scenario.pk, checkpoint, expected=0, audit={"turn_id": ""}
    )


def _story_with_a_quarantine(tenant, conversation, scenario, messages, label: str):
    """A story at revision 1 whose event ``e1`` (evidence: the first message) is quarantined:
    the open record is what ``.../story/quarantine/{quarantine_id}/...`` decides."""
    from story.engine.evidence import capture
    from story.models import StoryQuarantine
    from story.services import Save, save

    piece = capture(str(messages[0].id), messages[0].content, "user_action", 1).as_json()
    envelope = {
        "version": 1, "character": str(conversation.character_id), "sourceWatermark": 1,
        "world": {"foreground": {"id": "w1", "title": f"{label} harbour", "phase": "start",
                                 "developRounds": 0}},
        "narrative": {"main": {"theme": f"{label} theme", "direction": "home"}},
        "acceptedTurns": [], "event": None, "unresolved": [], "nextEvent": 2,
        "pendingActor": None, "acceptedMessage": None,
    }  # fmt: skip
    save(
        Save(
            tenant_id=tenant.pk, conversation_id=conversation.pk, scenario_id=scenario.pk,
            character_id=conversation.character_id, expected=0, envelope=envelope,
            status="ready", outcome="quarantined",
            events=[{"event_id": "e1", "title": f"{label} event", "status": "quarantined",
                     "evidence": [piece], "attempts": []}],
            quarantines=[{"event_id": "e1", "record": {"evidence": [piece], "attempts": []}}],
        )
    )  # fmt: skip
    return StoryQuarantine.objects.get(conversation=conversation)


def _turn_with_a_selection(tenant, conversation, label: str):
    """A finished turn whose trace recorded a worldbook selection over a book of the tenant
    (what ``.../turns/{turn_id}/worldbook-decisions`` selects again)."""
    import uuid

    from roleplay.models import Turn
    from worldbook import services as worldbooks
    from worldbook.engine.schema import BookIn

    model = BookIn.model_validate(
        {"name": f"{label}-book", "entries": [{"id": "e1", "content": f"{label} lore"}]}
    )
    book, _ = worldbooks.create_book(tenant, model)
    request = {"books": [{"book_id": str(book.id), "revision": 1}], "query": "lighthouse"}
    return Turn.objects.create(
        tenant=tenant,
        conversation=conversation,
        client_message_id=f"{label}-turn",
        assistant_message_id=uuid.uuid4(),
        status="complete",
        trace={"worldbook": {"replay": {"request": request, "timed_state": {}}}},
    )


@pytest.fixture
def foreign(other_tenant, llm) -> World:
    """Another tenant's model config, character, player, conversation, messages, persona
    and preset."""
    return build_world(other_tenant, llm.base_url, "foreign")


@pytest.fixture
def own(tenant, llm) -> World:
    """The calling tenant's own object graph (same shape as ``foreign``); the scripted model
    answers the auto-reply config with three options, the compactor with a summary."""
    answer_the_world(llm)
    return build_world(tenant, llm.base_url, "own")
