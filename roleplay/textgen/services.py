"""Writes of imported templates, and the text-completion rules of a model config's write.

Every door (REST, console) imports a SillyTavern file here: the engine checks it (a file
that cannot be used is 422 ``instruct_template_invalid`` naming the field), and the configs
that name the template get its new body, so a turn renders with what was imported last."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from roleplay.services import rows

from .engine import BUILTIN_TEMPLATES, TemplateError, parse_template_file
from .errors import TemplateRefused
from .models import InstructTemplate

MAX_TEMPLATES = 200


def checked_body(raw: Any) -> dict[str, Any]:
    """``{"instruct": ..., "context": ...}`` of a SillyTavern file, in the engine's shape."""
    try:
        instruct, context = parse_template_file(raw)
    except TemplateError as exc:
        raise TemplateRefused.from_engine(exc) from exc
    return {
        "instruct": instruct.to_dict() if instruct else None,
        "context": context.to_dict() if context else None,
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
    if name in BUILTIN_TEMPLATES:
        said = f"{name} is a built-in template's name"
        raise TemplateRefused("instruct_template_invalid", said, {"field": "name"})
    template = InstructTemplate.objects.filter(tenant=tenant, name=name).first()
    if template is None:
        if InstructTemplate.objects.filter(tenant=tenant).count() >= MAX_TEMPLATES:
            raise TemplateRefused("instruct_template_limit",
                                  f"a tenant holds at most {MAX_TEMPLATES} templates",
                                  {"limit": MAX_TEMPLATES})  # fmt: skip
        template = InstructTemplate(tenant=tenant)
    rows.write(template, {"name": name, **body}, allowed=("name", "instruct", "context"),
               update=False)  # fmt: skip
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
        if name in BUILTIN_TEMPLATES:
            said = f"{name} is a built-in template's name"
            raise TemplateRefused("instruct_template_invalid", said, {"field": "name"})
        fields["name"] = name
    if not fields:
        return template
    rows.write(template, fields, allowed=("name", "instruct", "context"), update=True)
    from roleplay.models import ModelConfig

    configs = ModelConfig.objects.filter(tenant=template.tenant, instruct_template=old_name)
    configs.update(instruct_template=template.name, template_body=_body(template))
    return template


def delete_template(template: InstructTemplate) -> None:
    """Configs that named it keep the copy they hold until they name another."""
    template.delete()


def _refresh_configs(template: InstructTemplate) -> None:
    from roleplay.models import ModelConfig

    ModelConfig.objects.filter(tenant=template.tenant, instruct_template=template.name).update(
        template_body=_body(template)
    )


def _body(template: InstructTemplate) -> dict[str, Any]:
    return {"instruct": template.instruct, "context": template.context}


def with_template_body(config, fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` of a model config's write plus the ``template_body`` its named template
    resolves to (empty for a built-in, or for a name the tenant has no template of: the
    rule below then refuses it)."""
    if "instruct_template" not in fields and "provider" not in fields:
        return fields
    name = fields.get("instruct_template", config.instruct_template) or ""
    body: dict[str, Any] = {}
    if name not in BUILTIN_TEMPLATES and name:
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
    if name and name not in BUILTIN_TEMPLATES and not config.template_body:
        problems["instruct_template"] = [
            f"No such template: a built-in ({', '.join(BUILTIN_TEMPLATES)}) or an imported one."
        ]
    return problems
