"""Background work of the conversation runtime (thin wrappers around services)."""

from __future__ import annotations

from celery import shared_task

from roleplay import turns


@shared_task(name="roleplay.expire_abandoned_turns")
def expire_abandoned_turns() -> int:
    """Fail running turns whose process died (lease expired); idempotent, runs every minute,
    so a conversation nobody writes to again is not shown as generating for ever."""
    return turns.expire_abandoned()


# Sent on every turn, read by nobody: ``ignore_result`` spares the sender a subscription
# to the task's result channel on each send.
@shared_task(acks_late=True, ignore_result=True, name="roleplay.run_planning")
def run_planning(run_id: str) -> str:
    """One turn's Agent V2 background run; idempotent per run (``services.planning``): a
    second delivery of a finished run does nothing, a redelivery after a killed worker
    takes the run over and commits at most once."""
    from roleplay.agentic.services import planning
    from roleplay.turns import hub

    return planning.execute(run_id, announce=hub.announce)


@shared_task(name="roleplay.requeue_planning_runs")
def requeue_planning_runs() -> dict:
    """Send again the planning runs whose task was lost (the broker was down when the turn
    enqueued it) or whose worker died without a redelivery; give up on a run after
    ``planning.MAX_DELIVERIES``. Runs every minute."""
    from roleplay.agentic.services import planning

    return planning.requeue_stalled()


@shared_task(ignore_result=True, name="roleplay.story_settlement_sweep")
def story_settlement_sweep() -> int:
    """Retry the story events waiting for their settlement without waiting for the player
    (``services.story_settlements``). Runs every minute."""
    from roleplay.story_plugin.services import settlements as story_settlements

    return story_settlements.sweep()


@shared_task(acks_late=True, ignore_result=True, name="roleplay.prepare_compaction")
def prepare_compaction(conversation_id: str, scenario_id: str, turn_id: str) -> str:
    """Prepare the conversation's next Compact checkpoint after ``turn_id`` (sent when the
    next prompt will pass the trigger); idempotent (``compact.services.prepare``)."""
    from roleplay.compact.services import prepare as compact_prepare

    return compact_prepare.prepare(conversation_id, scenario_id, turn_id)


@shared_task(acks_late=True, ignore_result=True, name="roleplay.consolidate_memory")
def consolidate_memory(conversation_id: str) -> str:
    """Consolidate the conversation's next batch of the player's messages
    (``services.consolidation``); at most one run per owner."""
    from roleplay.memory_plugin.services import consolidation

    return consolidation.run(conversation_id)


@shared_task(ignore_result=True, name="roleplay.consolidation_sweep")
def consolidation_sweep() -> int:
    """Send a consolidation run for each conversation whose messages waited long enough."""
    from roleplay.memory_plugin.services import consolidation

    return consolidation.sweep()


@shared_task(acks_late=True, ignore_result=True, name="roleplay.build_beliefs")
def build_beliefs(player_id: int) -> str:
    """Build a player's beliefs from their facts and episodes (``services.beliefs``)."""
    from roleplay.memory_plugin.services import beliefs

    return beliefs.build(player_id)


@shared_task(ignore_result=True, name="roleplay.beliefs_sweep")
def beliefs_sweep() -> int:
    """Send a belief build for each player whose facts or episodes changed."""
    from roleplay.memory_plugin.services import beliefs

    return beliefs.sweep()


@shared_task(bind=True, acks_late=True, ignore_result=True, name="roleplay.write_diary")
def write_diary(self, conversation_id: str, through_round: int) -> str:
    """Write a conversation's diary for its rounds up to ``through_round``
    (``services.diaries``); once per conversation and round. A failed one is sent again
    after its backoff (``diaries.retry_after``), while it has tries left."""
    from roleplay.memory_plugin.services import diaries

    outcome = diaries.write(conversation_id, through_round)
    delay = diaries.retry_after(conversation_id, through_round) if outcome == "failed" else None
    if delay is not None:
        raise self.retry(countdown=delay, max_retries=None)
    return outcome


@shared_task(acks_late=True, ignore_result=True, name="roleplay.draw_chat_picture")
def draw_chat_picture(slot_id: str, request: dict) -> str:
    """A chat picture of the front loop: its prompt written, then drawn
    (``roleplay.frontloop.pictures.draw``)."""
    from roleplay.frontloop import pictures

    return pictures.draw(slot_id, request)


@shared_task(acks_late=True, ignore_result=True, name="roleplay.update_visual_world")
def update_visual_world(conversation_id: str, turn_id: str, story: str, ref: str) -> str:
    """The visual world after a turn that drew pictures (``frontloop.world``)."""
    from roleplay.frontloop import world

    return world.update_after_turn(conversation_id, turn_id, story, ref)


# The turn sends it with one Redis command; nobody reads its result (it is on the row).
@shared_task(acks_late=True, ignore_result=True, name="roleplay.run_workflow_runtime")
def run_workflow_runtime(run_id: str) -> str:
    """One ``fast+slow`` bounded-runtime run on the snapshot its turn froze; a second
    delivery of a claimed run does nothing (``workflows.runtime_runs``)."""
    from roleplay.turns import hub
    from roleplay.workflows import runtime_runs

    return runtime_runs.execute(run_id, announce=hub.announce)


@shared_task(name="roleplay.requeue_workflow_runtime_runs")
def requeue_workflow_runtime_runs() -> dict:
    """Send again the ``fast+slow`` runtime runs whose task was lost or whose worker died;
    give up on a run after ``runtime_runs.MAX_DELIVERIES``. Runs every minute."""
    from roleplay.workflows import runtime_runs

    return runtime_runs.requeue_stalled()


@shared_task(acks_late=True, ignore_result=True, name="roleplay.dio_compile",
             soft_time_limit=16 * 60 + 30)  # fmt: skip
def dio_compile(task_id: str) -> str:
    """Compile one accepted DIO instruction (``dio.compiling``; its own 16-minute deadline
    comes before the soft limit)."""
    from roleplay.dio import compiling

    return compiling.run(task_id)


@shared_task(name="roleplay.dio_expire")
def dio_expire() -> int:
    """End the DIO tasks still processing past their deadline (``dio.services.expire_overdue``).
    Runs every minute."""
    from roleplay.dio import services

    return services.expire_overdue()


@shared_task(acks_late=True, ignore_result=True, name="roleplay.dio_poll")
def dio_poll(config: dict, request_id: str, identity: list, deadline: float) -> str:
    """One look at an outside DIO service's task, queued again a second later until it
    ends (``dio.external.poll_once``)."""
    from roleplay.dio import external

    return external.poll_once(config, request_id, identity, deadline)
