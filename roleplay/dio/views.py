"""Console page of a conversation's DIO (``docs/dio.md``): the character prompt in force
and every version (its changeset, its diff against the character's original prompt), a
button to put any version in force again or to switch DIO off (each a new version,
compare-and-set on the version the page showed, audited), a form to submit an instruction,
and the recent tasks with how each ended."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse

from console.access import console_view
from console.failures import DomainError
from console.numbers import parse_int
from console.scoping import get_scoped_or_404
from console.textdiff import line_diff
from roleplay.dio import selectors, services
from roleplay.dio.engine.compiler import MAX_INSTRUCTION_CHARS
from roleplay.dio.engine.protocol import Submission
from roleplay.dio.identity import identity_for
from roleplay.models import Conversation


@console_view()
def conversation_dio(request, pk):
    conversation = get_scoped_or_404(
        Conversation.objects.select_related("character", "player"), request.tenant, pk=pk
    )
    if request.method == "POST":
        _post(request, conversation)
        return redirect(reverse("conversation_dio", args=[conversation.pk]))
    identity = identity_for(conversation)
    rows = selectors.versions(conversation.tenant_id, identity)
    original = selectors.original_prompt(conversation)
    versions = [
        {
            "row": row,
            "diff": line_diff(original, row.compiled_prompt) if row.compiled_prompt else [],
        }
        for row in rows
    ]
    context = {
        "conversation": conversation,
        "identity": identity,
        "current": rows[0].version if rows else 0,
        "active": selectors.as_active(rows[0] if rows else None),
        "original": original,
        "versions": versions,
        "tasks": selectors.recent_tasks(conversation),
        "max_instruction": MAX_INSTRUCTION_CHARS,
    }
    return render(request, "roleplay/dio.html", context)


def _post(request, conversation) -> None:
    identity = identity_for(conversation)
    action = request.POST.get("action")
    expected = parse_int(request.POST.get("expected"), low=0)
    who = f"user:{request.user.get_username()}"
    try:
        if action == "submit":
            text = request.POST.get("instruction", "").strip()
            if not text or len(text) > MAX_INSTRUCTION_CHARS:
                messages.error(request, f"Write an instruction of 1 to {MAX_INSTRUCTION_CHARS} "
                               "characters.")  # fmt: skip
                return
            request_id = f"console-{uuid.uuid4()}:dio"
            submission = Submission(identity, request_id, f"{request_id}:assistant", text)
            services.schedule(request.tenant.pk, submission)
            messages.success(request, "Accepted: it applies from the next turn once compiled.")
        elif action == "revert" and expected is not None:
            to = parse_int(request.POST.get("version"), low=1)
            if to is None:
                raise DomainError("bad_request", "The page was out of date: reload it.")
            new = services.revert(conversation, identity, to=to, expected=expected, by=who,
                                  request=request, user=request.user)  # fmt: skip
            messages.success(request, f"Version {to} is in force again (version {new.version}).")
        elif action == "off" and expected is not None:
            new = services.switch_off(conversation, identity, expected=expected, by=who,
                                      request=request, user=request.user)  # fmt: skip
            messages.success(request, f"DIO is off for this conversation (version {new.version}).")
        else:
            messages.error(request, "The page was out of date: reload it and try again.")
    except DomainError as exc:
        messages.error(request, exc.message)
