"""The play page's doors to branches and bookmarks: "Branch from here" (and another
alternative of an older reply, which branches too), naming a message, deleting a name.
Each is a form POST that goes to the page to show next: the new branch's play page, or back
to the conversation's, with what happened (``roleplay.branches.services`` decides)."""

from __future__ import annotations

from django.contrib import messages as flash
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from console.access import console_view
from console.failures import DomainError
from console.owners import conversation_or_404
from roleplay.branches import services


def _back(conversation):
    return redirect(reverse("play", args=[conversation.pk]))


def _alternative(request) -> int | None:
    raw = (request.POST.get("alternative") or "").strip()
    return int(raw) if raw.isdigit() and len(raw) <= 5 else None


@console_view()
@require_POST
def branch(request, pk):
    """A new branch at the posted ``message_id`` (with ``alternative``: that alternative of
    it, in a branch that forks just before it); its play page."""
    conversation = conversation_or_404(request, pk)
    try:
        created = services.create_branch(
            conversation, request.POST.get("message_id"), alternative=_alternative(request)
        )
    except DomainError as exc:
        flash.error(request, f"No branch was made: {exc.message}.")
        return _back(conversation)
    flash.success(request, "A new branch: the conversation it came from is as it was.")
    return redirect(reverse("play", args=[created.pk]))


@console_view()
@require_POST
def add_bookmark(request, pk):
    conversation = conversation_or_404(request, pk)
    try:
        services.add_bookmark(
            conversation, request.POST.get("message_id"), request.POST.get("name")
        )
    except DomainError as exc:
        flash.error(request, f"No checkpoint was saved: {exc.message}.")
    return _back(conversation)


@console_view()
@require_POST
def delete_bookmark(request, pk, bookmark_id):
    conversation = conversation_or_404(request, pk)
    try:
        services.delete_bookmark(conversation, bookmark_id)
    except DomainError as exc:
        flash.error(request, f"Nothing was deleted: {exc.message}.")
    return _back(conversation)
