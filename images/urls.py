"""Console URLs of images, included at ``/console/images/``."""

from django.urls import path

from images.views import configs, files

urlpatterns = [
    path("", configs.config_list, name="image_configs"),
    path("new/", configs.config_create, name="image_config_create"),
    path("<uuid:pk>/", configs.config_edit, name="image_config_edit"),
    path("<uuid:pk>/delete/", configs.config_delete, name="image_config_delete"),
    path("<uuid:pk>/test/", configs.config_test, name="image_config_test"),
    path("files/<str:signed>/", files.image_file, name="image_file"),
]
