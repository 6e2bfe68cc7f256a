from roleplay.bench.live_server import running_daphne  # noqa: F401 (temporary)
