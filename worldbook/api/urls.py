from django.urls import path

from worldbook.api import views

urlpatterns = [
    path("books", views.BooksView.as_view()),
    path("books/<str:book_id>", views.BookDetailView.as_view()),
    path("books/<str:book_id>/revisions", views.RevisionsView.as_view()),
    path("books/<str:book_id>/revisions/<int:revision>", views.RevisionDetailView.as_view()),
    path("books/<str:book_id>/revisions/<int:revision>/export", views.ExportView.as_view()),
    path("books/<str:book_id>/index", views.IndexView.as_view()),
    path("imports", views.NativeImportView.as_view()),
    path("imports/preview", views.ImportPreviewView.as_view()),
    path("imports/files", views.ImportFilesView.as_view()),
    path("context/select", views.SelectView.as_view()),
    path("search", views.SearchView.as_view()),
    path("prompt-bindings", views.BindingsView.as_view()),
    path("prompt-bindings/resolve", views.ResolveBindingsView.as_view()),
    path("scope-bindings", views.ScopeBindingsView.as_view()),
    path("scope-settings", views.ScopeSettingsView.as_view()),
]
