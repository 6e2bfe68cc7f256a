from django.apps import AppConfig


class RoleplayConfig(AppConfig):
    name = "roleplay"
    verbose_name = "Roleplay runtime"

    def ready(self) -> None:
        from roleplay import (
            memory_context,
            memory_learning,
            memory_pack_context,
            memory_runtime,
            memory_tools,
            story_phase,
            worldbook_context,
        )
        from roleplay.agentic import plugin as agentic
        from roleplay.agentic.services import agent_state  # noqa: F401  (its signal receivers)
        from roleplay.compact import ahead as compact_ahead
        from roleplay.compact import plugin as compact_phase
        from roleplay.compact.services import history  # noqa: F401  (its signal receiver)
        from roleplay.services import (  # noqa: F401  (connect their signal receivers)
            consolidation,
            diaries,
            history_events,
            memory_table,
        )
        from roleplay.turns.plugin import PLUGINS

        # The turn's plug-ins (docs/turn-plugins.md): their order is their after/before,
        # checked by ``manage.py check``; this list's order only breaks ties.
        for module in (
            worldbook_context,
            memory_learning,
            memory_context,
            memory_pack_context,
            memory_runtime,
            memory_tools,
            agentic,
            story_phase,
            compact_phase,
            compact_ahead,
        ):
            PLUGINS.register(module.PLUGIN)
