"""What a tenant owns, found from the model graph rather than listed by hand.

A table is covered when its model has a foreign key to ``console.Tenant`` or, failing that,
to a covered table (``worldbook.IndexChunk`` through its index). The few tenant tables that
must not travel are in :data:`EXCLUDED`, each with its reason; ``tests/backup`` fails when a
model reaches the tenant and is in neither, so a new table cannot be forgotten.

Columns are sorted by what the restore does with them: the primary key (a new one), foreign
keys (the restored row's id), console users (left out: users belong to the installation),
text and JSON (ids inside rewritten, ``engine.remap``), stored file names (the file travels
too), and everything else copied.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from django.apps import apps
from django.conf import settings
from django.db import models

from console.models import Tenant

EXCLUDED = {
    "console.Membership": "console users and their roles belong to the installation",
    "console.ApiToken": "API tokens are secrets: they never leave the installation",
    "console.IdempotencyRecord": "the replay cache of requests made to the source",
    "console.AuditEvent": "the source installation's audit trail (it names its console users)",
    "memory.RecallOwnerIndex": "names a database index built on the source; rebuilt on demand",
    "memory.RecallTerm": "counts kept by database triggers on recall rows: restoring the rows "
    "counts them again",
    "worldbook.BookDraft": "a console user's unpublished draft (users are not exported)",
    "worldbook.DraftEntry": "an entry of a console user's unpublished draft",
}

# Integer ids inside JSON columns, by path (``engine.remap``): UUIDs need no list.
INT_JSON_REFS = {
    "memory.ConsolidationRun": {"model_call_ids": {"[]": "roleplay.ModelCall"}},
    "roleplay.PlanningRun": {
        "snapshot": {
            "inputs.entry_ids[]": "roleplay.AgentLedgerEntry",
            "inputs.entries[].id": "roleplay.AgentLedgerEntry",
        }
    },
}

# Columns holding names of files in the images storage (a list, or one name).
FILE_COLUMNS = {"images.ImageJob": ("files",), "images.ImageSlot": ("file", "thumbnail")}

REMAPPED_TYPES = ("CharField", "UUIDField", "JSONField", "SlugField")


@dataclass
class Table:
    model: type[models.Model]
    tenant_path: str  # the lookup from a row to its tenant
    pk: models.Field
    fks: dict[str, str] = field(default_factory=dict)  # attname -> target label
    tenant_column: str | None = None  # the attname naming the tenant, if the row has one
    users: list[str] = field(default_factory=list)  # attnames naming console users
    remapped: list[str] = field(default_factory=list)  # text/JSON attnames with ids inside
    columns: list[models.Field] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.model._meta.label

    @property
    def int_pk(self) -> bool:
        return self.pk.get_internal_type() in ("AutoField", "BigAutoField", "SmallAutoField")


def _tenant_fk(model) -> models.Field | None:
    return next(
        (f for f in model._meta.concrete_fields if f.is_relation and f.related_model is Tenant),
        None,
    )


def reaching_models() -> dict[type[models.Model], str]:
    """Every model with a path of foreign keys to the tenant, and that path."""
    paths: dict[type[models.Model], str] = {}
    candidates = [m for m in apps.get_models() if m is not Tenant]
    for model in candidates:
        if (fk := _tenant_fk(model)) is not None:
            paths[model] = fk.name
    grown = True
    while grown:
        grown = False
        for model in candidates:
            if model in paths:
                continue
            for f in model._meta.concrete_fields:
                target = f.related_model if f.is_relation else None
                if target in paths and target is not model:
                    paths[model] = f"{f.name}__{paths[target]}"
                    grown = True
                    break
    return paths


@cache
def tenant_tables() -> tuple[Table, ...]:
    """The covered tables, parents before children."""
    paths = reaching_models()
    chosen = {m: p for m, p in paths.items() if m._meta.label not in EXCLUDED}
    tables = {m._meta.label: _table(m, p) for m, p in chosen.items()}
    return tuple(tables[label] for label in _ordered(tables))


def _table(model, path: str) -> Table:
    user_model = apps.get_model(settings.AUTH_USER_MODEL)
    table = Table(model=model, tenant_path=path, pk=model._meta.pk)
    for f in model._meta.concrete_fields:
        table.columns.append(f)
        if f.is_relation:
            if f.related_model is user_model:
                table.users.append(f.attname)
            elif f.related_model is Tenant:
                table.tenant_column = f.attname
            else:
                table.fks[f.attname] = f.related_model._meta.label
        elif not f.primary_key and f.get_internal_type() in REMAPPED_TYPES:
            table.remapped.append(f.attname)
    return table


def _ordered(tables: dict[str, Table]) -> list[str]:
    """Labels in foreign-key order (a row's parents first; self references and cycles are
    fine either way: the foreign keys are checked at commit)."""
    done: list[str] = []
    seen: set[str] = set()

    def visit(label: str, stack: frozenset) -> None:
        if label in seen or label in stack or label not in tables:
            return
        for target in tables[label].fks.values():
            if target != label:
                visit(target, stack | {label})
        seen.add(label)
        done.append(label)

    for label in sorted(tables):
        visit(label, frozenset())
    return done


def by_label() -> dict[str, Table]:
    return {t.label: t for t in tenant_tables()}
