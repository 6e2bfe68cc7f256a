"""Our own DIO as a :class:`~roleplay.dio.engine.ports.DioBackend`: the services and
selectors of this package, called from async code through the database thread
(``console.db.run_db``). Accepting queues the compile (``roleplay.dio.compiling``).

Tenant: the backend of a turn is built with the turn's tenant, so every read is scoped;
without one (a caller that has none) the conversation of the identity names it, and a
task is read by its request id only when exactly one tenant has it.
"""

from __future__ import annotations

from console.db import run_db
from roleplay.dio import selectors, services
from roleplay.dio.engine.ports import (
    ActivePrompt,
    DioError,
    Identity,
    Receipt,
    ScheduleRequest,
    TaskStatus,
    dio_conversation_id,
    request_id,
    task_message_id,
)
from roleplay.dio.engine.protocol import Submission
from roleplay.dio.errors import DioDuplicate, DioNotFound


class InternalBackend:
    announces = True  # ``services.schedule`` sends ``dio.accepted``, for every door
    read_with_turn = True  # the turn's first statement reads it (``roleplay.dio.reads``)

    def __init__(self, *, model_config_ref: str = "", tenant_id=None) -> None:
        self.model_config_ref = model_config_ref
        self.tenant_id = tenant_id

    def _schedule(self, request: ScheduleRequest) -> Receipt:
        submission = Submission(
            identity=request.identity,
            request_id=request_id(request.turn_id),
            task_message_id=task_message_id(request.turn_id),
            instruction=request.instruction,
            language=request.language,
        )
        try:
            services.schedule(self.tenant_id, submission, model_config_ref=self.model_config_ref)
        except DioDuplicate as exc:
            raise DioError("dio_duplicate", exc.message) from None
        except DioNotFound as exc:
            raise DioError("dio_unavailable", exc.message) from None
        conversation = request.identity.conversation_id
        return Receipt(dio_conversation_id(conversation), submission.request_id,
                       submission.task_message_id)  # fmt: skip

    async def schedule(self, request: ScheduleRequest) -> Receipt:
        return await run_db(self._schedule, request)

    async def task(self, request_id: str) -> TaskStatus | None:
        return await run_db(selectors.task_status, self.tenant_id, request_id)

    async def active_prompt(self, identity: Identity) -> ActivePrompt | None:
        return await run_db(selectors.active_prompt, self.tenant_id, identity)
