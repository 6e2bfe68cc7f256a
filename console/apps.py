from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "Console"

    def ready(self) -> None:
        # Imported for their side effects: the system checks register themselves, schema
        # adds the OpenAPI auth extension, and the Celery app binds shared_task definitions
        # in every process (web and worker).
        from console import audit, checks, db, schema  # noqa: F401
        from console.celery import app  # noqa: F401

        # After django-axes' receivers ("axes" comes first in INSTALLED_APPS), so a failed
        # login is audited knowing whether it locked the account.
        audit.connect()
        db.cap_reconnect_delay()
