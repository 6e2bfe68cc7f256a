"""The specialists' analysis ledger (seed 002): entries written with a successful state
commit, and the projection of them a prompt reads. Pure.

An entry is ``{type, key "<tool>:turn:<n>", status, payload {analysis, sourceTool,
sourceTurn, userQuery}}``; its type comes from the tool that wrote it (:data:`TOOL_TYPES`).
``agency`` is the seventh type of the seed: entries about the user's own choices (directions
declined, autonomy kept), written by an operator or a later capability; no specialist
writes one by itself. The projection takes the newest :data:`NEWEST` active entries, at most
:data:`PER_TYPE` of each type, each analysis cut to :data:`ENTRY_CHARS` characters, and stops
before the text passes the caller's total cap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

TOOL_TYPES = {
    "analyze_plot": "event",
    "judge_npc": "npc",
    "audit_knowledge": "knowledge",
    "simulate_world": "world",
    "manage_callbacks": "callback",
    "direct_scene": "camera",
}
TYPES = ("event", "npc", "knowledge", "world", "callback", "camera", "agency")
NEWEST, PER_TYPE, ENTRY_CHARS = 60, 6, 900
CUT = "…"


def entry_for(tool: str, turn: int, analysis: str, user_query: str) -> dict[str, Any]:
    """The ledger entry a specialist's result becomes when the state commit succeeds."""
    return {
        "type": TOOL_TYPES[tool],
        "key": f"{tool}:turn:{turn}",
        "status": "active",
        "payload": {
            "analysis": analysis,
            "sourceTool": tool,
            "sourceTurn": turn,
            "userQuery": user_query,
        },
    }


def project(entries: Sequence[dict[str, Any]], *, max_chars: int) -> list[dict[str, Any]]:
    """The entries a prompt shows, newest first. ``entries`` are in write order (oldest
    first); each kept one's analysis is cut to :data:`ENTRY_CHARS`."""
    active = [e for e in entries if e.get("status") == "active"][-NEWEST:]
    kept: list[dict[str, Any]] = []
    per_type: dict[str, int] = {}
    total = 0
    for entry in reversed(active):
        kind = entry.get("type")
        if per_type.get(kind, 0) >= PER_TYPE:
            continue
        analysis = str(entry.get("payload", {}).get("analysis", ""))
        if len(analysis) > ENTRY_CHARS:
            analysis = analysis[: ENTRY_CHARS - len(CUT)] + CUT
        line = render_line(entry, analysis)
        if total + len(line) + 1 > max_chars:
            break
        total += len(line) + 1
        per_type[kind] = per_type.get(kind, 0) + 1
        kept.append({**entry, "payload": {**entry.get("payload", {}), "analysis": analysis}})
    return kept


def render_line(entry: dict[str, Any], analysis: str) -> str:
    return f"- [{entry.get('type')}] {entry.get('key')}: {analysis}"


def render(projected: Sequence[dict[str, Any]]) -> str:
    """The projection as the text a prompt carries, one line an entry."""
    return "\n".join(render_line(e, str(e["payload"]["analysis"])) for e in projected)
