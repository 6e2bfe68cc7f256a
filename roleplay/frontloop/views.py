"""Console page of a conversation's visual world (``frontloop.world``): the state in force
(each character's appearance, clothing and injuries, and the scene), an editor of it as
JSON (compare-and-set on the revision edited), and its revisions, each restorable."""

from __future__ import annotations

import json

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse

from console.access import console_view
from console.failures import DomainError
from console.numbers import parse_int
from console.scoping import get_scoped_or_404
from console.storable import loads as loads_json
from roleplay.frontloop import world
from roleplay.frontloop.engine.world import MAX_CHARACTERS, MAX_SCENE, MAX_TRAIT
from roleplay.models import Conversation

MAX_POSTED_CHARS = 60_000


@console_view()
def visual_world(request, pk):
    conversation = get_scoped_or_404(
        Conversation.objects.select_related("character"), request.tenant, pk=pk
    )
    here = reverse("conversation_visual_world", args=[conversation.pk])
    if request.method == "POST":
        _post(request, conversation)
        return redirect(here)
    revision, state = world.world_of(conversation)
    context = {
        "conversation": conversation,
        "revision": revision,
        "state": state,
        "state_json": json.dumps(state, ensure_ascii=False, indent=2),
        "revisions": world.revisions(conversation),
        "limits": {"characters": MAX_CHARACTERS, "trait": MAX_TRAIT, "scene": MAX_SCENE},
    }
    return render(request, "roleplay/visual_world.html", context)


def _post(request, conversation) -> None:
    expected = parse_int(request.POST.get("revision"), low=0)
    restore = request.POST.get("restore")
    to = parse_int(restore, low=1)
    if expected is None or (restore is not None and to is None):
        messages.error(request, "The page was out of date: reload it and try again.")
        return
    try:
        if to is not None:
            new = world.restore(conversation, expected=expected, revision=to)
            messages.success(request, f"Revision {to} is in force again (revision {new}).")
            return
        text = request.POST.get("state", "")
        if len(text) > MAX_POSTED_CHARS:
            messages.error(request, f"The state is longer than {MAX_POSTED_CHARS} characters.")
            return
        state = loads_json(text, "state")
        new = world.commit(conversation, expected=expected, state=state, source="operator")
        messages.success(request, f"Saved as revision {new}.")
    except ValueError as exc:  # json.JSONDecodeError included
        messages.error(request, f"The state is not valid JSON: {exc}.")
    except DomainError as exc:
        messages.error(request, exc.message)
