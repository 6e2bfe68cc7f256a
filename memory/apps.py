from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"

    def ready(self) -> None:
        from memory.entries import beliefs  # noqa: F401 - connects its signal receivers
        from memory.recall import indexing  # noqa: F401 - connects its signal receivers
