"""Writes of imported templates, and the text-completion rules of a model config's write.

Every door (REST, console) imports a file here: a SillyTavern instruct or context template,
or a ``tokenizer_config.json`` whose ``chat_template`` is the model's own Jinja template
(kind ``jinja``). The engine checks it — a Jinja template is compiled and renders a probe
chat — so a file that cannot be used is 422 ``instruct_template_invalid`` naming the field,
when it is saved; the configs that name the template get its new body, so a turn renders
with what was imported last."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db import transaction

from roleplay.services import rows

from .configs import OWN_TEMPLATE, RESERVED_NAMES
from .engine import TemplateError, parse_template_file
from .engine.gguf import read_template
from .engine.jinja import is_tokenizer_config, parse_tokenizer_config
from .errors import TemplateRefused
from .models import InstructTemplate, TemplateKind

_FIELDS = ("name", "kind", "instruct", "context", "jinja")

MAX_TEMPLATES = 200


def checked_body(raw: Any) -> dict[str, Any]:
    """The template's stored fields: ``kind``, and ``instruct`` and ``context`` of a
    SillyTavern file or ``jinja`` of a tokenizer config, in the engine's shape."""
    try:
        if is_tokenizer_config(raw):
            jinja = parse_tokenizer_config(raw)
            return {"kind": TemplateKind.JINJA, "instruct": None, "context": None,
                    "jinja": jinja.to_dict()}  # fmt: skip
        instruct, context = parse_template_file(raw)
    except TemplateError as exc:
        raise TemplateRefused.from_engine(exc) from exc
    return {
        "kind": TemplateKind.SILLYTAVERN,
        "instruct": instruct.to_dict() if instruct else None,
        "context": context.to_dict() if context else None,
        "jinja": None,
    }


def file_name(raw: Any) -> str:
    """The name a file gives itself (its instruct template's, else its context's)."""
    if not isinstance(raw, dict):
        return ""
    for part in (raw.get("instruct"), raw.get("context"), raw):
        if isinstance(part, dict) and isinstance(part.get("name"), str):
            return part["name"].strip()[:100]
    return ""


@transaction.atomic
def import_template(tenant, *, file: Any, name: str = "") -> InstructTemplate:
    """Import a SillyTavern instruct or context template file (or a master export holding
    both) under ``name`` (else the file's own): a new template, or the tenant's template of
    that name replaced (configs naming it take the new body)."""
    body = checked_body(file)
    name = (name or file_name(file)).strip()
    if not name:
        raise TemplateRefused("instruct_template_invalid", "the template needs a name",
                              {"field": "name"})  # fmt: skip
    _check_name(name)
    template = InstructTemplate.objects.filter(tenant=tenant, name=name).first()
    if template is None:
        if InstructTemplate.objects.filter(tenant=tenant).count() >= MAX_TEMPLATES:
            raise TemplateRefused("instruct_template_limit",
                                  f"a tenant holds at most {MAX_TEMPLATES} templates",
                                  {"limit": MAX_TEMPLATES})  # fmt: skip
        template = InstructTemplate(tenant=tenant)
    rows.write(template, {"name": name, **body}, allowed=_FIELDS, update=False)
    _refresh_configs(template)
    return template


@transaction.atomic
def update_template(
    template: InstructTemplate, *, file: Any = None, name: str = ""
) -> InstructTemplate:
    """A new body (``file``) and/or ``name`` for ``template``; the configs that named it
    follow it (a rename keeps them pointing at it)."""
    fields: dict[str, Any] = {} if file is None else checked_body(file)
    old_name = template.name
    name = (name or "").strip()
    if name and name != old_name:
        _check_name(name)
        fields["name"] = name
    if not fields:
        return template
    rows.write(template, fields, allowed=_FIELDS, update=True)
    from roleplay.models import ModelConfig

    configs = ModelConfig.objects.filter(tenant=template.tenant, instruct_template=old_name)
    configs.update(instruct_template=template.name, template_body=_body(template))
    return template


def _check_name(name: str) -> None:
    if name in RESERVED_NAMES:
        said = f"{name} is a built-in template's name"
        raise TemplateRefused("instruct_template_invalid", said, {"field": "name"})


def delete_template(template: InstructTemplate) -> None:
    """Configs that named it keep the copy they hold until they name another."""
    template.delete()


def _refresh_configs(template: InstructTemplate) -> None:
    from roleplay.models import ModelConfig

    ModelConfig.objects.filter(tenant=template.tenant, instruct_template=template.name).update(
        template_body=_body(template)
    )


def _body(template: InstructTemplate) -> dict[str, Any]:
    if template.kind == TemplateKind.JINJA:
        return {"jinja": template.jinja}
    return {"instruct": template.instruct, "context": template.context}


def own_template_body(model_file: Callable[[], Path]) -> dict[str, Any]:
    """The body of the ``gguf`` choice: the chat template the model file carries
    (``{"jinja": ...}``), else ``{"refused": why}`` for the rule below to report."""
    try:
        path = model_file()
    except (ImportError, OSError, ValueError) as exc:
        return {"refused": f"the model file cannot be read: {exc}"}
    try:
        return {"jinja": read_template(path).to_dict()}
    except TemplateError as exc:
        return {"refused": exc.message}


def with_template_body(
    config, fields: dict[str, Any], *, model_file: Callable[[], Path] | None = None
) -> dict[str, Any]:
    """``fields`` of a model config's write plus the ``template_body`` its named template
    resolves to: empty for a built-in, the template ``model_file`` carries for ``gguf``
    (the model's own), an imported template's copy, else empty (the rule below refuses)."""
    if "instruct_template" not in fields and "provider" not in fields:
        return fields
    name = fields.get("instruct_template", config.instruct_template) or ""
    provider = fields.get("provider", config.provider)
    body: dict[str, Any] = {}
    if name == OWN_TEMPLATE and provider == "text_completion":
        body = own_template_body(model_file) if model_file else {"refused": "no model file"}
    elif name not in RESERVED_NAMES and name:
        template = InstructTemplate.objects.filter(tenant_id=config.tenant_id, name=name).first()
        body = _body(template) if template is not None else {}
    return {**fields, "template_body": body}


def text_completion_problems(config) -> dict[str, list[str]]:
    """Field name -> messages for a ``text_completion`` config: a wire, a base URL and a
    template the tenant has (a built-in key or an imported template's name)."""
    if config.provider != "text_completion":
        return {}
    problems: dict[str, list[str]] = {}
    if not config.wire:
        problems["wire"] = ["Required for text-completion servers."]
    if not config.base_url:
        problems["base_url"] = ["Required for text-completion servers."]
    name = config.instruct_template or ""
    body = config.template_body or {}
    if name == OWN_TEMPLATE and "jinja" not in body:
        said = body.get("refused", "the model file carries no chat template")
        problems["instruct_template"] = [f"The model's own template cannot be used: {said}."]
    elif name and name not in RESERVED_NAMES and not body:
        problems["instruct_template"] = [
            f"No such template: a built-in ({', '.join(RESERVED_NAMES)}) or an imported one."
        ]
    return problems
