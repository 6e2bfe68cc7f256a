"""DIO: a player's lasting instruction ("from now on, Mira answers in short sentences")
compiled into a complete replacement of the character's prompt, applied from the next turn.

Two backends speak the same protocol (``engine.ports.DioBackend``): our own DIO inside the
product (a Celery compile with the scenario's DIO model config) and an adapter for an
outside DIO service. See ``docs/dio.md``.
"""
