"""A synthetic worldbook for benchmarks: mixed Chinese/English keys, regex and secondary
keys, conditions; and the queries a selection benchmark runs against it."""

from __future__ import annotations

import random

_HAN = "灰港铜钥匙城门守卫煤气灯蒸汽手令码头雾灯塔商人旅店钟楼地下水道铁匠学院图书馆议会"
_WORDS = (
    "harbor lantern guild tower archive market bridge canal forge council river mill "
    "shrine garden vault engine signal ferry quarry orchard beacon cellar smithy chapel"
).split()


def _han_word(rng: random.Random) -> str:
    return "".join(rng.choice(_HAN) for _ in range(rng.randint(2, 4)))


def _key(rng: random.Random, index: int, n: int) -> str:
    if n % 2:
        return f"{_han_word(rng)}{index}"
    return f"{rng.choice(_WORDS)}-{index}-{n}"


def synthetic_book(entries: int, seed: int = 7) -> dict:
    """A native book of ``entries`` entries with about four keys each."""
    rng = random.Random(seed)
    out = []
    for i in range(entries):
        keys = [_key(rng, i, n) for n in range(rng.randint(3, 5))]
        entry = {
            "id": f"e{i}",
            "title": f"Entry {i}",
            "content": f"Lore {i}: " + " ".join(rng.choice(_WORDS) for _ in range(30)),
            "keys": keys,
            "priority": rng.randint(0, 100),
            "order": rng.randint(0, 100),
        }
        if i % 50 == 0:
            entry["keys"].append(f"/{rng.choice(_WORDS)}-{i}-\\d+/i")
        if i % 7 == 0:
            entry["selective"] = True
            entry["secondary_keys"] = [rng.choice(_WORDS), _han_word(rng)]
            entry["logic"] = rng.choice(["and_any", "not_any"])
        if i % 11 == 0:
            entry["conditions"] = [{"path": "quest.stage", "op": "in", "value": [1, 2, 3]}]
        if i % 97 == 0:
            entry["constant"] = True
        if i % 13 == 0:
            entry["match_whole_words"] = True
        out.append(entry)
    return {"name": f"bench book {entries}", "description": "synthetic", "entries": out}


def queries(book: dict, count: int, seed: int = 11) -> list[dict]:
    """Selection inputs: each mentions a few entries' keys in a 4-message window."""
    rng = random.Random(seed)
    entries = book["entries"]
    out = []
    for n in range(count):
        picks = [rng.choice(entries) for _ in range(6)]
        lines = [f"{rng.choice(_WORDS)} {rng.choice(p['keys'])} {_han_word(rng)}" for p in picks]
        out.append(
            {
                "query": lines[-1] + " 我把铜钥匙递给守卫。",
                "history": [
                    {"role": "user" if k % 2 == 0 else "assistant", "content": text}
                    for k, text in enumerate(lines[:-1])
                ],
                "state": {"quest": {"stage": rng.randint(0, 4)}},
                "seed": f"bench-{n}",
            }
        )
    return out


def sillytavern_file(book: dict) -> dict:
    """The same book as a SillyTavern world-info file (object keyed by uid)."""
    entries = {}
    for uid, entry in enumerate(book["entries"]):
        entries[str(uid)] = {
            "uid": uid,
            "key": entry["keys"],
            "keysecondary": entry.get("secondary_keys", []),
            "comment": entry["title"],
            "content": entry["content"],
            "constant": entry.get("constant", False),
            "selective": entry.get("selective", False),
            "selectiveLogic": 0,
            "order": entry["order"],
            "position": 0,
            "disable": False,
            "excludeRecursion": False,
            "preventRecursion": False,
            "probability": 100,
            "useProbability": True,
            "depth": 4,
            "group": "",
            "scanDepth": None,
            "caseSensitive": None,
            "matchWholeWords": None,
        }
    return {"entries": entries}
