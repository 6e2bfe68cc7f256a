"""Our own DIO's compile (the Celery task ``roleplay.dio_compile``, ``docs/dio.md``).

One model call, with the task's model config (the scenario's ``dio.modelConfigId``, else
the conversation's Actor config) and the ``dio_compiler`` role prompt of that config's
preset (the shipped text when the preset has none), rewrites the character prompt in force
(the newest version's, else the original: ``selectors.original_prompt``) into a complete
replacement following the new instruction and the ones accepted before it
(``engine.compiler``). Then:

- the answer breaks the output shape, or the model fails: ``failed`` (no version);
- the compiled prompt is the current one: ``succeeded`` with ``promptChanged`` false;
- else a new ``compiled`` version by compare-and-set over the version read; when an
  operator moved the versions meanwhile, compiled once more over the new one;
- past the task's deadline (16 minutes from the submission): ``timed_out``. Each model
  call is bounded by the config's timeout and by the time left.
"""

from __future__ import annotations

import asyncio
import logging

from django.utils import timezone

from console.failures import DomainError
from console.jsontext import loads
from roleplay.dio import selectors, services
from roleplay.dio.engine import compiler
from roleplay.dio.engine.ports import Identity
from roleplay.dio.errors import VersionConflict
from roleplay.dio.models import DioTask, DioTaskStatus, VersionKind
from roleplay.llm.configs.selectors import model_configs_by_ref
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway, resolve_config
from roleplay.llm.types import ModelRequest
from roleplay.models import ModelConfig
from roleplay.presets.roles import RoleUnavailable, role_system
from roleplay.prompting.macros import MacroContext, expand_macros

log = logging.getLogger(__name__)
PURPOSE = "dio_compiler"
ATTEMPTS = 2  # a version conflict is compiled once more over the new version


class _Ended(DomainError):
    """The task ends with ``status`` and ``code`` (never leaves this module)."""

    def __init__(self, status: str, code: str, message: str) -> None:
        super().__init__(code, message)
        self.status = status


def _config(task: DioTask) -> ModelConfig | None:
    ref = task.model_config_ref
    if ref:
        config = model_configs_by_ref(task.tenant_id, [ref]).get(ref)
        if config is None:
            raise _Ended(DioTaskStatus.FAILED, "model_config_missing",
                         f"the DIO model config {ref!r} is gone")  # fmt: skip
        return config
    conversation = task.conversation
    return resolve_config(conversation.tenant, conversation=conversation,
                          character=conversation.character)  # fmt: skip


def _system(config: ModelConfig | None, character_name: str) -> str:
    variables = {"characterName": character_name}
    try:
        return role_system(config, compiler.DIO_COMPILER_ROLE, variables)
    except RoleUnavailable:
        context = MacroContext(variables=variables)
        return expand_macros(compiler.DIO_COMPILER_PROMPT, context).text


def _seconds_left(task: DioTask) -> float:
    left = (task.deadline - timezone.now()).total_seconds()
    if left <= 0:
        raise _Ended(DioTaskStatus.TIMED_OUT, "dio_timed_out",
                     "the task did not finish within 16 minutes")  # fmt: skip
    return left


def _call(task: DioTask, config: ModelConfig | None, messages: list) -> tuple[str, list]:
    """One bounded model call; its answer's (compiled prompt, changeset)."""
    left = _seconds_left(task)
    timeout = min(left, (config.timeout_ms / 1000) if config is not None else left)
    writes: list = []  # the call's ModelCall row, written here on this thread
    gateway = Gateway(task.conversation.tenant, config, PURPOSE, writes=writes)
    request = ModelRequest(
        messages, response_format={"type": "json_object"}, temperature=0.2, timeout=timeout
    )
    try:
        try:
            answer = asyncio.run(asyncio.wait_for(gateway.complete(request), timeout=left))
        finally:
            for write in writes:
                write()
    except TimeoutError:
        raise _Ended(DioTaskStatus.TIMED_OUT, "dio_timed_out",
                     "the compile did not finish within 16 minutes") from None  # fmt: skip
    except ModelError as exc:
        raise _Ended(DioTaskStatus.FAILED, exc.code, exc.message) from None
    try:
        return compiler.parse_output(loads(answer.content))
    except (ValueError, compiler.CompileOutputInvalid) as exc:
        raise _Ended(DioTaskStatus.FAILED, "dio_bad_output", str(exc)) from None


def _compile_once(task: DioTask, config, system: str) -> None:
    conversation = task.conversation
    identity = Identity(task.user_id, str(conversation.pk), task.target_prompt_id)
    latest = selectors.latest_version(task.tenant_id, identity)
    active = selectors.as_active(latest)
    current = selectors.current_prompt(conversation, latest)
    earlier = list(latest.instructions) if active is not None and latest is not None else []
    user = compiler.material(current, earlier, task.instruction, task.language)
    compiled, changeset = _call(task, config, compiler.messages(system, user))
    source = latest if active is not None else None
    if compiled == current:
        services.finish(task, DioTaskStatus.SUCCEEDED, prompt_changed=False, source=source)
        return
    version = services.commit_version(
        conversation, identity, expected=selectors.version_number(latest),
        kind=VersionKind.COMPILED, compiled_prompt=compiled, changeset=changeset,
        instructions=[*earlier, task.instruction], source_version=source,
        request_id=task.request_id, created_by="dio",
    )  # fmt: skip
    services.finish(task, DioTaskStatus.SUCCEEDED, prompt_changed=True, version=version,
                    source=source)  # fmt: skip


def run(task_id: str) -> str:
    """Compile task ``task_id`` to its end (module doc); its final status."""
    task = (
        DioTask.objects.select_related("conversation__character", "conversation__tenant")
        .filter(pk=task_id)
        .first()
    )
    if task is None:
        return "gone"
    if task.status != DioTaskStatus.PROCESSING:
        return task.status
    try:
        config = _config(task)
        system = _system(config, task.conversation.character.name)
        for _attempt in range(ATTEMPTS):
            try:
                _compile_once(task, config, system)
                break
            except VersionConflict:
                continue
        else:
            raise _Ended(DioTaskStatus.FAILED, "version_conflict",
                         "the prompt's versions kept moving")  # fmt: skip
    except _Ended as end:
        log.info("DIO task %s ended %s: %s", task.pk, end.status, end.message)
        services.finish(task, end.status, code=end.code, message=end.message)
    task.refresh_from_db(fields=["status"])
    return task.status
