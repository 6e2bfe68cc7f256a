"""REST routes of images, mounted under ``/api/v1/``."""

from django.urls import path, re_path

from images.api import views

urlpatterns = [
    re_path(r"^image-configs/?$", views.ConfigsView.as_view(), name="imageconfig-list"),
    re_path(
        r"^image-configs/(?P<config_id>[^/.]+)/?$",
        views.ConfigDetailView.as_view(),
        name="imageconfig-detail",
    ),
    re_path(
        r"^image-configs/(?P<config_id>[^/.]+)/test/?$",
        views.ConfigTestView.as_view(),
        name="imageconfig-test",
    ),
    re_path(
        r"^images/generations/?$", views.GenerationsView.as_view(), name="imagegeneration-list"
    ),
    path("images/files/<str:signed>", views.FileView.as_view(), name="imagefile-detail"),
]
