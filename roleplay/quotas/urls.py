from django.urls import path

from roleplay.quotas import views

urlpatterns = [
    path("console/plans/", views.plans, name="plans"),
    path("console/plans/assign/", views.plan_assign, name="plan_assign"),
    path("console/plans/<uuid:pk>/", views.plan_edit, name="plan_edit"),
    path("console/plans/<uuid:pk>/delete/", views.plan_delete, name="plan_delete"),
    path("app/usage/", views.usage, name="app_usage"),
]
