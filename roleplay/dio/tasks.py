"""DIO's Celery tasks: our own compile, and the polling of an outside DIO service's task
(each second, until it ends or the 16-minute budget is spent). Imported by
``roleplay.apps`` so every worker knows them."""

from __future__ import annotations

from celery import shared_task

COMPILE_SOFT_LIMIT_S = 16 * 60 + 30  # the task's own deadline comes first


@shared_task(
    acks_late=True, ignore_result=True, name="roleplay.dio_compile",
    soft_time_limit=COMPILE_SOFT_LIMIT_S,
)  # fmt: skip
def compile_instruction(task_id: str) -> str:
    """Compile one accepted instruction (``roleplay.dio.compiling``)."""
    from roleplay.dio import compiling

    return compiling.run(task_id)


@shared_task(acks_late=True, ignore_result=True, name="roleplay.dio_poll")
def poll_external(config: dict, request_id: str, identity: list, deadline: float) -> str:
    """One look at an outside DIO task; queued again a second later until it ends
    (``roleplay.dio.external.poll_once``)."""
    from roleplay.dio import external

    return external.poll_once(config, request_id, identity, deadline)
