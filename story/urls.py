"""Story's console page of a conversation (``/console/conversations/<id>/story/``) and its
quarantine decisions. Included at the site's root (``console.urls``); the REST door is
``story.api``."""

from django.urls import path

from story import views

urlpatterns = [
    path(
        "console/conversations/<uuid:pk>/story/",
        views.conversation_story,
        name="conversation_story",
    ),
    path(
        "console/conversations/<uuid:pk>/story/quarantine/<uuid:quarantine_id>/",
        views.conversation_story_quarantine,
        name="conversation_story_quarantine",
    ),
]
