from django.apps import AppConfig


class RoleplayConfig(AppConfig):
    name = "roleplay"
    verbose_name = "Roleplay runtime"

    def ready(self) -> None:
        # Modules imported for their signal receivers.
        from images.signals import slot_changed
        from roleplay.agentic import plugin as agentic
        from roleplay.agentic.services import agent_state  # noqa: F401
        from roleplay.compact import ahead as compact_ahead
        from roleplay.compact import plugin as compact
        from roleplay.compact.services import history  # noqa: F401
        from roleplay.dio import plugin as dio
        from roleplay.frontloop import pictures
        from roleplay.frontloop import plugin as frontloop
        from roleplay.memory_plugin import context as memory_context
        from roleplay.memory_plugin import external as memory_external
        from roleplay.memory_plugin import learning as memory_learning
        from roleplay.memory_plugin import packs as memory_pack
        from roleplay.memory_plugin import tools as memory_tools
        from roleplay.memory_plugin.services import consolidation, diaries, table  # noqa: F401
        from roleplay.moderation import plugin as moderation
        from roleplay.owners import register as register_owners
        from roleplay.story_plugin import phase as story
        from roleplay.turns import history_events  # noqa: F401
        from roleplay.turns.plugin import PLUGINS
        from roleplay.workflows import capabilities  # noqa: F401 - registers them
        from roleplay.workflows import plugin as workflow

        register_owners()  # what Memory's and Story's doors ask of the runtime
        slot_changed.connect(pictures.announce_slot, dispatch_uid="frontloop-pictures")
        from roleplay.worldbook_plugin import context as worldbook

        # The turn's plug-ins (docs/turn-plugins.md): their order is their after/before,
        # checked by ``manage.py check``; this list's order only breaks ties.
        for module in (
            worldbook,
            memory_learning,
            memory_context,
            memory_pack,
            memory_external,
            memory_tools,
            agentic,
            story,
            compact,
            compact_ahead,
            frontloop,
            dio,
            workflow,
            moderation,
        ):
            PLUGINS.register(module.PLUGIN)

        # A suspended or banned player's /app/ pages say why (roleplay.moderation).
        from roleplay.accounts.blockers import BLOCKERS
        from roleplay.moderation.selectors import suspension_reason

        if suspension_reason not in BLOCKERS:
            BLOCKERS.append(suspension_reason)

        # The 20-book limit over every lorebook scope together (worldbook_plugin.limits).
        from roleplay.worldbook_plugin import limits as worldbook_limits
        from worldbook import services as worldbook_services

        worldbook_services.register_limit_check(worldbook_limits.check_turn_limit)

        # Every model call's tokens count against its player's quota (roleplay.quotas).
        from roleplay.llm.gateway import USAGE_HOOKS
        from roleplay.quotas.charging import charge_call

        if charge_call not in USAGE_HOOKS:
            USAGE_HOOKS.append(charge_call)
