"""Pure figures for the turn benchmark: percentiles, per-turn checks, the report shape."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from memory.bench.stats import percentile

TARGETS = {"ttfd_overhead_p50_ms": 30.0, "ttfd_overhead_p99_ms": 120.0}
# ``bench_turns --agentic compare``: with Agent V2, time to first delta within 10 % of
# without, and no delta lost.
AGENTIC_GOAL = {"ttfd_p50_ratio_max": 1.10, "lost_deltas": 0}


@dataclass
class TurnSample:
    """What one client saw of one turn. Times are client-side milliseconds."""

    player: int
    turn: int
    marker: str
    ttfd_ms: float | None = None
    turn_ms: float | None = None
    seqs: list[int] = field(default_factory=list)
    text: str = ""
    final_content: str | None = None
    error: str | None = None
    server_first_chunk_ms: float | None = None
    stray_events: int = 0  # events of another turn seen during this one (late or early)

    @property
    def overhead_ms(self) -> float | None:
        """Time to first delta minus the model server's own time to its first chunk."""
        if self.ttfd_ms is None or self.server_first_chunk_ms is None:
            return None
        return self.ttfd_ms - self.server_first_chunk_ms


def summary(values: Iterable[float | None]) -> dict[str, float | None]:
    present = [v for v in values if v is not None]
    return {
        "p50": percentile(present, 50),
        "p95": percentile(present, 95),
        "p99": percentile(present, 99),
        "max": round(max(present), 2) if present else None,
    }


def lost_deltas(seqs: Sequence[int], expected: int) -> int:
    """How many of the ``expected`` deltas (seq 0..expected-1) never arrived."""
    return len(set(range(expected)) - set(seqs))


def reordered_deltas(seqs: Sequence[int]) -> int:
    """Deltas whose seq is not greater than the one before (out of order or repeated)."""
    return sum(1 for before, after in zip(seqs, seqs[1:], strict=False) if after <= before)


def text_mismatch(sample: TurnSample, expected_text: str) -> bool:
    if sample.error:
        return False  # already counted as an error
    final = sample.final_content if sample.final_content is not None else sample.text
    return sample.text != expected_text or final != expected_text


def run_figures(
    samples: Sequence[TurnSample], *, expected_deltas: int, expected_text: str, wall_s: float
) -> dict:
    """The figures of one run (harness or baseline) from its samples."""
    deltas = sum(len(s.seqs) for s in samples)
    errors = [s for s in samples if s.error]
    codes: dict[str, int] = {}
    for sample in errors:
        codes[sample.error] = codes.get(sample.error, 0) + 1
    return {
        "turns": len(samples),
        "ttfd_overhead_ms": summary(s.overhead_ms for s in samples),
        "ttfd_ms": summary(s.ttfd_ms for s in samples),
        "server_first_chunk_ms": summary(s.server_first_chunk_ms for s in samples),
        "turn_ms": summary(s.turn_ms for s in samples),
        "deltas": deltas,
        "delta_throughput_per_s": round(deltas / wall_s, 1) if wall_s > 0 else None,
        "wall_s": round(wall_s, 3),
        "errors": len(errors),
        "error_codes": codes,
        "lost_deltas": sum(lost_deltas(s.seqs, expected_deltas) for s in samples),
        "reordered_deltas": sum(reordered_deltas(s.seqs) for s in samples),
        "text_mismatches": sum(1 for s in samples if text_mismatch(s, expected_text)),
        "stray_events": sum(s.stray_events for s in samples),
        "unmatched_server_timings": sum(
            1 for s in samples if s.ttfd_ms is not None and s.server_first_chunk_ms is None
        ),
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a is not None and b else None


SATURATION_KEYS = (
    "turns",
    "ttfd_overhead_ms",
    "turn_ms",
    "deltas",
    "delta_throughput_per_s",
    "wall_s",
    "errors",
    "error_codes",
    "lost_deltas",
    "reordered_deltas",
    "text_mismatches",
    "server_cpu_ms_per_turn",
)


def report(
    players: int,
    turns: int,
    harness: dict,
    baseline: dict,
    settings: dict,
    saturation: dict | None = None,
) -> dict:
    """The JSON the command prints: harness figures on top, the SDK-only run as baseline,
    the same players with no think time as ``saturation`` (when they had think time).

    ``ratio`` is harness p50 turn time over baseline p50 turn time (what the harness costs a
    whole turn); ``ttfd_ratio`` the same for time to first delta.
    """
    overhead = harness["ttfd_overhead_ms"]
    return {
        "players": players,
        "turns_per_player": turns,
        **harness,
        "baseline": baseline,
        "ratio": _ratio(harness["turn_ms"]["p50"], baseline["turn_ms"]["p50"]),
        "ttfd_ratio": _ratio(harness["ttfd_ms"]["p50"], baseline["ttfd_ms"]["p50"]),
        "targets": {
            **TARGETS,
            "met": bool(
                overhead["p50"] is not None
                and overhead["p50"] <= TARGETS["ttfd_overhead_p50_ms"]
                and overhead["p99"] <= TARGETS["ttfd_overhead_p99_ms"]
                and harness["errors"] == 0
                and harness["lost_deltas"] == 0
                and harness["reordered_deltas"] == 0
                and harness["turns"] == players * turns
            ),
        },
        "saturation": (
            {key: saturation.get(key) for key in SATURATION_KEYS} if saturation else None
        ),
        "settings": settings,
    }


def render_table(data: dict) -> str:
    """A readable summary of ``report()`` for a terminal."""
    base = data["baseline"]
    rows = [
        ("time to first delta, overhead", data["ttfd_overhead_ms"], base["ttfd_overhead_ms"]),
        ("time to first delta, client", data["ttfd_ms"], base["ttfd_ms"]),
        ("model server first chunk", data["server_first_chunk_ms"], base["server_first_chunk_ms"]),
        ("whole turn", data["turn_ms"], base["turn_ms"]),
    ]

    def cell(figures: dict) -> str:
        return "  ".join(
            f"{key} {figures[key]:8.2f}" if figures[key] is not None else f"{key}      n/a"
            for key in ("p50", "p95", "p99", "max")
        )

    lines = [
        f"bench_turns: {data['players']} players x {data['turns_per_player']} turns "
        f"= {data['turns']} turns measured",
        "",
        f"{'ms':32} harness (WebSocket -> daphne -> turn -> model)",
    ]
    for label, harness, baseline in rows:
        lines.append(f"{label:32} {cell(harness)}")
        lines.append(f"{'  baseline (openai SDK only)':32} {cell(baseline)}")
    lines += [
        "",
        f"delta throughput      {data['delta_throughput_per_s']}/s "
        f"(baseline {base['delta_throughput_per_s']}/s)",
        f"errors {data['errors']} {data['error_codes'] or ''}  lost deltas "
        f"{data['lost_deltas']}  reordered {data['reordered_deltas']}  text mismatches "
        f"{data['text_mismatches']}  stray events {data['stray_events']}",
        f"server CPU per turn {data.get('server_cpu_ms_per_turn')} ms (daphne child)",
        f"ratio (turn p50 harness/baseline) {data['ratio']}   ttfd ratio {data['ttfd_ratio']}",
        f"think time {data['settings'].get('think_ms')} ms before each message",
    ]
    saturation = data.get("saturation")
    if saturation:
        lines += [
            "saturation (the same players, no think time):",
            f"{'  time to first delta, overhead':32} {cell(saturation['ttfd_overhead_ms'])}",
            f"  {saturation['delta_throughput_per_s']} deltas/s, errors {saturation['errors']}, "
            f"lost {saturation['lost_deltas']}, reordered {saturation['reordered_deltas']}, "
            f"server CPU per turn {saturation['server_cpu_ms_per_turn']} ms",
        ]
    lines += [
        f"targets p50 <= {TARGETS['ttfd_overhead_p50_ms']:g} ms, "
        f"p99 <= {TARGETS['ttfd_overhead_p99_ms']:g} ms, no errors/loss: "
        + ("met" if data["targets"]["met"] else "MISSED"),
    ]
    return "\n".join(lines)


def agentic_comparison(without: dict, with_: dict) -> dict:
    """``bench_turns --agentic compare``: the two runs' reports (``report()``) side by side,
    the ratio of their time-to-first-delta p50s (with / without) and the goal check."""

    def pair(*keys: str) -> dict:
        def get(data: dict | None):
            for key in keys:
                data = data.get(key) if isinstance(data, dict) else None
            return data

        return {"without": get(without), "with": get(with_)}

    ttfd = pair("ttfd_ms", "p50")
    ratio = round(ttfd["with"] / ttfd["without"], 3) if ttfd["with"] and ttfd["without"] else None
    lost = pair("lost_deltas")
    errors = pair("errors")
    return {
        "ttfd_p50_ms": ttfd,
        "ttfd_p50_ratio": ratio,
        "ttfd_overhead_p50_ms": pair("ttfd_overhead_ms", "p50"),
        "ttfd_overhead_p99_ms": pair("ttfd_overhead_ms", "p99"),
        "turn_p50_ms": pair("turn_ms", "p50"),
        "server_cpu_ms_per_turn": pair("server_cpu_ms_per_turn"),
        "saturation_ttfd_overhead_p50_ms": pair("saturation", "ttfd_overhead_ms", "p50"),
        "saturation_server_cpu_ms_per_turn": pair("saturation", "server_cpu_ms_per_turn"),
        # each round's p50 in the order the arm ran them (A B B A: without's are 1st and 4th)
        "round_ttfd_p50_ms": {
            arm: [r["ttfd_p50_ms"] for r in data.get("rounds") or []]
            for arm, data in (("without", without), ("with", with_))
        },
        "lost_deltas": lost,
        "errors": errors,
        "goal": dict(AGENTIC_GOAL),
        "meets_goal": bool(
            ratio is not None
            and ratio <= AGENTIC_GOAL["ttfd_p50_ratio_max"]
            and lost["with"] == lost["without"] == AGENTIC_GOAL["lost_deltas"]
            and errors["with"] == errors["without"] == 0
        ),
    }


def render_comparison(comparison: dict) -> str:
    """A readable summary of ``agentic_comparison()``."""

    def row(label: str, key: str) -> str:
        values = comparison[key]
        return f"{label:34} without {values['without']!s:>8}   with {values['with']!s:>8}"

    goal = comparison["goal"]
    return "\n".join(
        [
            "Agent V2 comparison (the same players and turns, without and with Agent V2)",
            row("time to first delta p50, ms", "ttfd_p50_ms"),
            row("  overhead p50, ms", "ttfd_overhead_p50_ms"),
            row("  overhead p99, ms", "ttfd_overhead_p99_ms"),
            row("whole turn p50, ms", "turn_p50_ms"),
            row("server CPU per turn, ms", "server_cpu_ms_per_turn"),
            row("  each round's ttfd p50, ms", "round_ttfd_p50_ms"),
            row("saturation overhead p50, ms", "saturation_ttfd_overhead_p50_ms"),
            row("lost deltas", "lost_deltas"),
            row("errors", "errors"),
            f"ttfd p50 ratio (with / without) {comparison['ttfd_p50_ratio']}; goal <= "
            f"{goal['ttfd_p50_ratio_max']:g} and no lost deltas: "
            + ("met" if comparison["meets_goal"] else "MISSED"),
        ]
    )
