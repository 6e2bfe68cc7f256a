"""``bench_turns``' output: the JSON document and the text tables of a run's reports, by
arm (without or with Agent V2, or every capability off and on)."""

from __future__ import annotations

from roleplay.bench import capabilities as caps
from roleplay.bench.stats import agentic_comparison, render_comparison, render_table

WITHOUT, WITH = "without", "with"


def output(reports: dict, arms, players: int, turns: int, agentic, capabilities):
    """(the JSON document, the text tables) of the run's reports."""
    if capabilities:
        data = {
            "players": players,
            "turns_per_player": turns,
            caps.OFF: reports[caps.OFF],
            caps.ON: reports[caps.ON],
            "comparison": caps.comparison(reports[caps.OFF], reports[caps.ON]),
        }
        return data, caps.render(data["comparison"])
    if agentic != "compare":
        data = reports[arms[0]]
        text = render_table(data) if not agentic else render_agentic(data)
        return data, text + "\n" + render_hooks(data["hooks"])
    data = {
        "players": players,
        "turns_per_player": turns,
        WITHOUT: reports[WITHOUT],
        WITH: reports[WITH],
        "comparison": agentic_comparison(reports[WITHOUT], reports[WITH]),
    }
    text = "\n\n".join(
        [
            "WITHOUT Agent V2\n" + render_table(reports[WITHOUT]),
            "WITH Agent V2\n" + render_agentic(reports[WITH]),
            render_comparison(data["comparison"]),
        ]
    )
    return data, text


def render_hooks(hooks: dict) -> str:
    if "memory_on" in hooks:
        on, off = hooks["memory_on"], hooks["memory_off"]
        return (
            f"memory hooks per turn p50: memory on {on['memory_hooks_ms']['p50']} ms "
            f"({on['turns']} turns, pack reads {on['pack_reads'] or 'none'}), memory off "
            f"{off['memory_hooks_ms']['p50']} ms ({off['turns']} turns): memory adds "
            f"{hooks['added_p50_ms']} ms (goal <= {hooks['goal']['added_p50_ms']:g}: "
            f"{'met' if hooks['meets_goal'] else 'MISSED'})"
        )
    memory = hooks["memory_hooks_ms"]
    return (
        f"memory hooks per turn (in {hooks['turns']} turns' traces): p50 {memory['p50']} ms, "
        f"p95 {memory['p95']} ms; pre-turn pack reads {hooks['pack_reads'] or 'none'}"
    )


def render_agentic(data: dict) -> str:
    info = data.get("agentic") or {}
    return render_table(data) + (
        f"\nAgent V2 on: {info.get('chat_turns')} chat turns, "
        f"{info.get('planning_runs_recorded')} planning runs recorded with their replies, "
        f"{info.get('planning_tasks_queued')} planning tasks sent by the turns (the relay "
        "sends them; none runs here)"
    )
