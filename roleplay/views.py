"""Console pages of the runtime: characters, conversations and model configs.

Thin views: forms validate the input, ``roleplay.services`` writes (the rules that span
fields or rows live there, and their errors are shown next to the form's fields),
``roleplay.selectors`` reads, and :func:`console.access.console_view` decides who may do what
(viewers read, operators edit content, admins also manage model configs). Every object is
fetched with ``get_scoped_or_404``, so another tenant's id is a 404. The player chat page
lives in ``views_play``.
"""

from __future__ import annotations

from django.contrib import messages as flash
from django.core.paginator import Paginator
from django.db import transaction
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.access import console_view, files, has_role, posted
from console.models import Player, Role
from console.scoping import get_scoped_or_404, scoped
from console.services import console_player_external_id, ensure_console_player
from roleplay import selectors
from roleplay.characters import selectors as characters_read
from roleplay.characters.selectors import greeting_for
from roleplay.characters.services import avatars, characters
from roleplay.characters.views import character_page
from roleplay.conversations.services import conversations
from roleplay.errors import Duplicate, FieldErrors, TokenizerUnavailable
from roleplay.forms import (
    NEW_CONVERSATION_FIELDS,
    CharacterForm,
    ModelConfigForm,
    NewConversationForm,
)
from roleplay.llm.configs import services as model_configs
from roleplay.llm.configs.check import run_config_test
from roleplay.llm.configs.selectors import api_key_status, cache_stats, model_config_rows
from roleplay.models import Character, Conversation, ConversationStatus, ModelConfig
from roleplay.note_forms import AuthorNoteForm
from roleplay.players.selectors import persona_for, player_personas

PAGE_SIZE = 50


def _read_only(form) -> None:
    """Show a form to someone who may not save it: every field disabled."""
    for field in form.fields.values():
        field.disabled = True


def _write(form, service, *args, **fields):
    """Call the service with ``fields`` (default: the form's data); its field errors and
    duplicates are shown next to the form's fields. Returns what the service returned, or
    None if it refused."""
    try:
        return service(*args, **(fields or form.cleaned_data))
    except FieldErrors as exc:
        for field, messages in exc.by_field.items():
            for message in messages:
                form.add_error(field if field in form.fields else None, message)
    except Duplicate as exc:
        field = exc.details.get("field")
        form.add_error(field if field in form.fields else None, exc.message)
    except TokenizerUnavailable as exc:  # a model config's tokenizer that does not load
        form.add_error("tokenizer" if "tokenizer" in form.fields else None, exc.message)
    return None


def _confirm(request, *, title: str, message: str, cancel_url: str, warning: str = ""):
    return render(
        request,
        "console/confirm.html",
        {"title": title, "message": message, "warning": warning, "cancel_url": cancel_url},
    )


# --- characters ------------------------------------------------------------------------


@console_view()
def character_list(request):
    query = request.GET.get("q", "").strip()
    rows = characters_read.character_list(request.tenant, query)
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "roleplay/characters/list.html",
        {"characters": page, "page": page, "query": query},
    )


@console_view(read=Role.OPERATOR)
def character_create(request):
    form = CharacterForm(posted(request), files(request), tenant=request.tenant)
    if request.method == "POST" and form.is_valid():
        character = _save_character(form, characters.create_character, request.tenant)
        if character is not None:
            flash.success(request, f"Character “{character.name}” created.")
            return redirect("character_edit", pk=character.pk)
    return render(request, "roleplay/characters/form.html", {"form": form, "character": None})


@console_view()
def character_edit(request, pk):
    character = get_scoped_or_404(Character, request.tenant, pk=pk)
    form = CharacterForm(posted(request), files(request), instance=character, tenant=request.tenant)
    if request.method == "POST" and form.is_valid():
        if _save_character(form, characters.update_character, character) is not None:
            flash.success(request, f"Character “{character.name}” saved.")
            return redirect("character_edit", pk=character.pk)
    if not request.membership.can_edit():
        _read_only(form)
    return render(request, "roleplay/characters/form.html", character_page(character, form))


def _save_character(form, service, *args):
    """The character's fields and its avatar in one transaction: a refused field saves no
    image, and the image (already decoded by the form) cannot fail after the fields."""
    with transaction.atomic():
        character = _write(form, service, *args, **form.character_fields())
        if character is None:
            transaction.set_rollback(True)
            return None
        if form.cleaned_data.get("avatar"):
            avatars.store_png(character, form.cleaned_data["avatar"])
        elif form.cleaned_data.get("remove_avatar"):
            avatars.clear_avatar(character)
    return character


@console_view(read=Role.OPERATOR)
def character_delete(request, pk):
    character = get_scoped_or_404(Character, request.tenant, pk=pk)
    if request.method == "POST":
        gone = characters.delete_character(character)
        flash.success(request, f"Character “{character.name}” and {gone} conversation(s) deleted.")
        return redirect("characters")
    count = scoped(Conversation, request.tenant).filter(character=character).count()
    return _confirm(
        request,
        title=f"Delete character “{character.name}”?",
        message="The character is deleted for good.",
        warning=f"Its {count} conversation(s) and their messages are deleted with it."
        if count
        else "",
        cancel_url=f"/console/characters/{character.pk}/",
    )


# --- conversations ---------------------------------------------------------------------


@console_view()
def conversation_list(request):
    status = request.GET.get("status") or None
    if status not in (None, *ConversationStatus.values):
        status = None
    character = None
    if request.GET.get("character"):
        character = get_scoped_or_404(Character, request.tenant, pk=request.GET["character"])
    rows = selectors.conversation_list(request.tenant, character=character, status=status)
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "roleplay/conversations/list.html",
        {
            "page": page,
            "status": status,
            "statuses": ConversationStatus.values,
            "character": character,
        },
    )


@console_view(read=Role.OPERATOR)
def conversation_create(request):
    me = f"Me ({console_player_external_id(request.user)})"
    # Query values preselect (``?character=`` from a character's page); the character and
    # player decide the openings and personas offered, and the page asks itself again
    # through htmx (with the form's values) when either changes.
    initial = {}
    if request.method == "GET":
        initial = {
            name: request.GET[name] for name in NEW_CONVERSATION_FIELDS if name in request.GET
        }
    mine = (
        scoped(Player, request.tenant)
        .filter(external_id=console_player_external_id(request.user))
        .first()
    )
    form = NewConversationForm(
        posted(request), tenant=request.tenant, me_label=me, me=mine, initial=initial
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        player = data["player"] or ensure_console_player(request.tenant, request.user)
        conversation = _write(
            form, conversations.start_conversation, request.tenant, **{**data, "player": player}
        )
        if conversation is not None:
            flash.success(request, "Conversation started.")
            return redirect("conversation_detail", pk=conversation.pk)
    return render(request, "roleplay/conversations/new.html", {"form": form})


@console_view()
def conversation_detail(request, pk):
    conversation = get_scoped_or_404(
        Conversation.objects.select_related("character", "player", "model_config"),
        request.tenant,
        pk=pk,
    )
    transcript = selectors.conversation_transcript(request.tenant, conversation)
    return render(
        request,
        "roleplay/conversations/detail.html",
        {
            "conversation": conversation,
            "greeting": greeting_for(conversation),
            "persona": persona_for(conversation),
            "personas": player_personas(request.tenant, conversation.player),
            "transcript": transcript,
            "rows": [(m, transcript.turn_of_message.get(str(m.id))) for m in transcript.messages],
            "note_form": _note_form(conversation),
        },
    )


def _note_form(conversation: Conversation, data=None) -> AuthorNoteForm:
    form = AuthorNoteForm(data, prefix="note")
    form.show_note(conversation.author_note)
    return form


@console_view(read=Role.OPERATOR)
@require_POST
def conversation_author_note(request, pk):
    """Set (or clear, with no content) the conversation's own author's note."""
    conversation = get_scoped_or_404(Conversation, request.tenant, pk=pk)
    form = _note_form(conversation, request.POST)
    if form.is_valid() and _write(
        form, conversations.update_conversation, conversation, author_note=form.author_note()
    ):
        note = "saved" if conversation.author_note else "cleared: the character's note applies"
        flash.success(request, f"The conversation's author's note is {note}.")
    else:
        problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items())
        flash.error(request, f"The author's note is not saved ({problems}).")
    return redirect("conversation_detail", pk=conversation.pk)


# --- model configs (admins write; everyone reads) ----------------------------------------


@console_view()
def model_config_list(request):
    query = request.GET.get("q", "").strip()
    return render(
        request,
        "roleplay/model_configs/list.html",
        {"rows": model_config_rows(request.tenant, query), "query": query},
    )


@console_view(read=Role.ADMIN, write=Role.ADMIN)
def model_config_create(request):
    form = ModelConfigForm(posted(request), tenant=request.tenant)
    if request.method == "POST" and form.is_valid():
        config = _write(form, model_configs.create_model_config, request.tenant)
        if config is not None:
            flash.success(request, f"Model config “{config.name}” created.")
            return redirect("model_configs")
    context = {"form": form, "config": None}
    return render(request, "roleplay/model_configs/form.html", context, status=_refused(request))


@console_view(write=Role.ADMIN)
def model_config_edit(request, pk):
    config = get_scoped_or_404(ModelConfig, request.tenant, pk=pk)
    form = ModelConfigForm(posted(request), instance=config, tenant=request.tenant)
    if request.method == "POST" and form.is_valid():
        if _write(form, model_configs.update_model_config, config) is not None:
            flash.success(request, f"Model config “{config.name}” saved.")
            return redirect("model_configs")
    if not has_role(request.membership, Role.ADMIN):
        _read_only(form)
    return render(
        request,
        "roleplay/model_configs/form.html",
        {
            "form": form,
            "config": config,
            "key_status": api_key_status(config),
            "cache": cache_stats(request.tenant, [config.pk])[config.pk],
        },
        status=_refused(request),
    )


def _refused(request) -> int:
    """A model config form posted and shown again is a refused write: 400 (its field errors
    on the page), as REST answers the same values."""
    return 400 if request.method == "POST" else 200


@console_view(read=Role.ADMIN, write=Role.ADMIN)
def model_config_delete(request, pk):
    config = get_scoped_or_404(ModelConfig, request.tenant, pk=pk)
    if request.method == "POST":
        model_configs.delete_model_config(config)
        flash.success(request, f"Model config “{config.name}” deleted.")
        return redirect("model_configs")
    warning = (
        "It is the tenant's default: replies will use the environment's LLM_* settings "
        "until another config is made the default."
        if config.is_default
        else ""
    )
    return _confirm(
        request,
        title=f"Delete model config “{config.name}”?",
        message="Characters and conversations that use it fall back to the tenant default.",
        warning=warning,
        cancel_url="/console/models/",
    )


@console_view(write=Role.ADMIN)
@require_POST
def model_config_make_default(request, pk):
    config = get_scoped_or_404(ModelConfig, request.tenant, pk=pk)
    model_configs.make_default_model_config(config)
    flash.success(request, f"“{config.name}” is now the default model config.")
    return redirect("model_configs")


@console_view(write=Role.OPERATOR)
@require_POST
def model_config_test(request, pk):
    """One short completion; htmx swaps the result fragment into the list row, a plain
    POST (no JavaScript) gets a full page with the same fragment."""
    config = get_scoped_or_404(ModelConfig, request.tenant, pk=pk)
    result = run_config_test(request.tenant, config)
    context = {"config": config, "result": result}
    if getattr(request, "htmx", False):
        return render(request, "roleplay/model_configs/_test_result.html", context)
    return render(request, "roleplay/model_configs/test.html", context)
