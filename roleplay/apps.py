from django.apps import AppConfig


class RoleplayConfig(AppConfig):
    name = "roleplay"
    verbose_name = "Roleplay runtime"

    def ready(self) -> None:
        from roleplay import (
            agentic_context,
            memory_context,
            memory_learning,
            memory_pack_context,
            turns,
            worldbook_context,
        )

        # connect their signal receivers
        from roleplay.services import agent_state, diaries  # noqa: F401

        # Learning comes before choosing: a preference stated now applies to this reply.
        for hook in (
            worldbook_context.apply,
            memory_learning.apply,
            memory_context.apply,
            memory_pack_context.apply,
            agentic_context.apply,
        ):
            if hook not in turns.CONTEXT_HOOKS:
                turns.CONTEXT_HOOKS.append(hook)
