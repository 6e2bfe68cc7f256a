"""Every exception given a stable ``code`` when raised is one of ``console.failures``' kinds, so
``console.errors.exception_handler`` maps it to HTTP in one place (``ApiError``, the API
layer's explicit-status error, is the one exception)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from rest_framework.test import APIRequestFactory

from console.errors import ApiError, exception_handler
from console.failures import DomainError

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("console", "roleplay", "memory", "story", "worldbook")


def _assigns_code(node: ast.ClassDef) -> bool:
    """The class is given its code when raised: it sets ``self.code``."""
    for sub in ast.walk(node):
        targets = sub.targets if isinstance(sub, ast.Assign) else []
        for target in targets:
            for leaf in ast.walk(target):
                if (
                    isinstance(leaf, ast.Attribute)
                    and leaf.attr == "code"
                    and isinstance(leaf.value, ast.Name)
                    and leaf.value.id == "self"
                ):
                    return True
    return False


def _coded_classes():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names = [n.name for n in tree.body if isinstance(n, ast.ClassDef) and _assigns_code(n)]
            if not names:
                continue
            module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
            for name in names:
                cls = getattr(module, name)
                if isinstance(cls, type) and issubclass(cls, BaseException):
                    yield f"{module.__name__}.{name}", cls


def test_every_coded_exception_is_a_domain_error():
    found = dict(_coded_classes())
    assert "console.errors.ApiError" in found  # the scan sees what it is meant to
    outside = sorted(
        name for name, cls in found.items() if not issubclass(cls, DomainError | ApiError)
    )
    assert outside == []


def test_gateway_failures_map_by_kind():
    from roleplay.llm.errors import ModelBadResponse, ModelTimeout

    request = APIRequestFactory().get("/api/v1/x")
    timeout = exception_handler(ModelTimeout("slow"), {"request": request})
    assert (timeout.status_code, timeout.data["error"]["code"]) == (503, "model_timeout")
    bad = exception_handler(ModelBadResponse("junk"), {"request": request})
    assert (bad.status_code, bad.data["error"]["code"]) == (502, "model_bad_response")
    assert ModelTimeout("slow").retryable and str(ModelTimeout("slow")) == "slow"
