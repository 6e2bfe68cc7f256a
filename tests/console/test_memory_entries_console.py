"""Console pages of memory entries: the list with its filters, the review queue with its
evidence, one entry's page, and what the Actor would see next turn. Operators write through
``memory.entries.services`` (compare-and-set on ``version``), viewers read, refused writes
are a flash message with a 4xx status that changes nothing, another tenant's entry or
player is a 404."""

from __future__ import annotations

import re
import time

import pytest

from memory import services as message_store
from memory.engine import preferences
from memory.entries import selectors as entry_reads
from memory.entries import services as entries
from memory.models import MemoryEntry, MemoryEvidence

pytestmark = pytest.mark.django_db

QUEUE = "/console/memory/queue/"


def _candidate(tenant, player, character, content="Keep replies short.", **fields):
    fields = {
        "kind": "preference",
        "scope": "persona",
        "category_key": "length",
        "character_id": str(character.pk),
        "status": "candidate",
        "origin": "rule",
    } | fields
    return entries.add_entry(tenant, player, content=content, **fields)


def _with_evidence(tenant, entry, session_id, text, span, before="", after=""):
    """Messages ``before``, ``text``, ``after`` in the session; evidence on ``text[span]``."""
    if before:
        message_store.save_message(tenant, session_id, role="assistant", content=before)
    message = message_store.save_message(tenant, session_id, role="user", content=text)
    if after:
        message_store.save_message(tenant, session_id, role="assistant", content=after)
    start, end = span
    return MemoryEvidence.objects.create(
        tenant=tenant,
        entry=entry,
        message=message,
        start=start,
        end=end,
        quote=text[start:end],
        role="user",
    )


def _entry_url(entry, tail=""):
    return f"/console/memory/entries/{entry.pk}/{tail}"


def _state(entry):
    row = MemoryEntry.objects.get(pk=entry.pk)
    return row.status, row.content, row.version, row.pinned, row.category_key, row.tags


# --- the list ---------------------------------------------------------------------------


def test_the_list_filters_and_links_each_entry(operator_client, tenant, player, character, foreign):
    from console.models import Player

    other = Player.objects.create(tenant=tenant, external_id="p-2", display_name="Bo")
    short = _candidate(tenant, player, character, "Keep replies short.")
    entries.add_entry(tenant, player, kind="fact", scope="shared", content="Lives by the sea.")
    bo = entries.add_entry(tenant, other, kind="preference", scope="shared", content="Use metric.")
    theirs = entries.add_entry(
        foreign["player"].tenant,
        foreign["player"],
        kind="fact",
        scope="shared",
        content="Foreign secret fact.",
    )

    page = operator_client.get("/console/memory/")
    html = page.content.decode()
    assert page.status_code == 200
    assert 'href="/console/memory/"' in html  # the navigation's "Memory"
    rows = re.findall(r'<tr id="entry-([0-9a-f-]+)">', html)
    assert rows[0] == str(bo.pk) and len(rows) == 3  # newest change first, own tenant only
    assert "Foreign secret fact." not in html and str(theirs.pk) not in html
    assert f'href="{_entry_url(short)}"' in html
    # The character by its name, not its id (which names nothing to a person).
    assert f"<td>{character.name}" in html and str(character.pk) not in html

    def shown(query):
        html = operator_client.get(f"/console/memory/?{query}").content.decode()
        return re.findall(r'<tr id="entry-([0-9a-f-]+)">', html)

    assert shown(f"player={other.pk}") == [str(bo.pk)]
    assert shown("kind=fact&scope=shared") != [] and str(short.pk) not in shown("kind=fact")
    assert shown("status=candidate") == [str(short.pk)]
    assert shown("q=SHORT") == [str(short.pk)]
    assert shown("scope=persona&q=metric") == []
    by_player = operator_client.get(f"/console/memory/?player={player.pk}").content.decode()
    assert f'href="/console/memory/players/{player.pk}/next-turn/"' in by_player
    # A filter value that is not one of the choices is ignored, and said so.
    bad = operator_client.get("/console/memory/?kind=bogus")
    assert bad.status_code == 200 and "Filter “kind” ignored" in bad.content.decode()
    # Another tenant's player is not found.
    assert operator_client.get(f"/console/memory/?player={foreign['player'].pk}").status_code == 404


# --- the queue --------------------------------------------------------------------------


def test_the_queue_shows_each_candidate_with_its_evidence(
    operator_client, tenant, player, character, conversation
):
    session = conversation.session_id
    first = _candidate(tenant, player, character, "Keep replies short.")
    text = "Hi <b>there</b>. Please keep replies short, ok?"
    start = text.index("keep")
    _with_evidence(
        tenant, first, session, text, (start, start + len("keep replies short")),
        before="Welcome to the lighthouse.", after="Of course.",
    )  # fmt: skip
    second = _candidate(tenant, player, character, "Call me Sam.", category_key="name")
    entries.add_entry(tenant, player, kind="fact", scope="shared", content="Active, not queued.")

    page = operator_client.get(QUEUE)
    html = page.content.decode()
    assert page.status_code == 200
    order = re.findall(r'id="candidate-([0-9a-f-]+)"', html)
    assert order == [str(first.pk), str(second.pk)]  # oldest first, candidates only
    assert "Active, not queued." not in html
    # The message text is escaped and the span marked.
    assert "Hi &lt;b&gt;there&lt;/b&gt;. Please <mark>keep replies short</mark>, ok?" in html
    assert "Welcome to the lighthouse." in html and "Of course." in html
    # Every action is a form with a button, and the page loads its keyboard script.
    assert html.count(f'action="/console/memory/queue/{first.pk}/"') == 3
    assert 'value="accept"' in html and 'value="reject"' in html and 'value="edit_accept"' in html
    assert "/static/js/memory-queue.js" in html and "<script>" not in html


def test_accept_goes_back_to_the_queue_on_the_next_candidate(
    operator_client, tenant, player, character
):
    first = _candidate(tenant, player, character, "Keep replies short.")
    second = _candidate(tenant, player, character, "Call me Sam.", category_key="name")
    res = operator_client.post(
        f"{QUEUE}{first.pk}/", {"action": "accept", "version": 1, "next": str(second.pk)}
    )
    assert res.status_code == 302
    assert res["Location"] == f"{QUEUE}?page=1#candidate-{second.pk}"
    assert _state(first)[:3] == ("active", "Keep replies short.", 2)
    res = operator_client.post(f"{QUEUE}{second.pk}/", {"action": "reject", "version": 1})
    assert res.status_code == 302 and _state(second)[0] == "rejected"
    html = operator_client.get(res["Location"]).content.decode()
    assert "Rejected" in html and 'id="queue-empty"' in html


def test_edit_and_accept_stores_the_new_text(operator_client, tenant, player, character):
    entry = _candidate(tenant, player, character, "Keep replies short.")
    res = operator_client.post(
        f"{QUEUE}{entry.pk}/",
        {"action": "edit_accept", "version": 1, "content": "Keep replies under 100 words."},
    )
    assert res.status_code == 302
    assert _state(entry)[:3] == ("active", "Keep replies under 100 words.", 3)


@pytest.mark.parametrize(
    ("body", "status", "shown"),
    [
        ({"action": "accept", "version": "abc"}, 422, "version must be the entry"),
        ({"action": "accept", "version": 7}, 409, "it is now at version 1"),
        ({"action": "approve", "version": 1}, 400, "Unknown action"),
        ({"action": "edit_accept", "version": 1, "content": "x" * 241}, 422, "at most 240"),
        ({"action": "edit_accept", "version": 1, "content": "   "}, 422, "non-blank"),
    ],
)
def test_bad_queue_actions_are_shown_and_change_nothing(
    operator_client, tenant, player, character, body, status, shown
):
    entry = _candidate(tenant, player, character)
    before = _state(entry)
    res = operator_client.post(f"{QUEUE}{entry.pk}/", body)
    html = res.content.decode()
    assert res.status_code == status and shown in html
    assert _state(entry) == before
    assert f'data-focus="{entry.pk}"' in html  # the queue again, on that candidate
    if "content" in body and body["content"].strip():
        assert body["content"] in html  # the typed text is kept


def test_accepting_what_is_no_longer_a_candidate_is_a_conflict(
    operator_client, tenant, player, character
):
    entry = _candidate(tenant, player, character)
    entries.accept(tenant, entry, 1)
    res = operator_client.post(f"{QUEUE}{entry.pk}/", {"action": "reject", "version": 2})
    assert res.status_code == 409 and "only a candidate can be rejected" in res.content.decode()
    assert _state(entry)[:3] == ("active", "Keep replies short.", 2)


# --- one entry --------------------------------------------------------------------------


def test_the_entry_page_edits_pins_and_deletes(
    operator_client, tenant, player, character, conversation
):
    entry = _candidate(tenant, player, character, "Keep replies short.")
    text = "keep replies short"
    _with_evidence(tenant, entry, conversation.session_id, text, (0, 4))
    page = operator_client.get(_entry_url(entry))
    html = page.content.decode()
    assert page.status_code == 200 and "<mark>keep</mark> replies short" in html
    res = operator_client.post(
        _entry_url(entry),
        {
            "action": "save",
            "version": 1,
            "content": "Short replies, please.",
            "category_key": "reply.length",
            "tags": "style, length, style",
        },
    )
    assert res.status_code == 302 and res["Location"] == _entry_url(entry)
    assert _state(entry) == (
        "candidate", "Short replies, please.", 2, False, "reply.length", ["style", "length"]
    )  # fmt: skip
    assert (
        operator_client.post(_entry_url(entry), {"action": "pin", "version": 2}).status_code == 302
    )
    assert _state(entry)[2:4] == (3, True)
    assert (
        operator_client.post(_entry_url(entry), {"action": "accept", "version": 3}).status_code
        == 302
    )
    assert _state(entry)[0] == "active"
    assert (
        operator_client.post(_entry_url(entry), {"action": "unpin", "version": 4}).status_code
        == 302
    )
    assert _state(entry)[2:4] == (5, False)

    confirm = operator_client.get(_entry_url(entry, "delete/"))
    assert confirm.status_code == 200 and 'id="entry-delete-confirm"' in confirm.content.decode()
    stale = operator_client.post(_entry_url(entry, "delete/"), {"version": 4})
    assert stale.status_code == 409 and MemoryEntry.objects.filter(pk=entry.pk).exists()
    res = operator_client.post(_entry_url(entry, "delete/"), {"version": 5})
    assert res.status_code == 302 and res["Location"] == "/console/memory/"
    assert not MemoryEntry.objects.filter(pk=entry.pk).exists()
    assert not MemoryEvidence.objects.exists()


def test_a_stale_save_is_a_conflict_that_keeps_the_text(operator_client, tenant, player, character):
    entry = _candidate(tenant, player, character, "Keep replies short.")
    entries.update_entry(tenant, entry, 1, content="Changed by someone else.")
    res = operator_client.post(
        _entry_url(entry),
        {"action": "save", "version": 1, "content": "My own words.", "category_key": "length"},
    )
    html = res.content.decode()
    assert res.status_code == 409
    assert "Someone changed this entry meanwhile (it is now at version 2)" in html
    assert ">My own words.</textarea>" in html and 'name="version" value="2"' in html
    assert _state(entry)[1:3] == ("Changed by someone else.", 2)


@pytest.mark.parametrize(
    ("body", "status", "shown"),
    [
        ({"action": "save", "version": "1.5", "content": "ok"}, 422, "version must be"),
        ({"action": "explode", "version": 1}, 400, "Unknown action"),
        ({"action": "save", "version": 1, "content": "y" * 500}, 422, "at most 240"),
        ({"action": "save", "version": 1, "content": "ok", "category_key": "Bad Key"}, 422, "a-z"),
        ({"action": "save", "version": 1, "content": "ok", "tags": "t" * 41}, 422, "a tag is"),
        ({"action": "save", "version": 1, "content": "ok", "tags": "a\x00b"}, 422, "NUL"),
        ({"action": "save", "version": 1, "content": "o\x00k"}, 422, "NUL"),
    ],
)
def test_bad_entry_writes_are_shown_and_change_nothing(
    operator_client, tenant, player, character, body, status, shown
):
    entry = _candidate(tenant, player, character)
    before = _state(entry)
    res = operator_client.post(_entry_url(entry), body)
    assert res.status_code == status and shown in res.content.decode()
    assert _state(entry) == before


def test_a_taken_category_is_a_conflict(operator_client, tenant, player, character):
    active = _candidate(tenant, player, character, "Be brief.", status="active")
    other = _candidate(
        tenant, player, character, "Use metric.", category_key="units", status="active"
    )
    res = operator_client.post(
        _entry_url(other),
        {"action": "save", "version": 1, "content": "Use metric.", "category_key": "length"},
    )
    assert res.status_code == 409 and "another active entry holds this category" in (
        res.content.decode()
    )
    assert _state(other)[4] == "units" and _state(active)[0] == "active"


# --- viewers and other tenants ------------------------------------------------------------


def test_a_viewer_reads_every_page_and_writes_nothing(
    viewer_client, tenant, player, character, conversation
):
    entry = _candidate(tenant, player, character)
    _with_evidence(tenant, entry, conversation.session_id, "keep it short", (0, 4))
    for url in ("/console/memory/", QUEUE, _entry_url(entry)):
        page = viewer_client.get(url)
        html = page.content.decode()
        assert page.status_code == 200, url
        assert 'value="accept"' not in html and 'id="entry-save"' not in html, url
    next_turn = viewer_client.get(f"/console/memory/players/{player.pk}/next-turn/")
    assert next_turn.status_code == 200
    before = _state(entry)
    posts = [
        (f"{QUEUE}{entry.pk}/", {"action": "accept", "version": 1}),
        (f"{QUEUE}{entry.pk}/", {"action": "reject", "version": 1}),
        (_entry_url(entry), {"action": "save", "version": 1, "content": "mine"}),
        (_entry_url(entry), {"action": "pin", "version": 1}),
        (_entry_url(entry, "delete/"), {"version": 1}),
        ("/console/memory/", {}),
        (QUEUE, {}),
    ]
    for url, body in posts:
        assert viewer_client.post(url, body).status_code == 403, url
    assert viewer_client.get(_entry_url(entry, "delete/")).status_code == 403
    assert _state(entry) == before


def test_another_tenants_entry_or_player_is_not_found(operator_client, foreign):
    other = foreign["player"]
    entry = entries.add_entry(
        other.tenant, other, kind="preference", scope="shared", content="Theirs.",
        status="candidate",
    )  # fmt: skip
    for url in (_entry_url(entry), _entry_url(entry, "delete/")):
        assert operator_client.get(url).status_code == 404, url
    for url, body in [
        (f"{QUEUE}{entry.pk}/", {"action": "accept", "version": 1}),
        (_entry_url(entry), {"action": "pin", "version": 1}),
        (_entry_url(entry, "delete/"), {"version": 1}),
    ]:
        assert operator_client.post(url, body).status_code == 404, url
    assert _state(entry)[:4] == ("candidate", "Theirs.", 1, False)
    assert operator_client.get(f"/console/memory/players/{other.pk}/next-turn/").status_code == 404
    assert "Theirs." not in operator_client.get(QUEUE).content.decode()


# --- next turn --------------------------------------------------------------------------


def test_next_turn_lists_the_engines_choice_and_why_the_rest_is_left_out(
    operator_client, tenant, player, character, conversation
):
    from roleplay.models import Character

    stranger = Character.objects.create(tenant=tenant, name="Other")
    me, session = str(character.pk), conversation.session_id

    def add(content, scope, category="", **extra):
        fields = {"character_id": me} if scope == "persona" else {}
        fields |= {"session_id": session} if scope == "session" else {}
        return entries.add_entry(
            tenant, player, kind="preference", scope=scope, content=content,
            category_key=category, **(fields | extra),
        )  # fmt: skip

    shared_name = add("Call me Samuel.", "shared", "name")
    session_name = add("Call me Sam.", "session", "name")
    pinned = add("Use metric units.", "shared", "units", pinned=True)
    persona = add("Speak in rhyme." + " Always." * 11, "persona", "style")  # 103 characters
    elsewhere = add("Whisper.", "persona", "voice", character_id=str(stranger.pk))
    fillers = [add(f"Filler {n}.", "shared", f"f{n}") for n in range(3)]
    # Newer, so ranked before the fillers: the newer fits, the older passes 600 characters.
    older = add("M" * 240, "shared", "long1")
    newer = add("L" * 240, "shared", "long2")

    url = f"/console/memory/players/{player.pk}/next-turn/?conversation={conversation.pk}"
    page = operator_client.get(url)
    html = page.content.decode()
    assert page.status_code == 200

    items = entry_reads.selectable_items(tenant, player.id)
    expected = preferences.select(items, character_id=me, session_id=session, now=time.time())
    chosen = re.findall(r'<tr id="chosen-([0-9a-f-]+)">', html)
    assert chosen == [entry.item.id for entry in expected]
    assert chosen[:3] == [str(session_name.pk), str(persona.pk), str(pinned.pk)]
    assert len(chosen) == 5

    def why(entry):
        row = re.search(rf'<tr id="left-out-{entry.pk}">.*?</tr>', html, re.S)
        assert row, entry.content
        return re.search(r'<td class="reason">(.*?)</td>', row.group(0), re.S).group(1)

    assert "category “name” is taken by the better-ranked session entry" in why(shared_name)
    assert why(elsewhere) == "a persona entry of another character"
    assert chosen[3:] == [str(newer.pk), str(fillers[2].pk)]
    assert why(older) == "240 characters do not fit in the 228 left of 600"
    assert why(fillers[1]) == why(fillers[0]) == "the cap of 5 entries is reached"
    block = re.search(r'<pre id="next-turn-block">(.*?)</pre>', html, re.S).group(1)
    assert block.startswith("The user&#x27;s stated preferences") and "\n- Call me Sam.\n" in block
    assert '<span class="badge">pinned</span>' in html

    # Without a conversation or character, only shared entries apply.
    bare = operator_client.get(f"/console/memory/players/{player.pk}/next-turn/").content.decode()
    assert "a session entry: no conversation chosen" in bare
    assert "a persona entry: no character chosen" in bare
    # Another tenant's conversation or character in the form is not found.
    assert operator_client.get(f"{url[:-36]}{'0' * 8}-0000-0000-0000-{'0' * 12}").status_code == 404


def test_the_players_list_links_to_the_next_turn(operator_client, player):
    html = operator_client.get("/console/players/").content.decode()
    assert f'href="/console/memory/players/{player.pk}/next-turn/"' in html
