"""Structured (JSON) logs carrying the request or turn id of the work that wrote them."""

from __future__ import annotations

import contextvars
import json
import logging
import time

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
turn_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("turn_id", default="-")


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        record.turn_id = turn_id_var.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line; never includes secrets (callers log ids, not payloads)."""

    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "ts": round(time.time(), 3),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
            "request_id": getattr(record, "request_id", "-"),
            "turn_id": getattr(record, "turn_id", "-"),
        }
        for key in ("tenant", "conversation", "code", "duration_ms"):
            if hasattr(record, key):
                payload[key] = getattr(record, key)
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return json.dumps(payload, ensure_ascii=False, default=str)
