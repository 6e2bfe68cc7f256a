from django.urls import path

from roleplay import views

urlpatterns = [
    path("play/<uuid:conversation_id>/", views.play, name="play"),
]
