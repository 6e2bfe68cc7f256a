"""Reads of the player app: which characters a player may see, the library's search, and
"My chats" in one query.

A player sees the operators' listed characters and their own; an unlisted one opens by its
id but is never listed; a private one of the operators, or another player's, is absent (a
404). ``nsfw`` characters are for players who confirmed their age: the others see none in
the library and an age prompt on the character's page.
"""

from __future__ import annotations

from django.contrib.postgres.search import SearchQuery, SearchRank
from django.core.cache import cache
from django.db.models import Count, F, Func, OuterRef, Q, Subquery, TextField
from django.db.models.functions import Cast, Coalesce, JSONObject, Left

from memory.models import Message
from roleplay.characters.selectors import without_avatars
from roleplay.models import (
    Character,
    ContentRating,
    Conversation,
    ConversationStatus,
    Visibility,
)

MAX_QUERY_CHARS = 200
MAX_TAG_CHARS = 64
MAX_TERMS = 8  # of a query without word breaks, each matched as a substring


def reachable(tenant, player):
    """Characters ``player`` may open by id: listed or unlisted operators' ones, their own."""
    shown = Q(owner_player__isnull=True, visibility__in=(Visibility.LISTED, Visibility.UNLISTED))
    return Character.objects.filter(tenant=tenant).filter(shown | Q(owner_player=player))


def listed(tenant, player, *, adult: bool):
    """The library: listed characters and the player's own; ``nsfw`` only for ``adult``."""
    rows = Character.objects.filter(tenant=tenant).filter(
        Q(visibility=Visibility.LISTED) | Q(owner_player=player)
    )
    return rows if adult else rows.exclude(content_rating=ContentRating.NSFW)


def own_characters(tenant, player):
    return without_avatars(Character.objects.filter(tenant=tenant, owner_player=player))


def clean_query(text: str | None, limit: int = MAX_QUERY_CHARS) -> str:
    """A search text as PostgreSQL takes it: no NUL, no surrounding space, bounded."""
    return (text or "").replace("\x00", "")[:limit].strip()


def search(tenant, player, *, adult: bool, query: str = "", tag: str = ""):
    """The library's page rows, best match first (by name when there is no query).
    ``websearch`` syntax (quotes, ``or``, ``-word``) never fails: any text is a query."""
    rows = without_avatars(listed(tenant, player, adult=adult)).only(
        "id", "name", "tags", "creator", "creator_notes", "content_rating", "owner_player_id"
    )
    query, tag = clean_query(query), clean_query(tag, MAX_TAG_CHARS)
    if tag:
        rows = rows.filter(tags__contains=[tag])
    if not query:
        return rows.order_by("name", "id")
    words = SearchQuery(query, search_type="websearch", config="simple")
    matched = Q(search=words)
    if not query.isascii():  # no word breaks in Chinese or Japanese: substrings too
        rows = rows.annotate(tags_text=Cast("tags", TextField()))
        matched |= _every_term_within(query.split()[:MAX_TERMS])
    return (
        rows.filter(matched)
        .annotate(rank=SearchRank(F("search"), words))
        .order_by("-rank", "name", "id")
    )


def _every_term_within(terms: list[str]) -> Q:
    """Each of ``terms`` a substring of the name, a tag or the creator notes (a text
    without word breaks, where the full-text vector holds whole runs of characters)."""
    found = Q()
    for term in terms:
        found &= (
            Q(name__icontains=term)
            | Q(tags_text__icontains=term)
            | Q(creator_notes__icontains=term)
        )
    return found


def top_tags(tenant, *, adult: bool, limit: int = 24) -> list[str]:
    """The library's most used tags among listed characters, for its filter chips. Counted
    over every listed character, so kept a minute in the cache: a new tag shows up soon,
    not at once."""
    key = f"library-tags:{tenant.pk}:{int(adult)}:{limit}"
    found = cache.get(key)
    if found is None:
        found = _count_tags(tenant, adult=adult, limit=limit)
        cache.set(key, found, TAGS_SECONDS)
    return found


def _count_tags(tenant, *, adult: bool, limit: int) -> list[str]:
    tag = Func(F("tags"), function="jsonb_array_elements_text", output_field=TextField())
    rows = Character.objects.filter(tenant=tenant, visibility=Visibility.LISTED)
    if not adult:
        rows = rows.exclude(content_rating=ContentRating.NSFW)
    counted = rows.annotate(tag=tag).values("tag").annotate(n=Count("id"))
    return [row["tag"] for row in counted.order_by("-n", "tag")[:limit]]


TAGS_SECONDS = 60


def my_chats(tenant, player, *, archived: bool = False):
    """The player's conversations, the latest message first, each with its character and
    ``last_at`` and ``last`` (the last message's start and role): one query, whatever the
    number (each last message comes by the message store's history index).
    :func:`with_unread` marks a page's rows."""
    last = Message.objects.filter(
        tenant_id=OuterRef("tenant_id"),
        session_id=Cast(OuterRef("pk"), TextField()),
        archived=False,
        role__in=("user", "assistant"),
    ).order_by("-ts")
    status = ConversationStatus.ARCHIVED if archived else ConversationStatus.ACTIVE
    preview = JSONObject(text=Left("content", PREVIEW_CHARS), role="role")
    return (
        Conversation.objects.filter(tenant=tenant, player=player, status=status)
        .select_related("character")
        .only(*CHAT_COLUMNS)
        .annotate(
            last=Subquery(last.values(json=preview)[:1]),
            last_at=Subquery(last.values("created_at")[:1]),
        )
        .annotate(active_at=Coalesce("last_at", "created_at"))
        .order_by("-active_at", "-id")
    )


def with_unread(chats) -> list[Conversation]:
    """The rows with ``unread``: the last message is a reply the player has not read."""
    rows = list(chats)
    for chat in rows:
        chat.last = chat.last or {}
        read = chat.player_read_at
        newer = chat.last_at is not None and (read is None or chat.last_at > read)
        chat.unread = newer and chat.last.get("role") == "assistant"
    return rows


CHAT_COLUMNS = (
    "id",
    "tenant_id",
    "title",
    "status",
    "player_read_at",
    "created_at",
    "character__id",
    "character__name",
    "character__avatar_content_type",
)
PREVIEW_CHARS = 160


def my_conversation(tenant, player, conversation_id):
    """The player's own conversation, or None (another player's is None too)."""
    return (
        Conversation.objects.select_related("tenant", "character", "player", "persona")
        .filter(tenant=tenant, player=player, pk=conversation_id)
        .first()
    )
