from django.apps import AppConfig


class RoleplayConfig(AppConfig):
    name = "roleplay"
    verbose_name = "Roleplay runtime"

    def ready(self) -> None:
        # connect their signal receivers
        from roleplay import (
            agentic_context,
            compact_ahead,
            compact_phase,
            memory_context,
            memory_learning,
            memory_pack_context,
            memory_runtime,
            story_phase,
            turns,
            worldbook_context,
        )
        from roleplay.services import (  # noqa: F401
            agent_state,
            consolidation,
            diaries,
            history_events,
            memory_table,
        )

        # Learning comes before choosing: a preference stated now applies to this reply.
        for hook in (
            worldbook_context.apply,
            memory_learning.apply,
            memory_context.apply,
            memory_pack_context.apply,
            agentic_context.apply,
            story_phase.read_hook,
            compact_phase.read_hook,
        ):
            if hook not in turns.CONTEXT_HOOKS:
                turns.CONTEXT_HOOKS.append(hook)
        phases = memory_runtime.phases() + story_phase.phases()
        for phase in phases + compact_phase.phases() + compact_ahead.phases():
            turns.register(phase)
