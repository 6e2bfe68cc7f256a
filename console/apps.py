from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Console"

    def ready(self) -> None:
        # Bind shared_task definitions to our Celery app in every process (web and worker).
        from console import schema  # noqa: F401  (OpenAPI auth extension)
        from console.celery import app  # noqa: F401
