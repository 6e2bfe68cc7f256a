"""My chats: the player's conversations, newest first, with rename, archive, delete and
export; and the chat page itself, the console's play page with the player's controls only."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.failures import DomainError
from roleplay.accounts.access import player_view
from roleplay.characters.downloads import download, image_response
from roleplay.characters.selectors import avatar_of
from roleplay.conversations.chat_export import export_chat
from roleplay.conversations.chats.write import SILLYTAVERN
from roleplay.conversations.services import conversations
from roleplay.conversations.views_play import TRANSCRIPT_PART, page_context, play_context
from roleplay.groups.selectors import members_of
from roleplay.library import selectors, services
from roleplay.library.forms import RenameForm
from roleplay.library.views.library import age_gated
from roleplay.models import ConversationStatus

PAGE_SIZE = 30


def _mine(request, conversation_id):
    found = selectors.my_conversation(request.tenant, request.player, conversation_id)
    if found is None:
        raise Http404
    return found


@player_view
def chats(request):
    archived = request.GET.get("archived") == "1"
    rows = selectors.my_chats(request.tenant, request.player, archived=archived)
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    page.object_list = selectors.with_unread(page.object_list)
    return render(request, "app/chats.html", {"page": page, "archived": archived})


@player_view
def chat(request, conversation_id):
    """The chat page; reading it marks the conversation read."""
    conversation = _mine(request, conversation_id)
    context = {**play_context(request, conversation, can_write=True), "app": True}
    if request.GET.get("part") == TRANSCRIPT_PART:
        return render(request, "roleplay/play/_transcript.html", context)
    services.mark_read(conversation)
    context.update(page_context(request.tenant, conversation))
    return render(request, "app/play.html", context)


@player_view
def member_avatar(request, conversation_id, character_id):
    """The avatar of a member of the player's group chat (the speaker of a reply), whether
    or not the library lists that character; anything else is a 404."""
    conversation = _mine(request, conversation_id)
    found = next(
        (m.character for m in members_of(conversation) if m.character.pk == character_id), None
    )
    if found is None or age_gated(request, found):
        raise Http404
    return image_response(request, avatar_of(found))


@player_view
@require_POST
def read(request, conversation_id):
    """The page tells when the player leaves it: what they saw is read."""
    services.mark_read(_mine(request, conversation_id))
    return HttpResponse(status=204)


@player_view
@require_POST
def rename(request, conversation_id):
    conversation = _mine(request, conversation_id)
    form = RenameForm(request.POST)
    if form.is_valid():
        _apply(request, conversation, title=form.cleaned_data["title"].strip())
    else:
        messages.error(request, "A title is at most 200 characters.")
    return redirect(_back(request))


@player_view
@require_POST
def archive(request, conversation_id):
    conversation = _mine(request, conversation_id)
    archived = conversation.status == ConversationStatus.ARCHIVED
    status = ConversationStatus.ACTIVE if archived else ConversationStatus.ARCHIVED
    _apply(request, conversation, status=status)
    return redirect(_back(request))


@player_view
@require_POST
def delete(request, conversation_id):
    conversation = _mine(request, conversation_id)
    try:
        conversations.delete_conversation(conversation)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "The chat is deleted.")
    return redirect("app_chats")


@player_view
def export(request, conversation_id):
    """The chat as a SillyTavern ``.jsonl`` file."""
    conversation = _mine(request, conversation_id)
    chat = export_chat(request.tenant, conversation, SILLYTAVERN)
    return download(chat.data, chat.content_type, chat.filename)


def _apply(request, conversation, **fields) -> None:
    try:
        conversations.update_conversation(conversation, **fields)
    except DomainError as exc:
        messages.error(request, exc.message)


def _back(request) -> str:
    back = request.POST.get("back", "")
    return back if back.startswith("/app/") and "//" not in back else "/app/chats/"
