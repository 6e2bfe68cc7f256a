"""Benchmark helpers: a live daphne in a subprocess, a throwaway tenant, socket clients.

Used by ``manage.py bench_turns`` and by the browser tests (the live server).
"""
