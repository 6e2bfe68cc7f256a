"""``GET /healthz``: database, Redis, Celery workers and the default model, each named."""

from __future__ import annotations

from django.db import connection
from django.http import JsonResponse


def _database() -> dict:
    try:
        with connection.cursor() as cur:
            cur.execute("SHOW server_version")
            version = cur.fetchone()[0]
            cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cur.fetchone()
        return {"ok": True, "server_version": version, "pgvector": row[0] if row else None}
    except Exception as exc:  # the point of a health check is to report, not raise
        return {"ok": False, "error": type(exc).__name__}


def _redis() -> dict:
    try:
        from django.core.cache import cache

        cache.set("healthz", 1, 5)
        return {"ok": cache.get("healthz") == 1}
    except Exception as exc:
        return {"ok": False, "error": type(exc).__name__}


def _celery() -> dict:
    try:
        from console.celery import app

        # A worker busy for a moment (starting up, say) misses a short ping: ask once more,
        # longer, before calling Celery down.
        replies = app.control.ping(timeout=0.5) or app.control.ping(timeout=1.0) or []
        workers = sorted(name for reply in replies for name in reply)
        return {"ok": bool(workers), "workers": workers}
    except Exception as exc:
        return {"ok": False, "workers": [], "error": type(exc).__name__}


def _llm() -> dict:
    try:
        from roleplay.llm.gateway import provider_config
        from roleplay.models import ModelConfig

        config = ModelConfig.objects.filter(is_default=True, tenant__name="demo").first()
        if config is None:
            config = ModelConfig.objects.filter(is_default=True).first()
        pconfig = provider_config(config)
        ok = True
        if pconfig.provider == "llama_cpp":
            import importlib.util

            ok = importlib.util.find_spec("llama_cpp") is not None
        return {
            "default_config": config.name if config else "env-default",
            "provider": pconfig.provider,
            "ok": ok,
        }
    except Exception as exc:
        return {"default_config": None, "provider": None, "ok": False, "error": type(exc).__name__}


def healthz(request):
    parts = {
        "database": _database(),
        "redis": _redis(),
        "celery": _celery(),
        "llm": _llm(),
    }
    failing = [name for name, part in parts.items() if not part.get("ok")]
    body = {**parts, "ok": not failing, "failing": failing}
    return JsonResponse(body, status=503 if failing else 200)
