"""The import wizard: upload a file → preview the normalized book and its report → confirm.

The preview runs the same parser and publish checks as the import itself, so what the
operator approves is what gets saved; nothing is written before the confirm step, which
calls ``import_files`` (the API's all-or-nothing, deduplicating import).
"""

from __future__ import annotations

from django.contrib import messages as flash
from django.shortcuts import redirect, render

from console.access import console_view
from console.models import Role
from worldbook import services
from worldbook.errors import WorldbookError
from worldbook.forms import ImportUploadForm
from worldbook.views import staging
from worldbook.views.common import error_context, status_for


@console_view(read=Role.OPERATOR)
def import_upload(request):
    posted = request.method == "POST"
    form = ImportUploadForm(request.POST, request.FILES) if posted else ImportUploadForm()
    error = None
    status = 200
    if posted and form.is_valid():
        upload = form.cleaned_data["file"]
        name = upload.name or "upload"
        try:
            if upload.size > services.MAX_FILE_BYTES:
                raise services.file_too_large(name)
            data = upload.read()
            result = services.parse_upload(name, data)
            services.validate_book(result.book)
        except WorldbookError as exc:
            error, status = error_context(exc), status_for(exc)
        else:
            token = staging.stage(request, name, data)
            return redirect("wb_import_preview", token=token)
    elif posted:
        status = 400
    return render(
        request, "worldbook/import_upload.html", {"form": form, "error": error}, status=status
    )


@console_view(read=Role.OPERATOR)
def import_preview(request, token):
    """GET: the report and the normalized entries. POST: ``action=confirm`` imports,
    ``action=cancel`` discards the staged file."""
    staged = staging.load(request, token)
    if request.method == "POST" and request.POST.get("action") == "cancel":
        staging.discard(request, token)
        flash.info(request, f"Import of {staged.name} cancelled.")
        return redirect("wb_import")
    error = None
    status = 200
    if request.method == "POST":
        try:
            results = services.import_files(
                request.tenant, [services.Upload(staged.name, staged.data)]
            )
        except WorldbookError as exc:
            error, status = error_context(exc), status_for(exc)
        else:
            staging.discard(request, token)
            result = results[0]
            if result["deduplicated"]:
                flash.info(
                    request,
                    f"{staged.name} was imported before; this is the book it created "
                    f"(revision {result['revision']}).",
                )
            else:
                flash.success(request, f"Imported {staged.name} as a new book.")
            return redirect("wb_editor", book_id=result["book_id"])
    context = {"staged": staged, "error": error, "result": None, "book_error": None}
    try:
        result = services.parse_upload(staged.name, staged.data)
    except WorldbookError as exc:  # the parser changed since the upload: show why
        context["error"] = error_context(exc)
        return render(request, "worldbook/import_preview.html", context, status=status_for(exc))
    try:
        services.validate_book(result.book)
    except WorldbookError as exc:
        context["book_error"] = error_context(exc)
    context.update(
        result=result,
        report=result.report,
        entries=result.book.get("entries") or [],
        blocked_ids={item["entry_id"] for item in result.report.get("runtime_blocked", [])},
    )
    return render(request, "worldbook/import_preview.html", context, status=status)
