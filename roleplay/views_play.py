"""Player chat page (console session auth); the socket protocol is in docs/websocket.md."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from console.scoping import get_scoped_or_404
from memory import selectors as message_reads
from roleplay.llm.gateway import provider_config, resolve_config
from roleplay.models import Conversation


@login_required
def play(request, conversation_id):
    membership = getattr(request.user, "membership", None)
    tenant = membership.tenant if membership else None
    conversation = get_scoped_or_404(
        Conversation.objects.select_related("character", "player", "model_config"),
        tenant,
        pk=conversation_id,
    )
    config = resolve_config(tenant, conversation=conversation, character=conversation.character)
    messages = message_reads.get_history(tenant, conversation.session_id, 50)
    return render(
        request,
        "roleplay/play.html",
        {
            "conversation": conversation,
            "character": conversation.character,
            "history": messages,
            "model_config": config,
            "is_demo_model": (
                config.is_demo if config else provider_config(None).provider == "llama_cpp"
            ),
            "can_write": membership.can_edit() if membership else False,
        },
    )
