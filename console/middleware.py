"""Request id propagation: honour an incoming X-Request-ID or mint one, echo it back.

Sync and async capable: under ASGI a sync-only middleware forces a thread hop (and back)
around everything inside it on every request.
"""

from __future__ import annotations

import re
import uuid

from asgiref.sync import iscoroutinefunction, markcoroutinefunction

from console.logging import request_id_var

_VALID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def _request_id(request) -> str:
    incoming = request.headers.get("X-Request-ID", "")
    return incoming if _VALID.match(incoming) else uuid.uuid4().hex


class RequestIdMiddleware:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request):
        if self.is_async:
            return self.__acall__(request)
        request.request_id = _request_id(request)
        token = request_id_var.set(request.request_id)
        try:
            response = self.get_response(request)
        finally:
            request_id_var.reset(token)
        response["X-Request-ID"] = request.request_id
        return response

    async def __acall__(self, request):
        request.request_id = _request_id(request)
        token = request_id_var.set(request.request_id)
        try:
            response = await self.get_response(request)
        finally:
            request_id_var.reset(token)
        response["X-Request-ID"] = request.request_id
        return response
