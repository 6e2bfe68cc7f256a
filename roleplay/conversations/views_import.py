"""Console pages of chat files: one from another tool becomes a new conversation
(``services.chat_import``, as ``POST /api/v1/conversations/import``), and a conversation
goes out as one (``chat_export``, as ``GET /api/v1/conversations/{id}/export``)."""

from __future__ import annotations

from django import forms
from django.contrib import messages as flash
from django.shortcuts import redirect, render

from console.access import console_view, posted
from console.failures import DomainError
from console.models import Player, Role
from console.scoping import get_scoped_or_404, scoped
from console.services import console_player_external_id, ensure_console_player
from roleplay.characters.downloads import download
from roleplay.characters.views import files
from roleplay.conversations.chat_export import export_chat
from roleplay.conversations.chats.read import MAX_FILE_BYTES
from roleplay.conversations.chats.write import FORMATS, SILLYTAVERN
from roleplay.conversations.services.chat_import import import_chat
from roleplay.models import Character, Conversation


class ChatImportForm(forms.Form):
    file = forms.FileField(
        label="Chat file",
        widget=forms.ClearableFileInput(attrs={"accept": ".jsonl,.json"}),
        help_text="A SillyTavern chat (.jsonl), an OpenAI message array, a ShareGPT "
        "conversation, an Agnai, RisuAI or CAI Tools chat export, or one row of a "
        "conversation dataset (LMSYS-Chat, PIPPA, Capybara), "
        "at most 32 MiB. Swipes become the replies' alternatives; "
        "hidden and narrator lines are left out.",
    )
    character = forms.ModelChoiceField(queryset=Character.objects.none())
    player = forms.ModelChoiceField(
        queryset=Player.objects.none(),
        required=False,
        help_text="Leave on “Me” to import it as your own conversation.",
    )
    title = forms.CharField(max_length=200, required=False, help_text="Default: the file name.")

    def __init__(self, *args, tenant, me_label: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["character"].queryset = scoped(Character, tenant).order_by("name")
        self.fields["player"].queryset = scoped(Player, tenant).order_by("external_id")
        self.fields["player"].empty_label = me_label


@console_view(read=Role.OPERATOR)
def conversation_import(request):
    me = f"Me ({console_player_external_id(request.user)})"
    form = ChatImportForm(posted(request), files(request), tenant=request.tenant, me_label=me)
    if request.method == "POST" and form.is_valid():
        data, upload = form.cleaned_data, form.cleaned_data["file"]
        player = data["player"] or ensure_console_player(request.tenant, request.user)
        try:
            result = import_chat(
                request.tenant,
                upload.read(MAX_FILE_BYTES + 1),
                character=data["character"],
                player=player,
                title=data["title"],
                file_name=upload.name or "",
            )
        except DomainError as exc:
            form.add_error("file", f"{exc.message} ({exc.code})")
        else:
            report = result.report
            skipped = sum(report["skipped"].values())
            flash.success(
                request,
                f"Imported {report['stored_messages']} messages from {upload.name}"
                + (f" ({skipped} left out)" if skipped else "")
                + ("; the first reply is the character's opening." if report["opening"]
                   == "greeting" else "."),
            )  # fmt: skip
            return redirect("conversation_detail", pk=result.conversation.pk)
    return render(request, "roleplay/conversations/import.html", {"form": form})


@console_view()
def conversation_export(request, pk):
    """The conversation as a chat file to download (``?format=``, as the API's export)."""
    conversation = get_scoped_or_404(
        Conversation.objects.select_related("character", "player"), request.tenant, pk=pk
    )
    fmt = request.GET.get("format", SILLYTAVERN)
    chat = export_chat(request.tenant, conversation, fmt if fmt in FORMATS else SILLYTAVERN)
    return download(chat.data, chat.content_type, chat.filename)
