"""Benchmark helpers: a live daphne in a subprocess, a throwaway tenant, socket clients, the
scripted model server in its own process (answering Agent V2's roles too: ``agentic``), the
in-process Agent V2 runs of ``bench_agent`` (``agent``) and a private Celery queue (``queue``).

Used by ``manage.py bench_turns``, ``bench_prompt`` and ``bench_agent`` and by the browser
tests (the live server).
"""
