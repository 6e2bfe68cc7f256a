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
        body = {
            "default_config": config.name if config else "env-default",
            "provider": pconfig.provider,
            "ok": True,
        }
        if pconfig.provider == "llama_cpp":
            body.update(_local_model(pconfig))
        return body
    except Exception as exc:
        return {"default_config": None, "provider": None, "ok": False, "error": type(exc).__name__}


def _local_model(pconfig) -> dict:
    """The local model process as its supervisor last reported it (nothing is started here:
    it starts with the first turn, or with ``make run``)."""
    from roleplay.llm.local_supervisor import LocalModelService, supervisor_running
    from roleplay.llm.providers.llama_local import local_model_available, spec_for

    if not local_model_available():
        return {"ok": False, "error": "the local model runtime is not installed"}
    service = LocalModelService(spec_for(pconfig))
    if not supervisor_running(service.directory):
        return {"local_process": "not started"}
    state = service.state()
    return {
        "local_process": "up" if service.healthy(timeout=0.5) else "restarting",
        "restarts": state.get("restarts", 0),
    }


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
