from django.apps import AppConfig


class ImagesConfig(AppConfig):
    name = "images"
    verbose_name = "Images"

    def ready(self) -> None:
        from images import receivers

        receivers.connect()
