from django.urls import include, path, re_path
from rest_framework.routers import DefaultRouter

from memory.api.settings import MemorySettingsView
from roleplay.api import views
from roleplay.characters.api.avatars import CharacterAvatarView
from roleplay.characters.api.card_import import CharacterImportView
from roleplay.compact.api import CheckpointEditViewSet
from roleplay.conversations.api.chat_import import ConversationImportView
from roleplay.conversations.api.group_import import ConversationGroupImportView
from roleplay.dio.api.conversation import DioSubmitViewSet, DioViewSet
from roleplay.frontloop.api import VisualWorldViewSet
from roleplay.moderation.api import CaseViewSet
from roleplay.players.api import PersonaAvatarView, PersonaViewSet
from roleplay.presets.api import PresetViewSet
from roleplay.quotas.api import PlanViewSet
from roleplay.regex_scripts.api import CharacterRegexAllowView, RegexScriptViewSet
from roleplay.scenarios.api import ScenarioViewSet
from roleplay.textgen.api import InstructTemplateViewSet
from roleplay.workflows.api import WorkflowCapabilitiesView
from roleplay.workflows.tools.api import HttpToolEndpointViewSet, McpServerViewSet
from story.api import StoryQuarantineViewSet


class OptionalSlashRouter(DefaultRouter):
    """Routes that match with or without a trailing slash.

    ``DefaultRouter(trailing_slash="/?")`` does not do this: DRF turns any truthy value into a
    plain ``"/"``, so ``POST .../messages/archive`` (the documented form) fell through to
    Django's APPEND_SLASH redirect and lost its body. Setting the attribute after init keeps
    the regex as given.
    """

    def __init__(self):
        super().__init__()
        self.trailing_slash = "/?"


router = OptionalSlashRouter()
router.register("model-configs", views.ModelConfigViewSet, basename="modelconfig")
router.register("characters", views.CharacterViewSet, basename="character")
router.register("players", views.PlayerViewSet, basename="player")
router.register("conversations", views.ConversationViewSet, basename="conversation")
router.register("personas", PersonaViewSet, basename="persona")
router.register("presets", PresetViewSet, basename="preset")
router.register("plans", PlanViewSet, basename="plan")
router.register("scenarios", ScenarioViewSet, basename="scenario")
router.register("regex-scripts", RegexScriptViewSet, basename="regexscript")
router.register("moderation/cases", CaseViewSet, basename="moderationcase")
router.register("instruct-templates", InstructTemplateViewSet, basename="instructtemplate")
router.register("workflow-tools/http", HttpToolEndpointViewSet, basename="httptoolendpoint")
router.register("workflow-tools/mcp", McpServerViewSet, basename="mcpserver")

# Views of their own (a file's body limit), ahead of the router's ``characters/{pk}``.
urlpatterns = [
    re_path(r"^characters/import/?$", CharacterImportView.as_view(), name="character-import"),
    re_path(
        r"^conversations/import/?$", ConversationImportView.as_view(), name="conversation-import"
    ),
    re_path(
        r"^conversations/import-group/?$",
        ConversationGroupImportView.as_view(),
        name="conversation-import-group",
    ),
    re_path(
        r"^characters/(?P<pk>[^/.]+)/avatar/?$",
        CharacterAvatarView.as_view(),
        name="character-avatar",
    ),
    re_path(
        r"^characters/(?P<pk>[^/.]+)/regex-allow/?$",
        CharacterRegexAllowView.as_view(),
        name="character-regex-allow",
    ),
    re_path(
        r"^personas/(?P<pk>[^/.]+)/avatar/?$", PersonaAvatarView.as_view(), name="persona-avatar"
    ),
    re_path(r"^memory/settings/?$", MemorySettingsView.as_view(), name="memory-settings"),
    re_path(
        r"^workflow-capabilities/?$",
        WorkflowCapabilitiesView.as_view(),
        name="workflow-capabilities",
    ),
    re_path(
        r"^conversations/(?P<pk>[^/.]+)/story/quarantine/?$",
        StoryQuarantineViewSet.as_view({"get": "list"}),
        name="conversation-story-quarantine",
    ),
    *[
        re_path(
            rf"^conversations/(?P<pk>[^/.]+)/story/quarantine/(?P<quarantine_id>[^/.]+)/{decision}/?$",
            StoryQuarantineViewSet.as_view({"post": decision}),
            name=f"conversation-story-quarantine-{decision}",
        )
        for decision in ("retry", "discard", "resolve")
    ],
    *[
        re_path(
            rf"^conversations/(?P<pk>[^/.]+)/checkpoints/(?P<version>[^/.]+)/{verb}/?$",
            CheckpointEditViewSet.as_view({"post": handler}),
            name=f"conversation-checkpoint-{verb}",
        )
        for verb, handler in (("edit", "edit"), ("regenerate", "regenerate"), ("delete", "remove"))
    ],
    re_path(
        r"^conversations/(?P<pk>[^/.]+)/visual-world/?$",
        VisualWorldViewSet.as_view({"get": "read", "put": "edit"}),
        name="conversation-visual-world",
    ),
    re_path(
        r"^conversations/(?P<pk>[^/.]+)/visual-world/restore/?$",
        VisualWorldViewSet.as_view({"post": "restore"}),
        name="conversation-visual-world-restore",
    ),
    re_path(
        r"^conversations/(?P<pk>[^/.]+)/dio/?$",
        DioSubmitViewSet.as_view({"post": "submit"}),
        name="conversation-dio",
    ),
    *[
        re_path(
            rf"^conversations/(?P<pk>[^/.]+)/dio/{action}/?$",
            DioViewSet.as_view({method: action}),
            name=f"conversation-dio-{action}",
        )
        for action, method in (("versions", "get"), ("revert", "post"), ("off", "post"))
    ],
    path("", include(router.urls)),
]
