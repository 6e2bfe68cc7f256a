from django.apps import AppConfig


class RoleplayConfig(AppConfig):
    name = "roleplay"
    verbose_name = "Roleplay runtime"

    def ready(self) -> None:
        from roleplay import memory_context, turns, worldbook_context

        for hook in (worldbook_context.apply, memory_context.apply):
            if hook not in turns.CONTEXT_HOOKS:
                turns.CONTEXT_HOOKS.append(hook)
