"""Console pages of image configs, shaped like the model configs' pages: a list with a Test
button (htmx swaps the result into the row; a plain POST gets a page), and the editor."""

from __future__ import annotations

from django.contrib import messages as flash
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.access import console_view, has_role, posted
from console.models import Role
from console.scoping import get_scoped_or_404
from images import selectors
from images.errors import ImagesError
from images.forms import ImageConfigForm
from images.models import ImageConfig
from images.services import configs
from images.services.config_test import run_config_test

LIST_URL = "/console/images/"


def _write(form: ImageConfigForm, service, *args):
    """The service's answer, or None with its coded error shown beside the field it names."""
    try:
        return service(*args, **form.values())
    except ImagesError as exc:
        field = str(exc.details.get("field", "")).split(".")[0]
        form.add_error(field if field in form.fields else None, exc.message)
    return None


@console_view()
def config_list(request):
    query = request.GET.get("q", "").strip()
    rows = [
        (c, selectors.api_key_status(c)) for c in selectors.image_configs(request.tenant, query)
    ]
    return render(request, "images/configs/list.html", {"rows": rows, "query": query})


@console_view(read=Role.ADMIN, write=Role.ADMIN)
def config_create(request):
    form = ImageConfigForm(posted(request))
    if request.method == "POST" and form.is_valid():
        config = _write(form, configs.create_image_config, request.tenant)
        if config is not None:
            flash.success(request, f"Image config “{config.name}” created.")
            return redirect(LIST_URL)
    return render(request, "images/configs/form.html", {"form": form, "config": None})


@console_view(write=Role.ADMIN)
def config_edit(request, pk):
    config = get_scoped_or_404(ImageConfig, request.tenant, pk=pk)
    form = ImageConfigForm(posted(request), instance=config)
    if request.method == "POST" and form.is_valid():
        if _write(form, configs.update_image_config, config) is not None:
            flash.success(request, f"Image config “{config.name}” saved.")
            return redirect(LIST_URL)
    if not has_role(request.membership, Role.ADMIN):
        for field in form.fields.values():
            field.disabled = True
    context = {"form": form, "config": config, "key_status": selectors.api_key_status(config)}
    return render(request, "images/configs/form.html", context)


@console_view(read=Role.ADMIN, write=Role.ADMIN)
def config_delete(request, pk):
    config = get_scoped_or_404(ImageConfig, request.tenant, pk=pk)
    if request.method == "POST":
        configs.delete_image_config(config)
        flash.success(request, f"Image config “{config.name}” deleted.")
        return redirect(LIST_URL)
    return render(request, "console/confirm.html", {
        "title": f"Delete image config “{config.name}”?",
        "message": "Stored pictures stay; pictures still being drawn with it fail.",
        "warning": "", "cancel_url": LIST_URL,
    })  # fmt: skip


@console_view(write=Role.OPERATOR)
@require_POST
def config_test(request, pk):
    """One small real picture (a billed call); htmx swaps the result into the row."""
    config = get_scoped_or_404(ImageConfig, request.tenant, pk=pk)
    context = {"config": config, "result": run_config_test(request.tenant, config)}
    if getattr(request, "htmx", False):
        return render(request, "images/configs/_test_result.html", context)
    return render(request, "images/configs/test.html", context)
