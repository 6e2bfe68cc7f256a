"""The harder synthetic data set in the LoCoMo layout (pure; deterministic for a seed).

The first synthetic set (:mod:`synthetic`) asks questions in the words the facts were said
in; on real conversations the same recall scores far lower. This one has what real talk
has (see :mod:`paraphrase` for the stories and the word rule):

- questions *paraphrased* (:data:`PARAPHRASED` of them, by category: no content word in
  common with the evidence) or sharing a word with the turn that led to the evidence (a
  *cue* by the other person, :data:`CUED` of the time: "How did the interview go?" before
  "They offered me the post");
- people referred to by relation ("his brother's dog": the brother is named in one session,
  the dog in another) and time by date arithmetic ("when", from the session's
  ``session_N_date_time`` and "last week"; "the week before the trip": two consecutive
  sessions);
- multi-hop evidence in two to four different sessions;
- distractors: turns that use the question's words about something else; echoes: turns on
  the story's subject in other words (near to a sentence model, far from the lexical side);
  and small talk around everything;
- a conversation's questions lean to what was said lately (:data:`RECENT_SHARE` of the
  stories end in its last :data:`RECENT_SESSIONS` sessions), as on the real set, where the
  last 50 messages hold about two thirds of the evidence.

Languages: ``en`` (:mod:`hard_en`) and ``zh`` (:mod:`hard_zh`, Chinese players). The same
``seed``, size and language give the same data set, byte for byte.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from datetime import timedelta
from types import ModuleType

from memory.bench import hard_en, hard_zh, smalltalk
from memory.bench.paraphrase import Story, shared_content
from memory.bench.synthetic import DEFAULT_SEED, _dates, format_date, format_when

SESSIONS = (18, 24)  # sessions per conversation, inclusive
TURNS = (12, 18)  # a session's turns when it carries no story
MIN_SMALL_TALK = 2  # filler turns of a session however many stories it carries
MIX = {"single-hop": 7, "open-domain": 2, "temporal": 4, "multi-hop": 5, "adversarial": 2}
PARAPHRASED = {"multi-hop": 0.5}  # share of questions asked in other words, by category
PARAPHRASED_ELSE = 0.1
CUED = 1.0
RECENT_SHARE = 0.9
RECENT_SESSIONS = 2
DISTRACTORS = 1  # per story, at most
LANGUAGES = {"en": hard_en, "zh": hard_zh}


@dataclass
class _Told:
    """A story as this conversation tells it."""

    story: Story
    owner: int  # 0 speaker_a, 1 speaker_b
    values: dict
    sessions: list[int]  # the session of each part
    cued: list[bool]


def generate(conversations: int = 10, *, seed: int = DEFAULT_SEED, lang: str = "en"):
    """``conversations`` samples in the LoCoMo layout, in language ``lang``."""
    table = LANGUAGES[lang]
    return [
        _conversation(n, random.Random(f"{lang}:{seed}:{n}"), table, lang)
        for n in range(conversations)
    ]


def _table(lang: str) -> ModuleType:
    return LANGUAGES[lang]


def _talk(lang: str):
    return smalltalk if lang == "en" else hard_zh


def _slots(story: Story, rng: random.Random, used: dict, pools: dict) -> dict:
    texts = [t for part in story.parts for t in (*part.said, *part.cue)]
    texts += [*story.asked, *story.paraphrased, story.answer, *story.distractors]
    fields = sorted(
        {f for t in texts for _l, f, _s, _c in string.Formatter().parse(t) if f}
        - {"name", "when", "When", "date"}
    )
    values: dict = {}
    for slot in fields:
        pool_name = slot.rstrip("0123456789")
        taken = used.setdefault(pool_name, set())
        fresh = [v for v in pools[pool_name] if v not in taken] or list(pools[pool_name])
        values[slot] = rng.choice(fresh)
        taken.add(values[slot])
    return values


def _sessions(story: Story, rng: random.Random, count: int) -> list[int]:
    """The session of each part: distinct, in order; the last in the recent sessions
    :data:`RECENT_SHARE` of the time; consecutive for a "before" story."""
    parts = len(story.parts)
    recent = rng.random() < RECENT_SHARE
    tail = list(range(count - RECENT_SESSIONS, count))
    if story.time == "before":
        last = rng.choice(tail) if recent else rng.randrange(1, count - RECENT_SESSIONS)
        return [last - 1, last]
    if not recent:
        return sorted(rng.sample(range(count - RECENT_SESSIONS), parts))
    last = rng.choice(tail)
    return sorted(rng.sample(range(last), parts - 1)) + [last]


def _stories(rng: random.Random, table: ModuleType, count: int) -> list[_Told]:
    used: dict = {}
    told = []
    for category, number in MIX.items():
        pool = [s for s in table.STORIES if s.category == category]
        for story in rng.sample(pool, min(number, len(pool))):
            values = _slots(story, rng, used, table.POOLS)
            if story.time == "when":
                values["_when"] = rng.choice(sorted(table.RELATIVE_DAYS))
            sessions = _sessions(story, rng, count)
            cued = [bool(p.cue) and rng.random() < CUED for p in story.parts]
            told.append(_Told(story, rng.randrange(2), values, sessions, cued))
    return told


def _fill(text: str, values: dict, lang: str) -> str:
    word = values.get("_when", "")
    when = {"when": word, "When": word[:1].upper() + word[1:] if lang == "en" else word}
    return text.format(**values, **when)


def _blocks(rng, told: list[_Told], count: int, lang: str) -> list[list[list[tuple]]]:
    """Each session's blocks of ``(speaker, text, evidence key or None)`` turns: a story
    part with its cue and the other's reaction, a distractor."""
    talk = _talk(lang)
    blocks: list[list[list[tuple]]] = [[] for _ in range(count)]
    for number, t in enumerate(told):
        other = 1 - t.owner
        for part_number, (part, session) in enumerate(zip(t.story.parts, t.sessions, strict=True)):
            block: list[tuple] = []
            if t.cued[part_number]:
                block.append((other, _fill(rng.choice(part.cue), t.values, lang), None))
            said = _fill(rng.choice(part.said), t.values, lang)
            block.append((t.owner, said, (number, part_number)))
            block.append((other, talk.fact_reaction(rng, "{other}"), None))
            blocks[session].append(block)
        echoes = getattr(_table(lang), "ECHOES", {}).get(t.story.key, ())
        for text in echoes:
            blocks[rng.randrange(count)].append([(rng.randrange(2), text, None)])
        for text in rng.sample(t.story.distractors, min(DISTRACTORS, len(t.story.distractors))):
            blocks[rng.randrange(count)].append(
                [(rng.randrange(2), _fill(text, t.values, lang), None)]
            )
    return blocks


def _session(rng, number: int, blocks, names, lang: str, evidence: dict) -> list[dict]:
    talk = _talk(lang)
    first = 0 if rng.random() < 0.7 else 1
    used = sum(len(b) for b in blocks)
    small = max(MIN_SMALL_TALK, rng.randint(*TURNS) - used - 3)
    for n in range(small):
        text, caption = talk.filler(rng, "{other}")
        blocks.append([((first + n) % 2, text, None, caption)])
    rng.shuffle(blocks)
    lines = [
        (first, talk.greeting(rng, "{other}"), None),
        (1 - first, talk.greeting_reply(rng, "{other}"), None),
    ]
    lines += [line for block in blocks for line in block]
    lines.append((lines[-1][0] ^ 1, talk.goodbye(rng, "{other}"), None))
    turns = []
    for position, (speaker, text, key, *caption) in enumerate(lines, start=1):
        dia_id = f"D{number}:{position}"
        turn = {
            "speaker": names[speaker],
            "dia_id": dia_id,
            "text": text.replace("{other}", names[1 - speaker]),
        }
        if caption and caption[0]:
            turn["blip_caption"] = caption[0]
        if key is not None:
            evidence[key] = dia_id
        turns.append(turn)
    return turns


def _conversation(index: int, rng: random.Random, table: ModuleType, lang: str) -> dict:
    names = rng.sample(table.NAMES, 2)
    count = rng.randint(*SESSIONS)
    dates = _dates(rng, count)
    told = _stories(rng, table, count)
    blocks = _blocks(rng, told, count, lang)
    conversation: dict = {"speaker_a": names[0], "speaker_b": names[1]}
    evidence: dict = {}
    for number in range(1, count + 1):
        conversation[f"session_{number}_date_time"] = format_when(dates[number - 1])
        conversation[f"session_{number}"] = _session(
            rng, number, blocks[number - 1], names, lang, evidence
        )
    qa = [_question(rng, t, n, names, dates, evidence, table, lang) for n, t in enumerate(told)]
    for question in rng.sample(table.UNANSWERABLE, MIX["adversarial"]):
        qa.append(
            {
                "question": question.format(name=names[rng.randrange(2)]),
                "answer": table.NOT_MENTIONED,
                "evidence": [],
                "category": "adversarial",
            }
        )
    rng.shuffle(qa)
    return {"sample_id": f"synthetic-{lang}-{index + 1}", "conversation": conversation, "qa": qa}


def said_texts(t: _Told, lang: str) -> list[str]:
    """Every phrasing of every part of a told story, filled (what the word rule checks)."""
    return [_fill(text, t.values, lang) for part in t.story.parts for text in part.said]


def _question(rng, t: _Told, number: int, names, dates, evidence, table, lang: str) -> dict:
    values = dict(t.values)
    if t.story.time == "when":
        days, form = table.RELATIVE_DAYS[values["_when"]]
        said = dates[t.sessions[0]] - timedelta(days=days)
        values["date"] = form.format(date=getattr(table, "format_date", format_date)(said))
    owner = names[t.owner]
    asked = rng.choice(t.story.asked).format(name=owner, **values)
    question, paraphrased = asked, False
    share = PARAPHRASED.get(t.story.category, PARAPHRASED_ELSE)
    if t.story.paraphrased and rng.random() < share:
        candidate = rng.choice(t.story.paraphrased).format(name=owner, **values)
        stop = table.STOPWORDS
        if not shared_content(
            candidate, said_texts(t, lang), stop, frozenset(n.casefold() for n in names)
        ):
            question, paraphrased = candidate, True
    return {
        "question": question,
        "answer": t.story.answer.format(**values),
        "evidence": [evidence[(number, part)] for part in range(len(t.story.parts))],
        "category": t.story.category,
        "paraphrased": paraphrased,
    }
