"""The embedded book (pure): a card's ``character_book`` read by the worldbook importer,
written back by :mod:`roleplay.characters.cards.book`, and read again to the same entries; the PNG
carries ``chara`` and ``ccv3`` chunks the way SillyTavern writes them."""

from __future__ import annotations

import base64
import json

import pytest

from roleplay.characters.cards.book import merge_books, to_character_book
from roleplay.characters.cards.build import build_card
from roleplay.characters.cards.images import default_avatar
from roleplay.characters.cards.mapping import card_to_fields
from roleplay.characters.cards.read import read_card_file
from roleplay.characters.cards.report import CardReport
from tests.characters.cardfiles import BOOK, as_json, v2_card, v3_card
from worldbook.engine.importers import parse_import
from worldbook.engine.importers.png import iter_chunks
from worldbook.engine.schema import BookIn

NATIVE_BOOK = {
    "name": "Native",
    "description": "Made in the editor.",
    "metadata": {"owner": "ops"},
    "entries": [
        {
            "id": "fog",
            "title": "Fog",
            "content": "@@ not a decorator",
            "keys": ["/fo+g/i"],
            "position": "outlet",
            "outlet_name": "weather",
            "priority": 30,
            "required": True,
            "sticky": 2,
            "group": "weather",
            "role": "assistant",
            "logic": "not_all",
            "secondary_keys": ["night"],
            "selective": True,
        },
        {"id": "tide", "content": "Tides are high.", "position": "author_note_top"},
    ],
}


def entries(book: dict) -> list[dict]:
    """Entries as the store keeps them, without the import provenance."""
    model = BookIn.model_validate(book)
    return [{**e.model_dump(mode="json"), "source": None} for e in model.entries]


def embedded(card_bytes: bytes, name: str) -> dict:
    return parse_import(name, card_bytes).book


@pytest.mark.parametrize("fmt", ["ccv3_png", "ccv3_json", "ccv2_json"])
@pytest.mark.parametrize("card", [v2_card(book=BOOK), v3_card(book=BOOK)], ids=["v2", "v3"])
def test_a_card_book_survives_export_and_import(card, fmt):
    first = embedded(as_json(card), "mira.json")
    fields = card_to_fields(card, read_card_file("c.json", as_json(card)).spec, CardReport("", ""))
    out = build_card(fields, fmt, book=to_character_book(first), image=default_avatar("Mira"))
    again = embedded(out, "mira.png" if fmt.endswith("png") else "mira.json")
    assert entries(again) == entries(first)
    assert [e["source"]["fields"] for e in again["entries"]] == [
        e["source"]["fields"] for e in first["entries"]
    ]
    assert again["name"] == first["name"] and again["description"] == first["description"]
    settings = again["metadata"]["character_book"]
    assert settings == first["metadata"]["character_book"] == {"scan_depth": 3}


def test_a_native_book_survives_as_a_character_book():
    card = v3_card(book=to_character_book(NATIVE_BOOK))
    book = embedded(as_json(card), "c.json")
    assert entries(book) == entries(NATIVE_BOOK)
    assert book["metadata"]["owner"] == "ops"


def test_the_png_has_chara_and_ccv3_text_chunks_before_iend():
    fields = card_to_fields(v3_card(), "ccv3", CardReport("", ""))
    png = build_card(fields, "ccv3_png", book=None, image=default_avatar("Mira"))
    chunks = iter_chunks(png)
    kinds = [kind for kind, _ in chunks]
    assert kinds[-1] == b"IEND" and kinds[-3:-1] == [b"tEXt", b"tEXt"]
    texts = {}
    for kind, body in chunks:
        if kind == b"tEXt":
            keyword, _, text = body.partition(b"\x00")
            texts[keyword.decode()] = json.loads(base64.b64decode(text))
    assert texts["chara"]["spec"] == "chara_card_v2"
    assert texts["ccv3"]["spec"] == "chara_card_v3"
    assert texts["chara"]["data"]["name"] == texts["ccv3"]["data"]["name"] == "Mira"


def test_exporting_over_a_card_png_replaces_its_chunks():
    fields = card_to_fields(v2_card(), "ccv2", CardReport("", ""))
    once = build_card(fields, "ccv3_png", book=None, image=default_avatar("Mira"))
    twice = build_card({**fields, "name": "Ada"}, "ccv3_png", book=None, image=once)
    texts = [body for kind, body in iter_chunks(twice) if kind == b"tEXt"]
    assert len(texts) == 2
    assert read_card_file("x.png", twice).card["data"]["name"] == "Ada"


def test_several_books_merge_into_one():
    other = {**NATIVE_BOOK, "name": "Other", "entries": [{"id": "x", "content": "X"}]}
    merged = merge_books([NATIVE_BOOK, other], "Mira's books")
    assert [e["id"] for e in merged["entries"]] == ["fog", "tide", "x"]
    assert merged["metadata"]["merged_books"] == ["Native", "Other"]
    assert merge_books([NATIVE_BOOK], "ignored") is NATIVE_BOOK
