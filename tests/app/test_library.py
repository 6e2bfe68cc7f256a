"""The library: what a player sees, PostgreSQL full-text search, tags, the age gate, and
"Start chat"."""

from __future__ import annotations

import pytest
from django.utils import timezone

from roleplay.models import Conversation

pytestmark = pytest.mark.django_db


def _names(response) -> set[str]:
    return {c.name for c in response.context["page"].object_list}


def _confirm_age(client) -> None:
    type(client.account).objects.filter(pk=client.account.pk).update(
        age_confirmed_at=timezone.now()
    )


def test_only_listed_characters_and_ones_own_are_browsable(
    player_client, other_client, make_character
):
    from roleplay.library.services import create_own_character

    make_character("Listed Lyra")
    make_character("Unlisted Uma", visibility="unlisted")
    make_character("Private Pia", visibility="private")
    account = player_client.account
    create_own_character(account.tenant, account.player, name="My Mona")
    create_own_character(account.tenant, other_client.account.player, name="Their Theo")

    response = player_client.get("/app/library/")
    assert response.status_code == 200
    assert _names(response) == {"Listed Lyra", "My Mona"}


def test_unlisted_opens_by_id_private_and_others_are_not_found(
    player_client, other_client, make_character
):
    from roleplay.library.services import create_own_character

    unlisted = make_character("Unlisted Uma", visibility="unlisted")
    private = make_character("Private Pia", visibility="private")
    theirs = create_own_character(
        player_client.account.tenant, other_client.account.player, name="Their Theo"
    )
    assert player_client.get(f"/app/characters/{unlisted.pk}/").status_code == 200
    for hidden in (private, theirs):
        assert player_client.get(f"/app/characters/{hidden.pk}/").status_code == 404
        assert player_client.get(f"/app/characters/{hidden.pk}/avatar/").status_code == 404
        assert player_client.post(f"/app/characters/{hidden.pk}/start/").status_code == 404
    assert not Conversation.objects.exists()


def test_search_over_name_tags_and_creator_notes(player_client, make_character):
    make_character("Captain Vex", tags=["pirate", "scifi"])
    make_character("Morgana", creator_notes="A witch of the northern marsh.")
    make_character("Sir Aldric", tags=["fantasy"], creator_notes="A knight sworn to a dragon.")

    def search(q: str, **extra) -> set[str]:
        return _names(player_client.get("/app/library/", {"q": q, **extra}))

    assert search("captain") == {"Captain Vex"}
    assert search("pirate") == {"Captain Vex"}  # a tag
    assert search("witch") == {"Morgana"}  # creator notes
    assert search("dragon or witch") == {"Morgana", "Sir Aldric"}  # websearch syntax
    assert search("knight -dragon") == set()
    assert search("", tag="fantasy") == {"Sir Aldric"}
    assert search("knight", tag="scifi") == set()


def test_a_name_match_ranks_before_a_note_match(player_client, make_character):
    make_character("Dragon Rider")
    make_character("Beth", creator_notes="She once met a dragon.")
    rows = list(player_client.get("/app/library/", {"q": "dragon"}).context["page"].object_list)
    assert [c.name for c in rows] == ["Dragon Rider", "Beth"]


@pytest.mark.parametrize(
    "query", ['"', "&|!", "a:*", "(((", "-", "x" * 5000, "\x00evil", "' or 1=1 --", "龙"]
)
def test_any_query_is_a_page_not_an_error(player_client, make_character, query):
    make_character("Quiet One")
    response = player_client.get("/app/library/", {"q": query, "tag": query, "page": "x"})
    assert response.status_code == 200


def test_chinese_names_are_found_by_a_substring(player_client, make_character):
    make_character("小龙女", tags=["武侠"])
    make_character("Plain")
    assert _names(player_client.get("/app/library/", {"q": "龙女"})) == {"小龙女"}


def test_chinese_terms_are_found_in_tags_and_creator_notes_too(player_client, make_character):
    make_character("老人", tags=["奇幻"], creator_notes="一位守护灯塔的老人，熟悉每一块礁石。")
    make_character("Vex", tags=["科幻", "pirate"], creator_notes="Captain of the 星辰号.")
    make_character("Plain", creator_notes="Nothing here.")

    def search(q: str) -> set[str]:
        return _names(player_client.get("/app/library/", {"q": q}))

    assert search("灯塔") == {"老人"}  # in the creator notes
    assert search("奇幻") == {"老人"}  # a tag
    assert search("星辰") == {"Vex"}  # within an English note
    assert search("科幻 pirate") == {"Vex"}  # every term, each anywhere
    assert search("灯塔 pirate") == set()
    assert search("%") == set() and search("_") == set()  # no pattern characters


def test_pages_of_the_library(player_client, make_character):
    for index in range(30):
        make_character(f"Char {index:02d}")
    first = player_client.get("/app/library/")
    second = player_client.get("/app/library/", {"page": 2})
    assert len(first.context["page"].object_list) == 24
    assert len(second.context["page"].object_list) == 6
    assert not _names(first) & _names(second)


def test_adult_characters_wait_for_the_age_confirmation(player_client, make_character):
    adult = make_character("Nocturne", content_rating="nsfw")
    make_character("Daylight")
    assert _names(player_client.get("/app/library/")) == {"Daylight"}
    page = player_client.get(f"/app/characters/{adult.pk}/")
    assert page.status_code == 403 and b"age-gate" in page.content
    assert player_client.post(f"/app/characters/{adult.pk}/start/").status_code == 302
    assert not Conversation.objects.exists()

    response = player_client.post("/app/account/age/", {"back": f"/app/characters/{adult.pk}/"})
    assert response["Location"] == f"/app/characters/{adult.pk}/"
    assert _names(player_client.get("/app/library/")) == {"Daylight", "Nocturne"}
    assert player_client.get(f"/app/characters/{adult.pk}/").status_code == 200


def test_start_chat_with_a_persona_and_an_opening(player_client, make_character):
    from roleplay.players.services.personas import create_persona

    account = player_client.account
    persona = create_persona(account.tenant, player=account.player, name="Wanderer")
    character = make_character("Greeter", alternate_greetings=["Second hello."])
    page = player_client.get(f"/app/characters/{character.pk}/")
    assert b"Second hello." in page.content and b"Wanderer" in page.content

    response = player_client.post(
        f"/app/characters/{character.pk}/start/", {"persona": str(persona.pk), "opening": "1"}
    )
    conversation = Conversation.objects.get()
    assert response["Location"] == f"/app/chats/{conversation.pk}/"
    assert conversation.player_id == account.player_id
    assert conversation.persona_id == persona.pk and conversation.greeting_index == 1
    chat = player_client.get(response["Location"])
    assert chat.status_code == 200 and b"Second hello." in chat.content


def test_start_chat_refuses_a_foreign_persona_and_an_unknown_opening(
    player_client, other_client, make_character
):
    from roleplay.players.services.personas import create_persona

    theirs = create_persona(
        other_client.account.tenant, player=other_client.account.player, name="Not yours"
    )
    character = make_character("Greeter")
    for body in ({"persona": str(theirs.pk)}, {"opening": "7"}, {"opening": "x"}):
        response = player_client.post(f"/app/characters/{character.pk}/start/", body)
        assert response.status_code == 302
        assert response["Location"] == f"/app/characters/{character.pk}/"
    assert not Conversation.objects.exists()


def test_home_shows_recent_chats_and_new_characters(player_client, make_character):
    character = make_character("Newest Nova")
    player_client.post(f"/app/characters/{character.pk}/start/")
    home = player_client.get("/app/")
    assert home.status_code == 200
    assert [c.name for c in home.context["highlights"]] == ["Newest Nova"]
    assert len(home.context["chats"]) == 1
