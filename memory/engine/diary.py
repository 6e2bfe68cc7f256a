"""Diaries (seed 000), pure: when a conversation is due one, which rounds it covers, the
request that writes it, and the text kept.

A round is one message of the player (answered). The first diary comes once a conversation
reaches ``first`` rounds (20), then one every ``every`` rounds more (10): at 20, 30, 40…,
never at 25. Each covers the rounds since the one before (the first covers 1–20), and the
rounds of the diaries just before it that failed (:func:`first_round`): a failed diary's
rounds are summarised by the next one, never lost. A failed diary is tried again after a
backoff (:func:`retry_delay`), :data:`MAX_ATTEMPTS` times in all. The diary is an
``episode`` entry written in the third person from what was said, nothing invented.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

FIRST_ROUND, EVERY_ROUNDS = 20, 10
MAX_TRANSCRIPT_CHARS = 24_000  # the rounds' text given to the model (the newest kept)
TEMPERATURE = 0.3
MAX_ATTEMPTS = 3
RETRY_BACKOFF_S = (60.0, 300.0)  # before the second and the third attempt

SYSTEM = (
    "You keep a roleplay conversation's diary. Write one short diary entry (at most 120 "
    "words, plain prose, past tense, third person) recording what happened in the "
    "excerpt: events, decisions, promises, names and places, and how the people felt. Use "
    'only what the excerpt says; a plan or a claim stays a plan or a claim ("{user} said '
    'they would return the key", not "the key was returned"). No heading, no list, no '
    "commentary."
)


def due(rounds: int, first: int = FIRST_ROUND, every: int = EVERY_ROUNDS) -> bool:
    """Whether a conversation that has just reached ``rounds`` rounds is due a diary."""
    return rounds == first or (rounds > first and (rounds - first) % every == 0)


def covered(through: int, first: int = FIRST_ROUND, every: int = EVERY_ROUNDS) -> range:
    """The rounds (1-based) the diary written at ``through`` covers."""
    start = 1 if through <= first else through - every + 1
    return range(start, through + 1)


def first_round(
    through: int, failed: Collection[int], first: int = FIRST_ROUND, every: int = EVERY_ROUNDS
) -> int:
    """The first round the diary written at ``through`` covers: its own rounds' first, or
    earlier while the diary just before (its round in ``failed``) failed, so the rounds a
    failed diary left are summarised by the next one."""
    start = covered(through, first, every).start
    while start > 1 and start - 1 in failed:
        start = covered(start - 1, first, every).start
    return start


def retry_delay(attempts: int) -> float | None:
    """Seconds before the next try of a diary that failed after ``attempts`` tries; None
    when it has had its :data:`MAX_ATTEMPTS`."""
    if attempts >= MAX_ATTEMPTS:
        return None
    return RETRY_BACKOFF_S[min(max(attempts, 1), len(RETRY_BACKOFF_S)) - 1]


def request(lines: Sequence[tuple[str, str]], *, user: str, character: str) -> list[dict[str, str]]:
    """The model's messages for the rounds' ``(role, text)`` lines."""
    named = [(user if role == "user" else character, text.strip()) for role, text in lines]
    transcript = "\n".join(f"{name}: {text}" for name, text in named if text)
    transcript = transcript[-MAX_TRANSCRIPT_CHARS:]
    return [
        {"role": "system", "content": SYSTEM.replace("{user}", user)},
        {
            "role": "user",
            "content": f"Diary of {character} and {user}. Excerpt:\n\n{transcript}\n\n"
            "Write the diary entry now.",
        },
    ]


def entry_text(reply: str, max_chars: int) -> str:
    """The diary entry to keep from the model's reply: trimmed, one paragraph, cut at a
    sentence end within ``max_chars``; empty when the reply has no text."""
    text = " ".join(reply.split())
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars - 1]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    return cut[: end + 1] if end >= max_chars // 2 else cut.rstrip() + "…"
