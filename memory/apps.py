from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"

    def ready(self) -> None:
        from console import history
        from memory import selectors
        from memory.entries import beliefs  # noqa: F401 - connects its signal receivers
        from memory.recall import indexing  # noqa: F401 - connects its signal receivers

        history.provide_texts(selectors.message_texts)  # the history other capabilities read
