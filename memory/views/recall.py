"""Console pages of memory recall: a playground that runs a player's recall for a query (what
``/api/v1/players/{id}/memory/recall`` answers) with the query's words marked in each hit,
and a conversation's pre-turn pack as the next turn would read it (its key, whether it is in
Redis, its age, items and the text the Actor would see). Both only read; viewers see them.

A player or conversation of another tenant (or none) is a form error on the playground and a
404 on the pack page, never a 500; a player is looked up in the signed-in tenant only.
"""

from __future__ import annotations

import re
import time

from django import forms
from django.shortcuts import render
from django.utils.dateparse import parse_datetime
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from console.access import console_view
from console.models import Player
from console.owners import conversation_model, conversation_or_404, owners
from console.scoping import is_uuid
from console.search.lexical import CJK_CLASS
from memory import packs
from memory.recall import search
from memory.turn_reads import turn_memory

PLAYERS_LISTED = 500  # the select's length; a player further down is still found by id
MAX_QUERY_CHARS = 4000  # as the API
MAX_MARKED_TERMS = 64
DEFAULT_K = 10

_TERM_RE = re.compile(rf"(?P<cjk>[{CJK_CLASS}]+)|(?P<word>[^\W_{CJK_CLASS}]+)")
_LATIN = rf"[^\W_{CJK_CLASS}]"  # a word character that is not CJK


def _patterns(query: str) -> list[re.Pattern[str]]:
    """One pattern per term of ``query``: a Latin word matches whole words only (not inside a
    longer word), a CJK run any substring of its bigrams (its character when alone)."""
    terms: dict[str, None] = {}
    for match in _TERM_RE.finditer(query):
        run = match.group("cjk")
        if run:
            pieces = [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
            terms.update(dict.fromkeys(re.escape(piece) for piece in pieces))
        else:
            word = re.escape(match.group("word"))
            terms[rf"(?<!{_LATIN}){word}(?!{_LATIN})"] = None
    return [re.compile(rf"(?=({term}))", re.IGNORECASE) for term in list(terms)[:MAX_MARKED_TERMS]]


def highlight(text: str, query: str) -> SafeString:
    """``text`` escaped, with every place a term of ``query`` matches wrapped in ``<mark>``
    (case-insensitive; overlapping or adjacent matches become one mark).

    Matches are found in the raw text and the markup is built from escaped pieces, so a mark
    can never fall inside an entity or a tag of the text."""
    marked = [False] * len(text)
    for pattern in _patterns(query):
        for match in pattern.finditer(text):
            start, end = match.span(1)
            marked[start:end] = [True] * (end - start)
    out, i = [], 0
    while i < len(text):
        j = i
        while j < len(text) and marked[j] == marked[i]:
            j += 1
        piece = escape(text[i:j])
        out.append(f"<mark>{piece}</mark>" if marked[i] else piece)
        i = j
    return mark_safe("".join(out))  # noqa: S308 - every piece of the text is escaped above


class RecallForm(forms.Form):
    player = forms.IntegerField(
        min_value=1, max_value=2**63 - 1, error_messages={"required": "Choose a player."}
    )
    query = forms.CharField(
        max_length=MAX_QUERY_CHARS, error_messages={"required": "Type what to recall."}
    )
    k = forms.IntegerField(
        required=False, min_value=1, max_value=search.MAX_K, initial=DEFAULT_K, label="Hits (k)"
    )
    conversation = forms.CharField(required=False, max_length=64, label="Conversation id")
    kinds = forms.MultipleChoiceField(
        required=False,
        choices=[(kind, kind) for kind in search.KINDS],
        widget=forms.CheckboxSelectMultiple,
        initial=list(search.KINDS),
    )

    def __init__(self, *args, tenant, **kwargs):
        super().__init__(*args, **kwargs)
        self.tenant = tenant

    def clean_player(self) -> Player:
        player = Player.objects.filter(tenant=self.tenant, pk=self.cleaned_data["player"]).first()
        if player is None:
            raise forms.ValidationError("No such player.")
        return player

    def clean_k(self) -> int:
        k = self.cleaned_data["k"]
        return DEFAULT_K if k is None else k

    def clean_kinds(self) -> tuple[str, ...]:
        return tuple(self.cleaned_data["kinds"]) or search.KINDS  # none ticked: both

    def clean(self):
        data = super().clean()
        wanted = (data.get("conversation") or "").strip()
        player = data.get("player")
        if not wanted:
            data["conversation"] = None
        elif not is_uuid(wanted):
            self.add_error("conversation", "This is not a conversation id.")
        else:
            conversation = (
                conversation_model().objects.filter(tenant=self.tenant, pk=wanted).first()
            )
            if conversation is None:
                self.add_error("conversation", "No such conversation.")
            elif player is not None and conversation.player_id != player.pk:
                self.add_error("conversation", "This conversation is not the player's.")
            else:
                data["conversation"] = conversation
        return data


@console_view()
def memory_recall(request):
    """The form; once a query is sent, the player's best hits with the query's words marked."""
    sent = "query" in request.GET or "player" in request.GET
    data = request.GET.copy()
    if not data.getlist("kinds"):  # none ticked (or a link without them): both kinds
        data.setlist("kinds", list(search.KINDS))
    form = RecallForm(data if sent else None, tenant=request.tenant)
    players = list(
        Player.objects.filter(tenant=request.tenant).order_by("external_id", "pk")[:PLAYERS_LISTED]
    )
    hits, result = [], None
    if sent and form.is_valid():
        cleaned = form.cleaned_data
        conversation = cleaned["conversation"]
        result = search.recall(
            request.tenant,
            cleaned["player"],
            search.RecallQuery(
                query=cleaned["query"],
                k=cleaned["k"],
                conversation_id=str(conversation.pk) if conversation else None,
                kinds=cleaned["kinds"],
            ),
        )
        known = set(
            str(pk)
            for pk in conversation_model()
            .objects.filter(
                tenant=request.tenant,
                pk__in=[
                    i["conversation_id"] for i in result["items"] if is_uuid(i["conversation_id"])
                ],
            )
            .values_list("pk", flat=True)
        )
        hits = [
            {
                **item,
                "marked": highlight(item["text"], cleaned["query"]),
                "conversation_known": item.get("conversation_id") in known,
                "created": _when(item.get("created_at")),
            }
            for item in result["items"]
        ]
    chosen = form["player"].value() if sent else None
    return render(
        request,
        "roleplay/recall/playground.html",
        {
            "form": form,
            "sent": sent,
            "players": players,
            "chosen_player": str(chosen or ""),
            "hits": hits,
            "degraded": bool(result and result.get("degraded")),
            "max_k": search.MAX_K,
        },
    )


def _when(value):
    """An ISO time as a datetime (as given when it is not one)."""
    try:
        return parse_datetime(value) or value
    except (TypeError, ValueError):
        return value


@console_view()
def conversation_memory_pack(request, pk):
    """The pre-turn pack the conversation's next turn would read: its key, status, age, items
    and text."""
    conversation = conversation_or_404(request, pk)
    memory = turn_memory(
        conversation.tenant_id,
        conversation.player_id,
        str(conversation.character_id),
        conversation.session_id,
    )
    owner = packs.owner_of(conversation)
    key = owner.key(memory.config, memory.owner_revision)
    status, pack = packs.read(key)
    age = None
    if pack is not None:
        try:
            age = round(max(time.time() - float(pack.get("built_at", 0)), 0.0), 1)
        except (TypeError, ValueError):
            age = None
    items = pack.get("items") if pack is not None else None
    items = items if isinstance(items, list) else []
    named = owners().conversation_labels(
        request.tenant, [i.get("conversation_id") for i in items if isinstance(i, dict)]
    )
    return render(
        request,
        "roleplay/recall/pack.html",
        {
            "conversation": conversation,
            "owner": owner,
            "revision": memory.owner_revision,
            "enabled": memory.config.enabled,
            "key": key,
            "status": status,
            "age": age,
            "items": [
                {**i, "conversation": named.get(str(i.get("conversation_id")))}
                for i in items
                if isinstance(i, dict)
            ],
            "text": (pack or {}).get("text") or "",
            "ttl": packs.TTL_S,
        },
    )
