"""``/v1/chat`` and ``/v1/director/...``: our DIO's protocol endpoints (``api.protocol``)."""

from django.urls import path

from roleplay.dio.api.protocol import DioActivePromptView, DioChatView, DioTaskView

urlpatterns = [
    path("chat", DioChatView.as_view(), name="dio-chat"),
    path("director/tasks/by-request/<path:request_id>", DioTaskView.as_view(), name="dio-task"),
    path("director/active-prompt", DioActivePromptView.as_view(), name="dio-active-prompt"),
]
