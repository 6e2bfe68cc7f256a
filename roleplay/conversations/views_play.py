"""Player chat page (console session auth); the socket protocol is in docs/websocket.md.

The page changes the conversation only over the socket. ``?part=transcript`` returns the
transcript alone, rendered by the same partials: the page reads it again when an event does
not say everything it needs (another tab's player message, a turn that ended in an error,
a reconnect after missed events), instead of a second JSON shape of the same messages.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from console.scoping import get_scoped_or_404
from roleplay.branches.selectors import branch_tree
from roleplay.characters.selectors import greeting_choices, greeting_for
from roleplay.conversations import play_selectors
from roleplay.groups.selectors import members_of
from roleplay.llm.gateway import provider_config, resolve_config
from roleplay.models import Conversation
from roleplay.players.selectors import persona_for
from roleplay.regex_scripts.selectors import for_conversation
from roleplay.regex_scripts.turns import attach_display

TRANSCRIPT_PART = "transcript"


@login_required
def play(request, conversation_id):
    membership = getattr(request.user, "membership", None)
    tenant = membership.tenant if membership else None
    conversation = get_scoped_or_404(
        Conversation.objects.select_related(
            "tenant", "character", "player", "model_config", "persona"
        ),
        tenant,
        pk=conversation_id,
    )
    context = play_context(
        request, conversation, can_write=membership.can_edit() if membership else False
    )
    if request.GET.get("part") == TRANSCRIPT_PART:
        return render(request, "roleplay/play/_transcript.html", context)
    context.update(page_context(tenant, conversation))
    return render(request, "roleplay/play.html", context)


def play_context(request, conversation: Conversation, *, can_write: bool) -> dict:
    """What the transcript partials need: the page and its ``?part=transcript`` re-read (the
    console's page and the player app's alike)."""
    history = play_selectors.transcript(conversation)
    play_selectors.mark_cut_short(conversation, history)
    play_selectors.attach_pictures(conversation, history)
    persona = persona_for(conversation)
    attach_display(for_conversation(conversation, persona.name), history)  # display-only scripts
    return {
        "conversation": conversation,
        "character": conversation.character,
        "persona": persona,
        "opening": greeting_for(conversation),
        "greeting_count": len(greeting_choices(conversation.character)),
        "history": history,
        "running_turn": play_selectors.running_turn(conversation),
        "can_write": can_write,
        **branch_tree(conversation),
    }


def page_context(tenant, conversation: Conversation) -> dict:
    """What the whole page adds: the model's badge, the suggestion row, a group's members."""
    config = resolve_config(tenant, conversation=conversation, character=conversation.character)
    return {
        "model_config": config,
        "auto_reply": play_selectors.offers_auto_reply(conversation),
        "members": members_of(conversation),
        "is_demo_model": config.is_demo
        if config
        else provider_config(None).provider == "llama_cpp",
    }
