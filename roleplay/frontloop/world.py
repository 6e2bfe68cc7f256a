"""A conversation's visual world: read it, write it by compare-and-set, keep its revisions,
and update it after a turn that drew pictures (``docs/images.md``).

Every door writes through :func:`commit` (the turn's update in Celery, an operator's edit
on the console page or ``PUT /api/v1/conversations/{id}/visual-world/``, a restore): the
state is checked (``engine.world.check_state``), the revision in force must be the one the
writer read (else a 409 ``revision_conflict`` with the current one), and the new revision
is kept. :func:`update_after_turn` is the turn's: the pictures of a turn read the state
prepared with its first picture; once the turn is over, a model answers the whole new state
from the reply, committed once; a conflict (an operator edited meanwhile) is retried once
on the new state.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from django.db import IntegrityError, transaction

from console import failures
from console.db import run_db
from roleplay.errors import RoleplayError
from roleplay.frontloop.engine import world as rules
from roleplay.frontloop.models import VisualWorld, VisualWorldRevision
from roleplay.llm.configs.selectors import model_configs_by_ref
from roleplay.llm.errors import ModelError
from roleplay.llm.gateway import Gateway
from roleplay.llm.types import ModelRequest
from roleplay.models import Conversation

log = logging.getLogger(__name__)
UPDATE_PURPOSE = "visual_world"
UPDATE_MAX_TOKENS = 1_500
SOURCES = ("turn", "operator", "restore")


class WorldConflict(RoleplayError, failures.Conflict):
    """The visual world moved past the revision the writer read (409 ``revision_conflict``;
    ``details.current_revision``)."""

    default_code = "revision_conflict"

    def __init__(self, current: int, expected: int) -> None:
        super().__init__(
            message=f"the visual world is at revision {current}, not {expected}",
            details={"current_revision": current, "expected_revision": expected},
        )


class WorldStateInvalid(RoleplayError, failures.Invalid):
    """A state breaks a rule of the visual world (422 ``validation_error``, the field)."""

    default_code = "validation_error"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message=f"{field}: {message}", details={"field": field})


def world_of(conversation: Conversation) -> tuple[int, dict[str, Any]]:
    """(revision, state) in force; (0, the empty state) before the first one."""
    row = VisualWorld.objects.filter(conversation=conversation).values("revision", "state")
    found = row.first()
    if found is None:
        return 0, dict(rules.EMPTY)
    return found["revision"], found["state"]


def revisions(conversation: Conversation, limit: int = 50) -> list[VisualWorldRevision]:
    rows = VisualWorldRevision.objects.filter(conversation=conversation)
    return list(rows.order_by("-revision")[:limit])


def commit(
    conversation: Conversation, *, expected: int, state: object, source: str, turn_id=None
) -> int:
    """Write ``state`` over revision ``expected``; the new revision (module doc)."""
    try:
        checked = rules.check_state(state)
    except rules.WorldInvalid as exc:
        raise WorldStateInvalid(exc.field, exc.message) from None
    tenant = conversation.tenant_id
    with transaction.atomic():
        if expected == 0:
            try:
                with transaction.atomic():
                    VisualWorld.objects.create(
                        tenant_id=tenant, conversation=conversation, revision=1, state=checked
                    )
            except IntegrityError:
                raise WorldConflict(world_of(conversation)[0], expected) from None
        else:
            moved = VisualWorld.objects.filter(conversation=conversation, revision=expected).update(
                revision=expected + 1, state=checked
            )
            if not moved:
                raise WorldConflict(world_of(conversation)[0], expected)
        VisualWorldRevision.objects.create(
            tenant_id=tenant, conversation=conversation, revision=expected + 1,
            state=checked, source=source, turn_id=turn_id,
        )  # fmt: skip
    return expected + 1


def restore(conversation: Conversation, *, expected: int, revision: int) -> int:
    """Make revision ``revision``'s state the state in force again (a new revision)."""
    old = VisualWorldRevision.objects.filter(conversation=conversation, revision=revision).first()
    if old is None:
        raise failures.NotFound("not_found", f"the visual world has no revision {revision}")
    return commit(conversation, expected=expected, state=old.state, source="restore")


def update_after_turn(conversation_id: str, turn_id: str, story: str, ref) -> str:
    """The turn's update (Celery, ``roleplay.update_visual_world``): the model rewrites the
    state in force from the reply ``story``; a conflict is tried once more on the new one."""
    conversation = Conversation.objects.filter(pk=conversation_id).first()
    if conversation is None:
        return "gone"
    config = model_configs_by_ref(conversation.tenant_id, [ref]).get(ref)
    for _attempt in range(2):
        current, state = world_of(conversation)
        gateway = Gateway(conversation.tenant, config, UPDATE_PURPOSE, turn_id=turn_id,
                          run_db=run_db)  # fmt: skip
        request = ModelRequest(rules.update_messages(state, story), max_tokens=UPDATE_MAX_TOKENS)
        try:
            answer = asyncio.run(gateway.complete(request)).content
            new = rules.parse_update(answer)
        except (ModelError, rules.WorldInvalid) as exc:
            log.info("visual world of %s not updated: %s", conversation_id, exc)
            return "unchanged"
        try:
            commit(conversation, expected=current, state=new, source="turn", turn_id=turn_id)
            return "updated"
        except WorldConflict:
            continue
    return "conflict"
