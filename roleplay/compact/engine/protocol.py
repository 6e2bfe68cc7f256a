"""The compactor's request and answer (seed 002, Compact, protocols).

Input protocols: ``harness_json_v1`` (one JSON object: the earlier summary, the messages to
fold in, the latest user message marked as context only), ``dream_text_v0`` (the same as
labelled plain text), ``automemory_recursive_v1`` (the messages in segments of
``segmentContentTokens``, each folded in turn; the intermediate summaries are not saved).
Output formats: ``structured_json`` (``canonical``, ``interaction``, ``open_threads``) or
``plain_text`` (projected as ``{format: "plain_text", text}``). ``lengthPolicy`` ``reject``
refuses a summary over ``maxSummaryTokens``; ``accept_bounded`` (plain text only) cuts it."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from console import jsontext

from .checkpoint import summary_text

SCHEMA = {
    "type": "object",
    "properties": {
        "canonical": {"type": "array", "items": {"type": "string"}},
        "interaction": {"type": "array", "items": {"type": "string"}},
        "open_threads": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["canonical", "interaction", "open_threads"],
    "additionalProperties": False,
}


class SummaryInvalid(ValueError):
    code = "compact_summary_invalid"


class CandidateTooLarge(SummaryInvalid):
    """The compactor's request for a candidate leaves less than ``minGenerationTokens`` of
    its model's window for the answer: nothing was sent; a smaller candidate may fit."""

    code = "compact_candidate_too_large"

    def __init__(self, excess: int) -> None:
        super().__init__(f"the compactor's input is {excess} tokens too large for its window")
        self.excess = excess


def render(
    protocol: str, earlier: str, messages: Sequence[tuple[str, str]], latest: str | None
) -> str:
    """The compactor's user message. ``messages`` are (speaker, text), oldest first."""
    if protocol == "harness_json_v1":
        return json.dumps(
            {
                "earlier_summary": earlier or None,
                "messages": [{"speaker": s, "text": t} for s, t in messages],
                "latest_user_message_context_only": latest,
            },
            ensure_ascii=False,
        )
    lines = ["EARLIER SUMMARY", earlier or "(none)", "", "MESSAGES TO FOLD IN"]
    lines += [f"{speaker}: {text}" for speaker, text in messages]
    lines += ["", "LATEST USER MESSAGE (context only: not something that happened)", latest or ""]
    return "\n".join(lines)


def segments(
    messages: Sequence[tuple[str, str]], limit: int, count_tokens: Callable[[str], int]
) -> list[list[tuple[str, str]]]:
    """Consecutive slices of at most ``limit`` tokens each (a longer message alone)."""
    out: list[list[tuple[str, str]]] = []
    size = 0
    for message in messages:
        cost = count_tokens(message[1])
        if not out or size + cost > limit:
            out.append([])
            size = 0
        out[-1].append(message)
        size += cost
    return out


def response_format(output_format: str) -> dict[str, Any] | None:
    if output_format != "structured_json":
        return None
    return {"type": "json_schema", "json_schema": {"name": "compact_summary", "schema": SCHEMA}}


def parse(
    text: str,
    output_format: str,
    *,
    max_tokens: int,
    length_policy: str,
    count_tokens: Callable[[str], int],
) -> dict:
    """The summary of an answer; :class:`SummaryInvalid` says why not."""
    if output_format == "plain_text":
        body = (text or "").strip()
        if not body:
            raise SummaryInvalid("the summary is empty")
        if count_tokens(body) > max_tokens:
            if length_policy != "accept_bounded":
                raise SummaryInvalid(f"the summary is over {max_tokens} tokens")
            body = _bounded(body, max_tokens, count_tokens)
        return {"format": "plain_text", "text": body}
    try:
        data = jsontext.loads(text)
    except ValueError:
        raise SummaryInvalid("the summary is not JSON") from None
    if not isinstance(data, dict) or set(data) != {"canonical", "interaction", "open_threads"}:
        raise SummaryInvalid("the summary needs canonical, interaction and open_threads")
    for key, value in data.items():
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SummaryInvalid(f"{key} must be a list of strings")
    summary = {
        "format": "structured_json",
        **{k: [v.strip() for v in data[k] if v.strip()] for k in data},
    }
    if not any(summary[k] for k in data):
        raise SummaryInvalid("the summary is empty")
    if count_tokens(summary_text(summary)) > max_tokens:
        raise SummaryInvalid(f"the summary is over {max_tokens} tokens")
    return summary


def _bounded(text: str, max_tokens: int, count_tokens: Callable[[str], int]) -> str:
    """The longest prefix within ``max_tokens``, ended at a word boundary where the text has
    one there (line breaks kept); a text without spaces (Chinese, Japanese) is cut between
    characters. Nothing left is refused."""
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if count_tokens(text[:mid]) <= max_tokens:
            low = mid
        else:
            high = mid - 1
    cut = text[:low]
    if low < len(text) and not text[low].isspace():
        space = max(cut.rfind(" "), cut.rfind("\n"))
        if space > 0:
            cut = cut[:space]
    cut = cut.rstrip()
    # Token counts of prefixes are not monotone (a longer prefix may merge into fewer
    # tokens), so the search can stop a word short: take the next words while they fit.
    while cut and (end := _next_word_end(text, len(cut))) < len(text):
        longer = text[:end]
        if count_tokens(longer) > max_tokens:
            break
        cut = longer
    if not cut:
        raise SummaryInvalid("nothing of the summary fits within the limit")
    return cut


def _next_word_end(text: str, start: int) -> int:
    """Where the word after ``start`` (past any white space) ends."""
    index = start
    while index < len(text) and text[index].isspace():
        index += 1
    while index < len(text) and not text[index].isspace():
        index += 1
    return index
