"""Console pages of chat files: one from another tool becomes a new conversation
(``services.chat_import``, as ``POST /api/v1/conversations/import``; with a SillyTavern
group file, a group conversation: ``services.group_import``, as ``.../import-group``), and
a conversation goes out as one (``chat_export``, as ``GET /api/v1/conversations/{id}/export``
and ``.../export-group``)."""

from __future__ import annotations

from django import forms
from django.contrib import messages as flash
from django.shortcuts import redirect, render

from console.access import console_view, files, posted
from console.failures import DomainError
from console.models import Player, Role
from console.scoping import get_scoped_or_404, scoped
from console.services import console_player_external_id, ensure_console_player
from roleplay.characters.downloads import download
from roleplay.conversations.chat_export import export_chat, export_group
from roleplay.conversations.chats.errors import ChatFileError
from roleplay.conversations.chats.group_file import MAX_GROUP_BYTES
from roleplay.conversations.chats.read import MAX_FILE_BYTES
from roleplay.conversations.chats.write import FORMATS, SILLYTAVERN
from roleplay.conversations.services.chat_import import import_chat
from roleplay.conversations.services.group_import import import_group
from roleplay.models import Character, Conversation


class ChatImportForm(forms.Form):
    file = forms.FileField(
        label="Chat file",
        required=False,
        widget=forms.ClearableFileInput(attrs={"accept": ".jsonl,.json"}),
        help_text="A SillyTavern chat (.jsonl), an OpenAI message array, a ShareGPT "
        "conversation, an Agnai, RisuAI or CAI Tools chat export, a text-generation-webui "
        "chat log, or one row of a "
        "conversation dataset (LMSYS-Chat, PIPPA, Capybara), "
        "at most 32 MiB. Swipes become the replies' alternatives; "
        "hidden and narrator lines are left out.",
    )
    group = forms.FileField(
        label="SillyTavern group",
        required=False,
        widget=forms.ClearableFileInput(attrs={"accept": ".json"}),
        help_text="A group chat: the group's groups/<id>.json, with its chat file above (or "
        "alone, for a new chat). Its members are your characters by avatar file or name; "
        "the first one is the conversation's character.",
    )
    character = forms.ModelChoiceField(
        queryset=Character.objects.none(), required=False, help_text="Not for a group."
    )
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

    def clean(self):
        data = super().clean()
        if data.get("group"):
            return data
        for name in ("file", "character"):
            if not data.get(name) and name not in self.errors:
                self.add_error(name, "This field is required.")
        return data


@console_view(read=Role.OPERATOR)
def conversation_import(request):
    me = f"Me ({console_player_external_id(request.user)})"
    form = ChatImportForm(posted(request), files(request), tenant=request.tenant, me_label=me)
    if request.method == "POST" and form.is_valid():
        data, upload = form.cleaned_data, form.cleaned_data["file"]
        player = data["player"] or ensure_console_player(request.tenant, request.user)
        try:
            result = _imported(request.tenant, data, player)
        except DomainError as exc:
            where = "group" if data["group"] and not isinstance(exc, ChatFileError) else "file"
            form.add_error(where, f"{exc.message} ({exc.code})")
        else:
            flash.success(request, _said(result.report, upload.name if upload else ""))
            return redirect("conversation_detail", pk=result.conversation.pk)
    return render(request, "roleplay/conversations/import.html", {"form": form})


def _imported(tenant, data: dict, player):
    upload, group = data["file"], data["group"]
    chat = upload.read(MAX_FILE_BYTES + 1) if upload else None
    if group:
        return import_group(
            tenant, group.read(MAX_GROUP_BYTES + 1), chat, player=player,
            title=data["title"], file_name=upload.name if upload else "",
        )  # fmt: skip
    return import_chat(
        tenant, chat or b"", character=data["character"], player=player,
        title=data["title"], file_name=upload.name or "",
    )  # fmt: skip


def _said(report: dict, file_name: str) -> str:
    members = ", ".join(m["name"] for m in report.get("members", ()))
    group = f" with {members}" if members else ""
    if "stored_messages" not in report:
        return f"Imported the group{group}."
    skipped = sum(report["skipped"].values())
    return (
        f"Imported {report['stored_messages']} messages from {file_name}{group}"
        + (f" ({skipped} left out)" if skipped else "")
        + ("; the first reply is the character's opening." if report["opening"] == "greeting"
           else ".")
    )  # fmt: skip


@console_view()
def conversation_export(request, pk):
    """The conversation as a chat file to download (``?format=``, as the API's export)."""
    conversation = get_scoped_or_404(
        Conversation.objects.select_related("character", "player"), request.tenant, pk=pk
    )
    fmt = request.GET.get("format", SILLYTAVERN)
    chat = export_chat(request.tenant, conversation, fmt if fmt in FORMATS else SILLYTAVERN)
    return download(chat.data, chat.content_type, chat.filename)


@console_view()
def conversation_export_group(request, pk):
    """The conversation's group as SillyTavern's group file (as the API's ``export-group``)."""
    conversation = get_scoped_or_404(
        Conversation.objects.select_related("character"), request.tenant, pk=pk
    )
    group = export_group(conversation)
    return download(group.data, group.content_type, group.filename)
