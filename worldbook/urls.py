"""Console URLs of worldbooks, included at ``/console/worldbooks/``."""

from django.urls import path

from worldbook.views import bindings, books, editor, entries, history, imports, index, playground

urlpatterns = [
    path("", books.book_list, name="wb_books"),
    path("new/", books.book_create, name="wb_book_create"),
    path("import/", imports.import_upload, name="wb_import"),
    path("import/<str:token>/", imports.import_preview, name="wb_import_preview"),
    path("playground/", playground.playground, name="wb_playground"),
    path(
        "bindings/<uuid:character_id>/",
        bindings.character_bindings,
        name="wb_character_bindings",
    ),
    path("scopes/global/", bindings.global_bindings, name="wb_global_bindings"),
    path(
        "scopes/scenario/<uuid:scenario_id>/",
        bindings.scenario_bindings,
        name="wb_scenario_bindings",
    ),
    path("scopes/chat/<uuid:conversation_id>/", bindings.chat_bindings, name="wb_chat_bindings"),
    path(
        "scopes/persona/<uuid:persona_id>/", bindings.persona_bindings, name="wb_persona_bindings"
    ),
    path("<uuid:book_id>/", editor.book_editor, name="wb_editor"),
    path("<uuid:book_id>/bulk/", editor.bulk_action, name="wb_bulk"),
    path("<uuid:book_id>/draft/publish/", editor.draft_publish, name="wb_draft_publish"),
    path("<uuid:book_id>/draft/discard/", editor.draft_discard, name="wb_draft_discard"),
    path("<uuid:book_id>/draft/rebase/", editor.draft_rebase, name="wb_draft_rebase"),
    path("<uuid:book_id>/draft/restore/", editor.draft_restore, name="wb_draft_restore"),
    path("<uuid:book_id>/draft/book/", editor.draft_book_fields, name="wb_draft_book"),
    path("<uuid:book_id>/draft/changes/", editor.draft_changes, name="wb_draft_changes"),
    path("<uuid:book_id>/entries/row/", entries.entry_row, name="wb_entry_row"),
    path("<uuid:book_id>/entries/save/", entries.entry_save, name="wb_entry_save"),
    path("<uuid:book_id>/entries/add/", entries.entry_add, name="wb_entry_add"),
    path("<uuid:book_id>/entries/revert/", entries.entry_revert, name="wb_entry_revert"),
    path("<uuid:book_id>/revisions/", history.revision_list, name="wb_revisions"),
    path(
        "<uuid:book_id>/revisions/<int:revision>/",
        history.revision_detail,
        name="wb_revision",
    ),
    path(
        "<uuid:book_id>/revisions/<int:revision>/export/",
        books.export_revision,
        name="wb_export",
    ),
    path("<uuid:book_id>/diff/", history.revision_diff, name="wb_diff"),
    path("<uuid:book_id>/index/", index.index_page, name="wb_index"),
    path("<uuid:book_id>/index/status/", index.index_status, name="wb_index_status"),
    path("<uuid:book_id>/index/build/", index.index_build, name="wb_index_build"),
]
