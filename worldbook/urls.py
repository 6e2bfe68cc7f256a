"""Console URLs of worldbooks, included at ``/console/worldbooks/``."""

from django.urls import path

from worldbook.views import bindings, books, history, imports, index, playground

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
    path("<uuid:book_id>/", books.book_editor, name="wb_editor"),
    path("<uuid:book_id>/entry-row/", books.entry_row, name="wb_entry_row"),
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
