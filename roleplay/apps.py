from django.apps import AppConfig


class RoleplayConfig(AppConfig):
    name = "roleplay"
    verbose_name = "Roleplay runtime"

    def ready(self) -> None:
        from roleplay import turns, worldbook_context

        if worldbook_context.apply not in turns.CONTEXT_HOOKS:
            turns.CONTEXT_HOOKS.append(worldbook_context.apply)
