from django.apps import AppConfig


class StoryConfig(AppConfig):
    name = "story"
    verbose_name = "Story"
