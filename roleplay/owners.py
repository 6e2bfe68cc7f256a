"""The runtime's answers to the capabilities' ports, registered when the app is ready:
its conversations, characters and their names for Memory's and Story's doors
(``console.owners``), and the services memory's REST door hands work to
(``memory.runtime``)."""

from __future__ import annotations

from console import owners
from memory import runtime
from roleplay import labels
from roleplay.memory_plugin.services import claims, consolidation
from roleplay.models import Character, Conversation
from roleplay.players.selectors import player_sessions, speaker_names
from roleplay.scenarios.selectors import scenario_for


def register() -> None:
    owners.PORT.register(
        owners.Owners(
            conversation=Conversation,
            character=Character,
            scenario_of=scenario_for,
            player_sessions=player_sessions,
            conversation_title=labels.conversation_title,
            conversation_labels=labels.conversation_labels,
            name_rows=labels.name_rows,
            name_evidence=labels.name_evidence,
            message_snippets=labels.message_snippets,
            speaker_names=speaker_names,
        )
    )
    runtime.PORT.register(
        runtime.MemoryRuntime(
            prepare=claims.prepare,
            commit=claims.commit,
            consolidation_settings=consolidation.settings_for,
            request_consolidation=consolidation.request_runs,
        )
    )
