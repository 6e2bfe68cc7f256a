"""A deterministic synthetic data set in the LoCoMo layout (pure; nothing downloaded).

Each conversation is two people chatting over about :data:`SESSIONS` dated sessions of
about :data:`TURNS` turns, mostly small talk (:mod:`smalltalk`), with the facts of
:mod:`facts` said here and there by one of them and answered with a reaction. Each
conversation asks :data:`MIX` questions: single-hop (one turn), multi-hop (parts in two or
three sessions), temporal (the date is the session's, shifted by "yesterday", "last
week"...), preferences and unanswerable ones (no evidence). The same ``seed`` and size give
the same data set, byte for byte.
"""

from __future__ import annotations

import random
import string
from datetime import UTC, datetime, timedelta

from memory.bench import facts, smalltalk

SESSIONS = (18, 22)  # sessions per conversation, inclusive range
TURNS = (12, 18)  # turns per session
MIX = {"single": 7, "preference": 3, "temporal": 4, "multi": 4, "unanswerable": 2}
SPEAKERS = (
    "Maya", "Jonas", "Aisha", "Theo", "Camila", "Henrik", "Yara", "Felix", "Imani", "Lars",
    "Sofia", "Kenji", "Elena", "Marcus", "Noemi", "Arjun", "Freya", "Diego", "Hannah", "Omar",
)  # fmt: skip
START = datetime(2023, 1, 2, tzinfo=UTC)
DEFAULT_SEED = 20240501


def generate(conversations: int = 10, *, seed: int = DEFAULT_SEED) -> list[dict]:
    """``conversations`` samples in the LoCoMo layout."""
    return [_conversation(n, random.Random(seed * 1009 + n)) for n in range(conversations)]


def format_when(when: datetime) -> str:
    """LoCoMo's date form: ``1:56 pm on 8 May, 2023``."""
    hour = when.hour % 12 or 12
    half = "am" if when.hour < 12 else "pm"
    return f"{hour}:{when.minute:02d} {half} on {when.day} {when:%B}, {when.year}"


def format_date(when: datetime) -> str:
    return f"{when.day} {when:%B} {when.year}"


def _dates(rng: random.Random, count: int) -> list[datetime]:
    day = START + timedelta(days=rng.randint(0, 150))
    dates = []
    for _ in range(count):
        day += timedelta(days=rng.randint(2, 14))
        dates.append(day.replace(hour=rng.randint(8, 21), minute=rng.randint(0, 59)))
    return dates


def _slots(template: facts.FactTemplate, rng: random.Random, used: dict[str, set]) -> dict:
    """Values for the template's placeholders: values of one pool differ within a fact and,
    while the pool lasts, from the other facts of the conversation."""
    texts = [text for part in template.parts for text in part]
    texts += [*template.questions, template.answer]
    names = {
        field
        for text in texts
        for _literal, field, _spec, _conv in string.Formatter().parse(text)
        if field and field not in ("name", "when", "When", "date")
    }
    values: dict[str, str] = {}
    for slot in sorted(names):
        if slot.endswith("_detail"):
            continue
        pool_name = slot.rstrip("0123456789")
        pool = facts.POOLS[pool_name]
        taken = used.setdefault(pool_name, set())
        fresh = [v for v in pool if v not in taken] or list(pool)
        value = rng.choice(fresh)
        taken.add(value)
        if isinstance(value, tuple):
            values[slot], values[f"{slot}_detail"] = value
        else:
            values[slot] = value
    return values


def _plan(rng: random.Random, session_count: int) -> list[tuple[facts.FactTemplate, list[int]]]:
    """The conversation's facts and the session of each part (parts in distinct sessions,
    in order)."""
    chosen = (
        rng.sample(facts.SINGLE_HOP_FACTS, MIX["single"])
        + rng.sample(facts.PREFERENCE_FACTS, MIX["preference"])
        + rng.sample(facts.TEMPORAL_FACTS, MIX["temporal"])
        + rng.sample(facts.MULTI_HOP_FACTS, MIX["multi"])
    )
    plan = []
    for template in chosen:
        sessions = sorted(rng.sample(range(session_count), len(template.parts)))
        plan.append((template, sessions))
    return plan


def _layout(rng: random.Random, parts: int) -> list[int]:
    """The speakers (0 or 1) of a session's turns, alternating; long enough that each of
    its ``parts`` fact turns and its reaction fit between the greetings and the goodbye."""
    first = 0 if rng.random() < 0.7 else 1
    count = max(rng.randint(*TURNS), 5 + 4 * parts)
    return [(first + i) % 2 for i in range(count)]


def _place(speakers: list[int], taken: set[int], owner: int, rng: random.Random) -> int:
    """A position for a fact said by ``owner`` and followed by the other's reaction, never
    on the greeting pair or the goodbye (:func:`_layout` leaves room)."""
    free = [
        p
        for p in range(2, len(speakers) - 2)
        if speakers[p] == owner and not {p - 1, p, p + 1} & taken
    ]
    return rng.choice(free)


def _text(template, part: int, values: dict, rng: random.Random) -> str:
    word = values.get("_when", "")
    relative = {"when": word, "When": word[:1].upper() + word[1:]}
    return rng.choice(template.parts[part]).format(**values, **relative)


def _facts(rng: random.Random, session_count: int) -> list[tuple]:
    """The conversation's facts: (template, sessions of its parts, slot values, owner 0/1)."""
    used: dict[str, set] = {}
    plan = []
    for template, sessions in _plan(rng, session_count):
        values = _slots(template, rng, used)
        if template.category == facts.TEMPORAL:
            values["_when"] = rng.choice(sorted(facts.RELATIVE_DAYS))
        plan.append((template, sessions, values, rng.randrange(2)))
    return plan


def _placements(rng: random.Random, plan: list[tuple], session_count: int):
    """Each session's speakers and where its fact turns go: (layouts, [{position: (fact,
    part)}])."""
    parts: list[list[tuple[int, int]]] = [[] for _ in range(session_count)]
    for fact_number, (_template, sessions, _values, _owner) in enumerate(plan):
        for part_number, session in enumerate(sessions):
            parts[session].append((fact_number, part_number))
    layouts = [_layout(rng, len(here)) for here in parts]
    said: list[dict[int, tuple[int, int]]] = [{} for _ in range(session_count)]
    for session, here in enumerate(parts):
        for fact_number, part_number in here:
            owner = plan[fact_number][3]
            position = _place(layouts[session], set(said[session]), owner, rng)
            said[session][position] = (fact_number, part_number)
    return layouts, said


def _session(rng, number: int, speakers, facts_here, plan, names, evidence) -> list[dict]:
    """One session's turns; the dia id of each fact part said there goes to ``evidence``."""
    turns: list[dict] = []
    for position, speaker in enumerate(speakers):
        other = names[1 - speaker]
        dia_id = f"D{number}:{position + 1}"
        turn = {"speaker": names[speaker], "dia_id": dia_id}
        if position in facts_here:
            fact_number, part_number = facts_here[position]
            template, _sessions, values, _owner = plan[fact_number]
            turn["text"] = _text(template, part_number, values, rng)
            evidence[(fact_number, part_number)] = dia_id
        elif position - 1 in facts_here:
            turn["text"] = smalltalk.fact_reaction(rng, other)
        elif position == 0:
            turn["text"] = smalltalk.greeting(rng, other)
        elif position == 1:
            turn["text"] = smalltalk.greeting_reply(rng, other)
        elif position == len(speakers) - 1:
            turn["text"] = smalltalk.goodbye(rng, other)
        else:
            text, caption = smalltalk.filler(rng, other)
            while turns and text == turns[-1]["text"]:  # no echo of the turn before
                text, caption = smalltalk.filler(rng, other)
            turn["text"] = text
            if caption:
                turn["blip_caption"] = caption
        turns.append(turn)
    return turns


def _conversation(index: int, rng: random.Random) -> dict:
    names = rng.sample(SPEAKERS, 2)
    session_count = rng.randint(*SESSIONS)
    dates = _dates(rng, session_count)
    plan = _facts(rng, session_count)
    layouts, said = _placements(rng, plan, session_count)
    conversation: dict = {"speaker_a": names[0], "speaker_b": names[1]}
    evidence: dict[tuple[int, int], str] = {}
    for number, (speakers, facts_here) in enumerate(zip(layouts, said, strict=True), start=1):
        conversation[f"session_{number}_date_time"] = format_when(dates[number - 1])
        conversation[f"session_{number}"] = _session(
            rng, number, speakers, facts_here, plan, names, evidence
        )
    qa = [
        _question(rng, template, values, names[owner], fact_number, sessions, dates, evidence)
        for fact_number, (template, sessions, values, owner) in enumerate(plan)
    ]
    for question in rng.sample(facts.UNANSWERABLE_QUESTIONS, MIX["unanswerable"]):
        qa.append(
            {
                "question": question.format(name=names[rng.randrange(2)]),
                "answer": facts.NOT_MENTIONED,
                "evidence": [],
                "category": facts.ADVERSARIAL,
            }
        )
    rng.shuffle(qa)
    return {"sample_id": f"synthetic-{index + 1}", "conversation": conversation, "qa": qa}


def _question(rng, template, values, owner, fact_number, sessions, dates, evidence) -> dict:
    ids = [evidence[(fact_number, part)] for part in range(len(template.parts))]
    answer_values = dict(values)
    if template.category == facts.TEMPORAL:
        days, form = facts.RELATIVE_DAYS[values["_when"]]
        said = dates[sessions[-1]] - timedelta(days=days)
        answer_values["date"] = form.format(date=format_date(said))
    return {
        "question": rng.choice(template.questions).format(name=owner, **answer_values),
        "answer": template.answer.format(**answer_values),
        "evidence": ids,
        "category": template.category,
    }
