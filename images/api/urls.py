"""REST routes of images, mounted under ``/api/v1/``."""

from django.urls import path, re_path

from images.api import views

urlpatterns = [
    re_path(r"^image-configs/?$", views.ConfigsView.as_view(), name="image-configs"),
    re_path(
        r"^image-configs/(?P<config_id>[^/.]+)/?$",
        views.ConfigDetailView.as_view(),
        name="image-config",
    ),
    re_path(
        r"^image-configs/(?P<config_id>[^/.]+)/test/?$",
        views.ConfigTestView.as_view(),
        name="image-config-test",
    ),
    re_path(r"^images/generations/?$", views.GenerationsView.as_view(), name="image-generations"),
    path("images/files/<str:signed>", views.FileView.as_view(), name="image-file"),
]
