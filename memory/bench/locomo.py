"""The LoCoMo layout, read into plain records (pure).

A data set is a list of samples::

    {"sample_id": ..., "conversation": {"speaker_a": ..., "speaker_b": ...,
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": ..., "dia_id": "D1:1", "text": ..., "blip_caption": ...}]},
     "qa": [{"question": ..., "answer": ..., "evidence": ["D1:1"], "category": 4}]}

``speaker_a`` speaks as the user, ``speaker_b`` as the assistant. A turn with a
``blip_caption`` (a shared photo) is stored with the caption after its text. Categories are
integers in the published set (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial) or strings; both are reported by name. Evidence ids are normalised
(``D30:05`` is ``D30:5``; ``"D8:6; D9:17"`` is two ids) and ids of no turn of the sample are
dropped and counted (the published set has a few).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
_DIA_RE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.IGNORECASE)
_SESSION_RE = re.compile(r"^session_(\d+)$")
_WHEN_RE = re.compile(
    r"(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", re.IGNORECASE
)
_MONTHS = {
    name: number
    for number, names in enumerate(
        [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
         ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
         ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
         ("dec", "december")],
        start=1,
    )
    for name in names
}  # fmt: skip
FALLBACK_START = datetime(2023, 1, 1, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Turn:
    dia_id: str
    session: int
    speaker: str
    role: str  # "user" (speaker_a) or "assistant" (speaker_b)
    text: str
    when: datetime  # the session's date and time


@dataclass(frozen=True)
class Question:
    question: str
    answer: str
    category: str
    evidence: tuple[str, ...]  # known dia ids only, in the order given
    unknown_evidence: int = 0  # ids given that name no turn of the sample


@dataclass
class Sample:
    sample_id: str
    speaker_a: str
    speaker_b: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def category_name(value) -> str:
    """``4`` or ``"4"`` is ``single-hop``; any other string is its own name, lowercased."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return CATEGORY_NAMES.get(value, str(value))
    text = str(value).strip()
    if text.isdigit():
        return CATEGORY_NAMES.get(int(text), text)
    return text.lower() or "uncategorised"


def dia_ids(value) -> list[str]:
    """The normalised dia ids in an evidence value (a list, or one string of several)."""
    parts = value if isinstance(value, list | tuple) else [value]
    found: list[str] = []
    for part in parts:
        for session, turn in _DIA_RE.findall(str(part)):
            found.append(f"D{int(session)}:{int(turn)}")
    return found


def parse_when(text: str | None) -> datetime | None:
    """``"1:56 pm on 8 May, 2023"`` (LoCoMo's form) or an ISO date-time, in UTC."""
    if not text:
        return None
    match = _WHEN_RE.search(text)
    if match:
        hour, minute, half, day, month, year = match.groups()
        number = _MONTHS.get(month.lower())
        if number is None:
            return None
        hour_24 = int(hour) % 12 + (12 if half.lower() == "p" else 0)
        try:
            return datetime(int(year), number, int(day), hour_24, int(minute), tzinfo=UTC)
        except ValueError:
            return None
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def turn_text(turn: dict) -> str:
    text = str(turn.get("text") or "").strip()
    caption = str(turn.get("blip_caption") or "").strip()
    return f"{text} [shares a photo: {caption}]".strip() if caption else text


def _sessions(conversation: dict) -> list[int]:
    numbers = []
    for key, value in conversation.items():
        match = _SESSION_RE.match(key)
        if match and isinstance(value, list):
            numbers.append(int(match.group(1)))
    return sorted(numbers)


def parse_sample(raw: dict, index: int = 0) -> Sample:
    """One sample; sessions in number order, each dated (an undated or unreadable session
    is a day after the one before)."""
    conversation = raw.get("conversation") or {}
    speaker_a = str(conversation.get("speaker_a") or "A")
    speaker_b = str(conversation.get("speaker_b") or "B")
    sample = Sample(str(raw.get("sample_id", index)), speaker_a, speaker_b)
    previous = FALLBACK_START - timedelta(days=1)
    for number in _sessions(conversation):
        when = parse_when(conversation.get(f"session_{number}_date_time"))
        when = when or previous + timedelta(days=1)
        previous = when
        for position, turn in enumerate(conversation[f"session_{number}"], start=1):
            ids = dia_ids(turn.get("dia_id", ""))
            speaker = str(turn.get("speaker") or "")
            sample.turns.append(
                Turn(
                    dia_id=ids[0] if ids else f"D{number}:{position}",
                    session=number,
                    speaker=speaker,
                    role="user" if speaker == speaker_a else "assistant",
                    text=turn_text(turn),
                    when=when,
                )
            )
    known = {turn.dia_id for turn in sample.turns}
    for qa in raw.get("qa") or []:
        given = dia_ids(qa.get("evidence") or [])
        evidence = tuple(dict.fromkeys(d for d in given if d in known))
        answer = qa.get("answer", qa.get("adversarial_answer", ""))
        sample.questions.append(
            Question(
                question=str(qa.get("question") or ""),
                answer=str(answer),
                category=category_name(qa.get("category", "uncategorised")),
                evidence=evidence,
                unknown_evidence=len(set(given) - known),
            )
        )
    return sample


def parse(data: list, limit: int | None = None) -> list[Sample]:
    """The samples of a data set (the first ``limit`` when given)."""
    if not isinstance(data, list):
        raise ValueError("a LoCoMo data set is a JSON list of samples")
    chosen = data if limit is None else data[:limit]
    return [parse_sample(raw, index) for index, raw in enumerate(chosen)]
