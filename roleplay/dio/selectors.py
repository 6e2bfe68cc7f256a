"""DIO's reads: the identity of a conversation, the prompt in force (one indexed read),
a task's status, the versions, and the character prompt DIO starts from.

**The original prompt** (what the first compile rewrites, what the console diffs against)
is the character prompt as the Actor's ``roleplay`` slot renders it: the conversation's
Actor preset's character slot (``LoadedPreset.character_slot``), expanded with the card's
macros: the ``roleplay`` prompt (the shipped preset's is ``{{description}}``, so the
description), or, for a ``{{getvar::systemPrompt}}`` placeholder, the card's
``system_prompt``. A preset with no usable slot: the description (the turn side refuses
such a preset for a DIO scenario anyway).
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from console.scoping import is_uuid
from roleplay.dio.engine.ports import ActivePrompt, Identity, TaskStatus
from roleplay.dio.models import DioPromptVersion, DioTask, DioTaskStatus
from roleplay.dio.reads import active_of
from roleplay.llm.gateway import resolve_config
from roleplay.models import Conversation
from roleplay.presets.selectors import effective_preset, load_preset
from roleplay.prompting.macros import MacroContext, expand_macros
from roleplay.prompting.presets import NamedPromptMissing


def identity_versions(tenant_id, identity: Identity):
    if not is_uuid(identity.conversation_id):
        return DioPromptVersion.objects.none()
    rows = DioPromptVersion.objects.filter(
        conversation_id=identity.conversation_id,
        user_id=identity.user_id,
        target_prompt_id=identity.target_prompt_id,
    )
    return rows if tenant_id is None else rows.filter(tenant_id=tenant_id)


def latest_version(tenant_id, identity: Identity) -> DioPromptVersion | None:
    """The newest version (the one in force unless it is ``off``): one indexed read."""
    return identity_versions(tenant_id, identity).order_by("-version").first()


def version_number(version: DioPromptVersion | None) -> int:
    return version.version if version is not None else 0


def as_active(version: DioPromptVersion | None) -> ActivePrompt | None:
    if version is None:
        return None
    v = version
    return active_of(v.version, v.pk, v.kind, v.compiled_prompt, v.sha256, v.source_version_id,
                     v.changeset)  # fmt: skip


def active_prompt(tenant_id, identity: Identity) -> ActivePrompt | None:
    """The prompt in force for ``identity`` (None: none, or switched off)."""
    return as_active(latest_version(tenant_id, identity))


def versions(tenant_id, identity: Identity, limit: int = 100) -> list[DioPromptVersion]:
    return list(identity_versions(tenant_id, identity).order_by("-version")[:limit])


def task_row(tenant_id, request_id: str) -> DioTask | None:
    rows = DioTask.objects.filter(request_id=request_id)
    if tenant_id is not None:
        return rows.filter(tenant_id=tenant_id).first()
    found = list(rows[:2])
    return found[0] if len(found) == 1 else None


def overdue(task: DioTask, now: datetime | None = None) -> bool:
    return task.status == DioTaskStatus.PROCESSING and (now or timezone.now()) > task.deadline


def as_status(task: DioTask) -> TaskStatus:
    """A task as the protocol reports it; one still processing past its deadline (its
    worker died) reads ``timed_out``."""
    if overdue(task):
        return TaskStatus(task.request_id, "timed_out", error_code="dio_timed_out",
                          error_message="the task did not finish within 16 minutes")  # fmt: skip
    return TaskStatus(
        request_id=task.request_id,
        status=task.status,  # type: ignore[arg-type]
        prompt_changed=task.prompt_changed,
        source_version_id=str(task.source_version_id) if task.source_version_id else None,
        compiled_prompt_sha256=task.compiled_sha256 or None,
        error_code=task.error_code or None,
        error_message=task.error_message or None,
    )


def task_status(tenant_id, request_id: str) -> TaskStatus | None:
    task = task_row(tenant_id, request_id)
    return None if task is None else as_status(task)


def recent_tasks(conversation: Conversation, limit: int = 20) -> list[DioTask]:
    return list(DioTask.objects.filter(conversation=conversation).order_by("-created_at")[:limit])


def actor_preset(conversation: Conversation):
    """The conversation's Actor preset: its scenario's (else its character's default
    scenario's) preset, else its model config's, else the shipped default."""
    scenario = conversation.scenario or conversation.character.default_scenario
    if scenario is not None and scenario.preset_id is not None and scenario.preset is not None:
        return load_preset(scenario.preset)
    config = resolve_config(conversation.tenant, conversation=conversation,
                            character=conversation.character)  # fmt: skip
    return effective_preset(config)


def original_prompt(conversation: Conversation) -> str:
    """The character prompt DIO starts from (module doc)."""
    card = conversation.character
    preset = actor_preset(conversation)
    try:
        slot = preset.character_slot()
    except NamedPromptMissing:
        return card.description
    if slot.kind == "placeholder":
        return card.system_prompt
    prompt = preset.prompt(slot.identifier)
    context = MacroContext(
        char=card.name,
        description=card.description,
        personality=card.personality,
        scenario=card.scenario,
        mes_examples=card.example_dialogues,
        variables={"systemPrompt": card.system_prompt},
    )
    return expand_macros(prompt.content if prompt else "", context).text


def current_prompt(conversation: Conversation, version: DioPromptVersion | None) -> str:
    """The character prompt in force: the active version's, else the original."""
    active = as_active(version)
    return active.compiled_prompt if active is not None else original_prompt(conversation)
