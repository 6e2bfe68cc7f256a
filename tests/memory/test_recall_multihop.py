"""Recall over real PostgreSQL for questions about people by relation, about time, and
about several things: the rules of ``engine.entities``, ``engine.timerange``,
``engine.decompose`` and ``engine.fusion`` as the search applies them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory import services as message_store
from memory.models import Message
from memory.recall import indexing
from memory.recall.search import RecallQuery, recall
from roleplay.models import Conversation

pytestmark = pytest.mark.django_db(transaction=True)

FILLER = [
    "The tea went cold while we talked about nothing much.",
    "Rain again, the cat refuses to go outside.",
    "I reorganised the bookshelf by colour, it looks odd.",
    "The bus was late so I walked the last stretch home.",
    "We watched an old film and fell asleep halfway through.",
    "The neighbours are painting their fence a loud green.",
]


def _say(tenant, player, character, days: list[list[str]], start=datetime(2023, 3, 1, tzinfo=UTC)):
    """One conversation whose ``days[n]`` turns (user, then the assistant's filler) were
    said on day ``n`` (a week apart)."""
    conversation = Conversation.objects.create(tenant=tenant, player=player, character=character)
    session = conversation.session_id
    for number, lines in enumerate(days):
        when = start + timedelta(days=7 * number)
        for line in lines:
            for role, text in (("user", line), ("assistant", FILLER[len(line) % len(FILLER)])):
                message = message_store.save_message(tenant, session, role=role, content=text)
                Message.objects.filter(pk=message.pk).update(created_at=when)
                when += timedelta(minutes=1)
    indexing.index_messages(
        tenant, session_id=session, player_id=player.pk,
        character_id=str(character.pk), conversation_id=conversation.pk,
    )  # fmt: skip
    return conversation


def _texts(tenant, player, question: str, k: int) -> list[str]:
    return [item["text"] for item in recall(tenant, player, RecallQuery(question, k=k))["items"]]


def _filler_days(count: int) -> list[list[str]]:
    return [[FILLER[(n + i) % len(FILLER)] + f" Day {n}." for i in range(3)] for n in range(count)]


def test_a_person_named_by_relation_is_found_by_their_name(tenant, player, character):
    days = _filler_days(6)
    days[0].insert(1, "My mentor Gina runs the pottery studio on Elm Street.")
    days[4].insert(1, "Gina phoned: the gallery accepted three of my vases!")
    for n in range(1, 6):
        days[n].append(f"The gallery downtown had a queue again, day {n}.")
    _say(tenant, player, character, days)
    texts = _texts(tenant, player, "What news about the gallery did her mentor share?", k=5)
    assert any("Gina phoned" in text for text in texts)


def test_a_month_named_favours_what_was_said_in_it(tenant, player, character):
    days = _filler_days(8)
    days[1].append("We went hiking up the ridge trail with the dog.")  # 8 March
    days[6].append("We went hiking up the ridge trail with the kids.")  # 12 April
    _say(tenant, player, character, days)
    top = _texts(tenant, player, "Where did we go hiking in April 2023?", k=1)[0]
    assert "with the kids" in top


def test_the_week_before_an_event_favours_what_was_said_then(tenant, player, character):
    days = _filler_days(8)
    days[2].append("I finished reading a thriller about a lighthouse keeper.")  # 15 March
    days[5].append("I finished reading a thriller about a train robbery.")  # 5 April
    days[3].append("The camping trip by the lake was freezing but lovely.")  # 22 March
    _say(tenant, player, character, days)
    top = _texts(tenant, player, "What thriller did I finish the week before the camping trip?", 1)
    assert "lighthouse keeper" in top[0]


def test_each_part_of_a_question_reaches_the_top(tenant, player, character):
    days = _filler_days(8)
    for n in range(8):
        days[n].append(f"Baked another sourdough loaf, the crust cracked nicely, batch {n}.")
    days[6].append("The violin lesson went better, I finally played the scale cleanly.")
    _say(tenant, player, character, days)
    texts = _texts(tenant, player, "How did the sourdough baking go, and the violin lesson?", k=3)
    assert any("sourdough" in text for text in texts)
    assert any("violin lesson went better" in text for text in texts)


def test_a_name_the_first_hit_brings_in_is_asked_for_in_a_second_hop(tenant, player, character):
    days = _filler_days(8)
    days[1].append("My old roommate Aiko got a job with Northwind Freight.")
    days[4].append("Northwind Freight is sending all its new people to its Hobart office.")
    for n in (2, 3, 5, 6):
        days[n].append(f"Someone at the office moved desks again, week {n}.")
    _say(tenant, player, character, days)
    texts = _texts(tenant, player, "Where is her old roommate moving for work?", k=5)
    assert any("Aiko got a job" in text for text in texts)
    assert any("Hobart office" in text for text in texts)


def test_a_chinese_relation_reaches_both_turns_about_the_person(tenant, player, character):
    days = _filler_days(8)
    days[1].append("我哥马超上个月养了一只柯基。")
    days[5].append("马超说豆豆又把他的鞋咬坏了，真是个捣蛋鬼。")
    for n in (2, 3, 4, 6):
        days[n].append(f"楼下邻居的狗昨晚又叫了一夜，第{n}次了。")
    _say(tenant, player, character, days)
    texts = _texts(tenant, player, "哥哥的狗叫什么名字？", k=5)
    assert any("我哥马超" in text for text in texts)
    assert any("豆豆" in text for text in texts)
