"""Worldbook raises its own errors: one tree, a kind per class, and no HTTP below ``api/``.

The kinds decide the statuses the API has always answered with, so a class that lands on the
wrong side of the multiple inheritance (an importer's 413 turning into a 400) fails here
before an integrator sees it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from console.failures import HTTP_STATUS
from worldbook import errors
from worldbook.engine.errors import EngineError, SelectionError
from worldbook.engine.importers.errors import FileTooLarge, ImportFailure, TooManyEntries
from worldbook.engine.schema import PublishError

ROOT = Path(__file__).resolve().parents[2] / "worldbook"


@pytest.mark.parametrize(
    ("error", "status", "code"),
    [
        (errors.invalid("bad"), 422, "validation_error"),
        (errors.not_found("gone"), 404, "not_found"),
        (errors.RevisionConflict(3, 2), 409, "revision_conflict"),
        (errors.IndexBusy(), 409, "index_busy"),
        (errors.TooLarge("file_too_large", "big"), 413, "file_too_large"),
        (errors.BadRequest("invalid_format", "no"), 400, "invalid_format"),
        (SelectionError("required_unplaceable", "x"), 422, "required_unplaceable"),
        (PublishError("dependency_cycle", "x"), 422, "dependency_cycle"),
        (ImportFailure("invalid_json", "x"), 400, "invalid_json"),
        (FileTooLarge("file_too_large", "x"), 413, "file_too_large"),
        (TooManyEntries("too_many_entries", "x"), 422, "too_many_entries"),
    ],
)
def test_each_class_keeps_its_status_and_code(error, status, code):
    assert isinstance(error, errors.WorldbookError)
    assert HTTP_STATUS[error.kind] == status
    assert error.code == code
    assert error.to_dict()["code"] == code


def test_engine_errors_are_worldbook_errors():
    for cls in (SelectionError, PublishError, ImportFailure, FileTooLarge, TooManyEntries):
        assert issubclass(cls, EngineError) and issubclass(cls, errors.WorldbookError)


def test_a_revision_conflict_carries_the_current_revision():
    exc = errors.RevisionConflict(5, 4)
    assert exc.details == {"current_revision": 5, "expected_revision": 4}
    assert "revision 5, not 4" in exc.message


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def _modules(*, exclude: str | None = None):
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if exclude and relative.parts[0] == exclude:
            continue
        yield relative, _imports(path)


def test_only_the_api_package_knows_drf_and_http_errors():
    offenders = [
        (str(relative), name)
        for relative, names in _modules(exclude="api")
        for name in names
        if name.startswith("rest_framework") or name in ("console.errors", "drf_spectacular")
    ]
    assert offenders == []


def test_errors_and_engine_import_no_django():
    checked = [ROOT / "errors.py", *sorted((ROOT / "engine").rglob("*.py"))]
    offenders = [
        (str(path.relative_to(ROOT)), name)
        for path in checked
        for name in _imports(path)
        if name.split(".")[0] in ("django", "rest_framework")
    ]
    assert len(checked) > 10 and offenders == []
