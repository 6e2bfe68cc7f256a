from django.urls import path

from roleplay import views
from roleplay.agentic import views as views_agent
from roleplay.branches import views as branch_views
from roleplay.characters import views as views_characters
from roleplay.compact import views as compact_views
from roleplay.conversations import views_import as views_chat_import
from roleplay.conversations import views_play
from roleplay.dio import views as dio_views
from roleplay.frontloop import views as frontloop_views
from roleplay.llm import views as views_model_calls
from roleplay.players import views as views_personas
from roleplay.presets import views as views_presets
from roleplay.regex_scripts import views as regex_views
from roleplay.scenarios import views as views_scenarios
from roleplay.textgen import views as textgen_views
from roleplay.workflows import views as workflow_views

urlpatterns = [
    path("play/<uuid:conversation_id>/", views_play.play, name="play"),
    path("play/<uuid:pk>/branch/", branch_views.branch, name="play_branch"),
    path("play/<uuid:pk>/bookmarks/", branch_views.add_bookmark, name="play_bookmarks"),
    path(
        "play/<uuid:pk>/bookmarks/<uuid:bookmark_id>/delete/",
        branch_views.delete_bookmark,
        name="play_bookmark_delete",
    ),
    # Console pages of the runtime.
    path("console/characters/", views.character_list, name="characters"),
    path("console/characters/new/", views.character_create, name="character_create"),
    path("console/characters/import/", views_characters.character_import, name="character_import"),
    path("console/characters/<uuid:pk>/", views.character_edit, name="character_edit"),
    path("console/characters/<uuid:pk>/delete/", views.character_delete, name="character_delete"),
    path(
        "console/characters/<uuid:pk>/export/",
        views_characters.character_export,
        name="character_export",
    ),
    path(
        "console/characters/<uuid:pk>/chat/",
        views_characters.character_chat,
        name="character_chat",
    ),
    path(
        "console/characters/<uuid:pk>/avatar/",
        views_characters.character_avatar,
        name="character_avatar",
    ),
    path("console/conversations/", views.conversation_list, name="conversations"),
    path("console/conversations/new/", views.conversation_create, name="conversation_create"),
    path(
        "console/conversations/import/",
        views_chat_import.conversation_import,
        name="conversation_import",
    ),
    path(
        "console/conversations/<uuid:pk>/export/",
        views_chat_import.conversation_export,
        name="conversation_export",
    ),
    path(
        "console/conversations/<uuid:pk>/export-group/",
        views_chat_import.conversation_export_group,
        name="conversation_export_group",
    ),
    path(
        "console/conversations/<uuid:pk>/",
        views.conversation_detail,
        name="conversation_detail",
    ),
    path(
        "console/conversations/<uuid:pk>/agent/",
        views_agent.conversation_agent,
        name="conversation_agent",
    ),
    path(
        "console/conversations/<uuid:pk>/agent/restore/",
        views_agent.conversation_agent_restore,
        name="conversation_agent_restore",
    ),
    path(
        "console/conversations/<uuid:pk>/agent/runs/<uuid:turn_id>/",
        views_agent.conversation_agent_run,
        name="conversation_agent_run",
    ),
    path(
        "console/conversations/<uuid:pk>/dio/",
        dio_views.conversation_dio,
        name="conversation_dio",
    ),
    path(
        "console/conversations/<uuid:pk>/visual-world/",
        frontloop_views.visual_world,
        name="conversation_visual_world",
    ),
    path(
        "console/conversations/<uuid:pk>/workflow-runs/",
        workflow_views.conversation_workflow_runs,
        name="conversation_workflow_runs",
    ),
    path(
        "console/conversations/<uuid:pk>/summaries/",
        compact_views.conversation_summaries,
        name="conversation_summaries",
    ),
    path(
        "console/conversations/<uuid:pk>/summaries/<int:version>/",
        compact_views.conversation_summary,
        name="conversation_summary",
    ),
    path(
        "console/conversations/<uuid:pk>/author-note/",
        views.conversation_author_note,
        name="conversation_author_note",
    ),
    path(
        "console/conversations/<uuid:pk>/persona/",
        views_personas.conversation_persona,
        name="conversation_persona",
    ),
    path("console/players/", views_personas.player_list, name="players"),
    path(
        "console/players/<int:pk>/personas/",
        views_personas.player_personas,
        name="player_personas",
    ),
    path("console/personas/<uuid:pk>/", views_personas.persona_edit, name="persona_edit"),
    path(
        "console/personas/<uuid:pk>/default/",
        views_personas.persona_make_default,
        name="persona_make_default",
    ),
    path(
        "console/personas/<uuid:pk>/delete/", views_personas.persona_delete, name="persona_delete"
    ),
    path(
        "console/personas/<uuid:pk>/avatar/", views_personas.persona_avatar, name="persona_avatar"
    ),
    path("console/scenarios/", views_scenarios.scenario_list, name="scenarios"),
    path("console/scenarios/new/", views_scenarios.scenario_create, name="scenario_create"),
    path("console/scenarios/<uuid:pk>/", views_scenarios.scenario_edit, name="scenario_edit"),
    path(
        "console/scenarios/<uuid:pk>/delete/",
        views_scenarios.scenario_delete,
        name="scenario_delete",
    ),
    path("console/models/", views.model_config_list, name="model_configs"),
    path("console/models/calls/", views_model_calls.model_calls, name="model_calls"),
    path("console/models/new/", views.model_config_create, name="model_config_create"),
    path("console/models/templates/", textgen_views.template_list, name="instruct_templates"),
    path(
        "console/models/templates/<uuid:pk>/delete/",
        textgen_views.template_delete,
        name="instruct_template_delete",
    ),
    path("console/models/<uuid:pk>/", views.model_config_edit, name="model_config_edit"),
    path(
        "console/models/<uuid:pk>/delete/",
        views.model_config_delete,
        name="model_config_delete",
    ),
    path(
        "console/models/<uuid:pk>/default/",
        views.model_config_make_default,
        name="model_config_make_default",
    ),
    path("console/models/<uuid:pk>/test/", views.model_config_test, name="model_config_test"),
    path("console/regex-scripts/", regex_views.script_list, name="regex_scripts"),
    path("console/regex-scripts/new/", regex_views.script_create, name="regex_script_create"),
    path("console/regex-scripts/import/", regex_views.script_import, name="regex_script_import"),
    path("console/regex-scripts/<uuid:pk>/", regex_views.script_edit, name="regex_script_edit"),
    path(
        "console/regex-scripts/<uuid:pk>/delete/",
        regex_views.script_delete,
        name="regex_script_delete",
    ),
    path(
        "console/characters/<uuid:pk>/regex-allow/",
        regex_views.character_allow,
        name="character_regex_allow",
    ),
    path("console/presets/", views_presets.preset_list, name="presets"),
    path("console/presets/new/", views_presets.preset_create, name="preset_create"),
    path("console/presets/import/", views_presets.preset_import, name="preset_import"),
    path("console/presets/default/", views_presets.preset_default, name="preset_default"),
    path(
        "console/presets/default/preview/",
        views_presets.preset_preview,
        name="preset_default_preview",
    ),
    path("console/presets/<uuid:pk>/", views_presets.preset_edit, name="preset_edit"),
    path("console/presets/<uuid:pk>/preview/", views_presets.preset_preview, name="preset_preview"),
    path("console/presets/<uuid:pk>/delete/", views_presets.preset_delete, name="preset_delete"),
    path("console/presets/<uuid:pk>/export/", views_presets.preset_export, name="preset_export"),
]
