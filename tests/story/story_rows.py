"""Story rows for the API and console tests: a Story scenario, a user message, and a story
saved through ``story.services.save`` at revision 2 whose event ``e1`` (evidence: that
message) is quarantined."""

from __future__ import annotations

import uuid

from memory import services as message_store
from roleplay.models import Scenario
from story.engine.evidence import capture
from story.models import StoryHead, StoryQuarantine
from story.services import Save, save


def envelope(conversation, *, title="the gate", pending=None, unresolved=()) -> dict:
    return {
        "version": 1,
        "character": str(conversation.character_id),
        "sourceWatermark": 2,
        "world": {
            "foreground": {"id": "w1", "title": title, "phase": "develop", "developRounds": 1},
            "backgrounds": [{"id": "w2", "title": "the patrol", "owner": "watch", "countdown": 3}],
            "undercurrents": [
                {"id": "w3", "title": "a spy", "owner": "guild", "stage": 2, "stageRounds": 1}
            ],
            "seedQueue": [],
            "pendingSignalDemand": None,
            "pendingInjections": [],
            "pendingNextForeground": None,
            "choices": [{"text": "Open the gate", "expect": "trust", "isSignal": False}],
            "protectedOwners": ["Mira"],
            "round": 2,
            "nextId": 4,
            "rng": {"state": 731, "draws": 5},
        },
        "narrative": {
            "main": {"theme": "the archive", "direction": "find the key", "expected": "discovery",
                     "unpaid": [], "cursor": 1, "starve": 0},
            "sub": {"theme": "trust", "direction": "win Mira", "expected": "warmth",
                    "unpaid": [], "cursor": 0, "starve": 1},
            "cycle": {"pending": [{"id": "g1", "serves": "main", "angle": "reveal",
                                   "gist": "the crest", "reward": "", "core": True,
                                   "done": False, "priority": 3, "prerequisites": []}],
                      "needPlan": False, "number": 1, "trialSince": None},
            "emotion": {"target": {"valence": 0.2, "arousal": 0.1, "dominance": 0.0},
                        "observed": {"valence": 0.0, "arousal": 0.0, "dominance": 0.0}},
            "clock": {"settledEvents": [], "completedGoals": [], "recentDirections": [],
                      "dealtThisTurn": "g1", "eventCount": 0},
            "deal": {"recentLines": ["main"], "dealt": ["g1"]},
            "nextGoal": 2,
        },
        "acceptedTurns": [],
        "event": {"id": "e2", "title": "at the gate", "evidence": [], "attempts": []},
        "unresolved": list(unresolved),
        "nextEvent": 3,
        "pendingActor": pending,
        "acceptedMessage": None,
    }  # fmt: skip


def make_scenario(tenant) -> Scenario:
    return Scenario.objects.create(tenant=tenant, name="Harbour story", story_v1={})


def make_said(conversation):
    """A user message of the conversation: the evidence of event ``e1``."""
    return message_store.save_message(
        conversation.tenant, conversation.session_id, role="user", content="I show the key."
    )


def write(conversation, scenario, expected, env, *, status="ready", outcome="prepared", **extra):
    return save(
        Save(
            tenant_id=conversation.tenant_id,
            conversation_id=conversation.pk,
            scenario_id=scenario.pk,
            character_id=conversation.character_id,
            expected=expected,
            envelope=env,
            status=status,
            outcome=outcome,
            **extra,
        )
    )


def make_story(conversation, scenario, said) -> StoryHead:
    """Revision 1 (prepared, with what the Actor saw), then revision 2 with event ``e1``
    quarantined (its evidence: ``said``)."""
    piece = capture(str(said.id), said.content, "user_action", 1).as_json()
    pending = {"messageId": str(uuid.uuid4()), "userMessageId": str(said.id),
               "userContentHash": piece["sha256"], "stage": {"event": {"title": "the gate"}},
               "sourcePosition": 1, "prepared": {"secret": "the engine's copy"}}  # fmt: skip
    seen = {"stage": {"event": {"title": "the gate", "phase": "start"}}, "narrative": {}}
    write(conversation, scenario, 0, envelope(conversation, pending=pending), stage=seen,
          source_position=1, message_id=said.id)  # fmt: skip
    attempts = [{"source_position": p, "outcome": "unknown", "diagnostic": ""} for p in (1, 2, 3)]
    write(
        conversation, scenario, 1, envelope(conversation, title="inside"), outcome="settled",
        source_position=2,
        events=[{"event_id": "e1", "title": "the key", "status": "quarantined",
                 "evidence": [piece], "attempts": attempts}],
        quarantines=[{"event_id": "e1", "record": {"type": "story_event_quarantine",
                                                   "event_id": "e1", "reason": "attempts",
                                                   "evidence": [piece], "attempts": attempts}}],
    )  # fmt: skip
    return StoryHead.objects.get(conversation=conversation)


def record(conversation) -> StoryQuarantine:
    return StoryQuarantine.objects.get(conversation=conversation)
