from django.apps import AppConfig


class WorldbookConfig(AppConfig):
    name = "worldbook"
    verbose_name = "Worldbook"
