from django.apps import AppConfig


class StoryConfig(AppConfig):
    name = "story"
    verbose_name = "Story"

    def ready(self) -> None:
        from story import edits

        edits.connect()  # an edited message a story was built from: back before it
