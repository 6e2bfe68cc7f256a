from django.urls import path

from roleplay.moderation.views import app, console

urlpatterns = [
    path("app/report/", app.report, name="app_report"),
    path("console/moderation/", console.queue, name="moderation_queue"),
    path("console/moderation/policy/", console.policy, name="moderation_policy"),
    path("console/moderation/<uuid:pk>/", console.case, name="moderation_case"),
    path("console/moderation/<uuid:pk>/act/", console.act, name="moderation_act"),
    path("console/moderation/players/<int:pk>/lift/", console.lift, name="moderation_lift"),
]
