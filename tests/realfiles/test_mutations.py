"""Real files are often hand-edited or written by other tools: a value of another type, a
null, an empty text. Every such single change to a real shape, through its REST door, is
either accepted or refused with a coded 4xx error — never a 500 (a seeded, repeatable
walk over each fixture's values)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest

from roleplay.models import Character
from tests.realfiles import doors

pytestmark = pytest.mark.django_db

ODD_VALUES = (None, "", [], {}, "1", 1.5, -1, True, "x", [None], {"a": None}, "0", -0.0)
PER_FILE = 8
KINDS = {
    "preset_": doors.preset,
    "instruct_": doors.template,
    "context_": doors.template,
    "master_": doors.template,
    "world_": doors.world,
    "lorebook_": doors.world,
    "card_": doors.card,
    "regex_": doors.regex,
}


def _paths(value, prefix=()) -> Iterator[tuple]:
    if prefix:
        yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _replaced(value, path: tuple, new):
    if not path:
        return new
    head, *rest = path
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = _replaced(copy[head], tuple(rest), new)
    return copy


def mutations(name: str, rng: random.Random) -> Iterator[tuple[tuple, object, bytes]]:
    """``PER_FILE`` copies of the fixture, each with one value replaced by an odd one."""
    text = doors.shape(name).decode("utf-8-sig")
    jsonl = name.endswith(".jsonl")
    value = [json.loads(line) for line in text.splitlines() if line.strip()] if jsonl else (
        json.loads(text)
    )  # fmt: skip
    paths = list(_paths(value))
    for _ in range(PER_FILE):
        path, new = rng.choice(paths), rng.choice(ODD_VALUES)
        changed = _replaced(value, path, new)
        if jsonl:
            data = "\n".join(json.dumps(line, ensure_ascii=False) for line in changed)
        else:
            data = json.dumps(changed, ensure_ascii=False)
        yield path, new, data.encode()


def _coded_or_accepted(response, where) -> None:
    assert response.status_code < 500, where
    if response.status_code >= 400:
        assert response.json()["error"]["code"], where


@pytest.mark.parametrize("prefix", sorted(KINDS))
def test_files_with_one_odd_value(api, prefix):
    rng = random.Random(prefix)
    for name in doors.shapes(prefix):
        for index, (path, new, data) in enumerate(mutations(name, rng)):
            response = KINDS[prefix](api, f"{index}-{name}", data)
            _coded_or_accepted(response, (name, path, new))


def test_chats_with_one_odd_value(api, player, character):
    rng = random.Random("chat_")
    for name in doors.shapes("chat_"):
        for index, (path, new, data) in enumerate(mutations(name, rng)):
            response = doors.chat(api, f"{index}-{name}", data, player=player, character=character)
            _coded_or_accepted(response, (name, path, new))


def test_group_files_with_one_odd_value(api, player, character, tenant):
    Character.objects.create(tenant=tenant, name="Jon", description="A sailor.")
    chat = doors.shape("group_chat_st_current.jsonl")
    rng = random.Random("group_")
    for path, new, data in mutations("group_st_pooled_strings.json", rng):
        response = doors.group(
            api, "group.json", data, chat_name="chat.jsonl", chat_data=chat, player=player
        )
        _coded_or_accepted(response, (path, new))
