"""The player's report of a message or a character (``POST /app/report/``)."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from roleplay.accounts.access import player_view
from roleplay.moderation import selectors, services
from roleplay.moderation.forms import ReportForm


@player_view
@require_POST
def report(request):
    """Another player's message, or a character the player may not see, is a 404."""
    form = ReportForm(request.POST)
    if not form.is_valid():
        return render(request, "app/report.html", {"form": form}, status=400)
    data = form.cleaned_data
    player = request.player
    if data["message_id"] and selectors.reportable_message(player, data["message_id"]) is None:
        raise Http404("no such message")
    if (
        data["character_id"]
        and selectors.reportable_character(player, data["character_id"]) is None
    ):
        raise Http404("no such character")
    services.report(player, reason=data["reason"], message_id=data["message_id"],
                    character_id=data["character_id"])  # fmt: skip
    messages.success(request, "Thank you: an operator will look at your report.")
    back = request.POST.get("back", "")
    return redirect(back if back.startswith("/app/") and "//" not in back else "app_home")
