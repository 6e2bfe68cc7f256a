from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Console"

    def ready(self) -> None:
        # Bind shared_task definitions to our Celery app in every process (web and worker).
        from console import audit, schema  # noqa: F401  (schema: OpenAPI auth extension)
        from console.celery import app  # noqa: F401

        # After django-axes' receivers ("axes" comes first in INSTALLED_APPS), so a failed
        # login is audited knowing whether it locked the account.
        audit.connect()
