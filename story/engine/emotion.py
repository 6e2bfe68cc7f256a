"""The story's emotion (seed 002, Story, ``emotion`` and ``NarrativeDealBeatTool``'s
``emotionGuide {enabled, valence, arousal, dominance, label, beat}``): a target the plan sets
for its cycle (the feeling the lines' expected experience calls for, with a label) and the
emotion each settled event observed, both as valence (bad–good), arousal (calm–tense) and
dominance (how far the point-of-view side holds the initiative), each in -1..1. They pace the
story; they never change the user's own feelings.

The guide steers from what was last observed toward the target, at most :data:`STEP` per
axis and turn, so a calm scene is not told to be frantic at once; its ``beat`` says whether
the tension should build, hold or release. Without a target it is off (``enabled`` false).
"""

from __future__ import annotations

AXES = ("valence", "arousal", "dominance")
STEP = 0.4
HOLD = 0.05  # an arousal change smaller than this holds the beat
LABEL_CHARS = 80


class EmotionInvalid(ValueError):
    code = "story_emotion_invalid"


def neutral() -> dict:
    return {"target": dict.fromkeys(AXES, 0.0), "observed": dict.fromkeys(AXES, 0.0)}


def axes(data: object, where: str) -> dict[str, float]:
    """``{valence, arousal, dominance}`` each within -1..1; :class:`EmotionInvalid` else."""
    if not isinstance(data, dict) or not set(AXES) <= set(data):
        raise EmotionInvalid(f"{where} needs {', '.join(AXES)}")
    out = {}
    for axis in AXES:
        value = data[axis]
        if isinstance(value, bool) or not isinstance(value, int | float) or not -1 <= value <= 1:
            raise EmotionInvalid(f"{where}.{axis} must be within -1..1")
        out[axis] = float(value)
    return out


def with_target(emotion: dict, proposal: object) -> dict:
    """``emotion`` with the target a plan proposed: ``{valence, arousal, dominance, label}``
    (the label a short non-empty text)."""
    target = axes(proposal, "emotion")
    assert isinstance(proposal, dict)
    label = proposal.get("label")
    if set(proposal) - {*AXES, "label"} or not isinstance(label, str) or not label.strip():
        raise EmotionInvalid("emotion needs valence, arousal, dominance and a label")
    return {**emotion, "target": target, "label": label.strip()[:LABEL_CHARS]}


def guide(emotion: dict) -> dict:
    """The Actor's ``emotionGuide`` for this turn (``emotion`` as the narrative keeps it)."""
    observed = {a: float((emotion.get("observed") or {}).get(a, 0.0)) for a in AXES}
    label = emotion.get("label") or ""
    if not label:
        return {"enabled": False, **observed, "label": "", "beat": "hold"}
    target = {a: float((emotion.get("target") or {}).get(a, 0.0)) for a in AXES}
    aim = {a: round(observed[a] + max(-STEP, min(STEP, target[a] - observed[a])), 2) for a in AXES}
    change = aim["arousal"] - observed["arousal"]
    beat = "build" if change > HOLD else "release" if change < -HOLD else "hold"
    return {"enabled": True, **aim, "label": label, "beat": beat}
