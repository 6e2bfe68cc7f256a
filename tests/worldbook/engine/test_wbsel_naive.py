"""The naive baseline activates exactly what the compiled engine activates on keyword books."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wbsel_helpers import book, loaded, request

from tests.worldbook.engine.wbsel_helpers import select
from worldbook.engine.naive import naive_activate

VOCAB = [
    "cat",
    "Cat",
    "dog",
    "铜钥匙",
    "钥匙",
    "城门",
    "gate",
    "guard",
    "night",
    "concat",
    "コーヒー",
]
REGEXES = ["/ca+t/", "/DOG/i", "/门$/m", "/g.te/"]


def _random_book(rng: random.Random, size: int) -> list[dict]:
    entries = []
    for i in range(size):
        keys = rng.sample(VOCAB + REGEXES, rng.randint(0, 3))
        entry = {
            "id": f"e{i}",
            "content": f"content {i}",
            "keys": keys,
            "case_sensitive": rng.random() < 0.3,
            "match_whole_words": rng.random() < 0.4,
            "constant": rng.random() < 0.1,
        }
        if rng.random() < 0.4:
            entry.update(
                selective=True,
                secondary_keys=rng.sample(VOCAB, rng.randint(1, 2)),
                logic=rng.choice(["and_any", "and_all", "not_any", "not_all"]),
            )
        if rng.random() < 0.2:
            entry["scan_depth"] = rng.randint(0, 6)
        if rng.random() < 0.1:
            entry["enabled"] = False
        entries.append(entry)
    return entries


def _random_text(rng: random.Random) -> str:
    filler = ["the", "a", " ", "。", "concatenate", "熱い", "Gate!", "ＣＡＴ", "\n"]
    return " ".join(rng.choice(VOCAB + filler) for _ in range(rng.randint(1, 8)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=10_000))
def test_naive_and_engine_agree(seed):
    rng = random.Random(seed)
    entries = _random_book(rng, rng.randint(1, 25))
    history = [{"role": "user", "content": _random_text(rng)} for _ in range(rng.randint(0, 6))]
    req = request(
        _random_text(rng),
        history=history,
        scan_depth=rng.randint(0, 6),
        max_recursion_rounds=0,
        token_budget=32_000,
        max_entries=200,
    )
    books = [loaded(book(*entries))]
    assert naive_activate(req, books) == set(select(req, books).activated)


def test_naive_on_the_seed_example():
    entries = [
        {"id": "bg", "content": "灰港", "constant": True},
        {"id": "key", "content": "铜钥匙", "keys": ["铜钥匙", "城门"]},
        {"id": "off", "content": "x", "keys": ["电力"]},
    ]
    req = request("我把铜钥匙递给守卫。")
    books = [loaded(book(*entries))]
    assert naive_activate(req, books) == {("b1", "bg"), ("b1", "key")}
    assert set(select(req, books).activated) == {("b1", "bg"), ("b1", "key")}


def test_agreement_at_the_size_limit():
    rng = random.Random(5)
    words = [f"w{n}" for n in range(20_000)]
    entries = [
        {"id": f"e{i}", "content": f"c{i}", "keys": rng.sample(words, 4)} for i in range(5000)
    ]
    history = [{"role": "user", "content": " ".join(rng.sample(words, 60))} for _ in range(3)]
    req = request(" ".join(rng.sample(words, 40)), history=history)
    books = [loaded(book(*entries))]
    result = select(req, books)
    expected = naive_activate(req, books)
    assert len(expected) > 20
    assert set(result.activated) == expected
    assert len(result.decisions) == 5000
    assert 0 < len(result.blocks) <= 50 and result.token_count <= 1500
    assert sum(d["selected"] for d in result.decisions) == len(result.blocks)
    dropped = {d["reason"] for d in result.decisions if not d["selected"]}
    assert dropped <= {"not_triggered", "budget_dropped", "max_entries_dropped"}
