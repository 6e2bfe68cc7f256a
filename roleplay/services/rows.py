"""How every runtime row is saved, so each door gets the same checks and the same errors.

The API serializer and the console form validate their own input first and show errors in
their own way; the checks here run again for every door, because a management command or
seed data has no form, and a race (two requests taking the same name) passes any form.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.core.exceptions import ValidationError
from django.db import DatabaseError, IntegrityError, models, transaction
from django.db.models import F
from django.utils import timezone

from roleplay.errors import Duplicate, FieldErrors, NotFound


def assign(instance: models.Model, fields: dict, allowed: tuple[str, ...]) -> None:
    """Set ``fields`` on ``instance``; a field a door may not write is a field error."""
    unknown = sorted(set(fields) - set(allowed))
    if unknown:
        raise FieldErrors({name: ["unknown field"] for name in unknown})
    for name, value in fields.items():
        setattr(instance, name, value)


def check_same_tenant(tenant_id, **related: models.Model | None) -> None:
    """Related objects must be the tenant's own; another tenant's is "not found", the answer
    the API's serializers give for the same id."""
    foreign = {
        name: ["not found"]
        for name, obj in related.items()
        if obj is not None and obj.tenant_id != tenant_id
    }
    if foreign:
        raise FieldErrors(foreign)


def _unstorable(instance: models.Model) -> dict[str, list[str]]:
    # PostgreSQL text cannot hold U+0000; the forms and serializers refuse it on input.
    return {
        field.name: ["Null characters are not allowed."]
        for field in instance._meta.concrete_fields
        if isinstance(getattr(instance, field.attname), str)
        and "\x00" in getattr(instance, field.attname)
    }


def unique_fields(model: type[models.Model]) -> dict[str, str]:
    """Constraint name -> field, for the model's unique constraints on (tenant, field)."""
    return {
        constraint.name: fields[0]
        for constraint in model._meta.constraints
        if isinstance(constraint, models.UniqueConstraint)
        and constraint.condition is None
        and len(fields := [f for f in constraint.fields if f != "tenant"]) == 1
    }


def violated_constraint(exc: IntegrityError) -> str | None:
    """The name of the constraint PostgreSQL reported, if any."""
    diag = getattr(exc.__cause__, "diag", None)
    return getattr(diag, "constraint_name", None)


def check(instance: models.Model, problems: dict[str, list[str]] | None = None) -> None:
    """The checks of :func:`save` without saving: the model's field validators, storable
    text, and ``problems`` a caller found across fields; raises :class:`FieldErrors`. For
    writes that are not a plain save (a compare-and-set UPDATE)."""
    errors = {**_unstorable(instance)}
    try:
        instance.full_clean(validate_unique=False, validate_constraints=False)
    except ValidationError as exc:
        errors = {**exc.message_dict, **errors}
    for name, messages in (problems or {}).items():
        errors.setdefault(name, []).extend(m for m in messages if m not in errors.get(name, []))
    if errors:
        raise FieldErrors(errors)


def duplicate_of(instance: models.Model, exc: IntegrityError) -> Duplicate | None:
    """The :class:`Duplicate` naming the field of the unique constraint ``exc`` reports, or
    None when it is another integrity error."""
    field = unique_fields(type(instance)).get(violated_constraint(exc) or "")
    if field is None:
        return None
    noun = instance._meta.verbose_name
    return Duplicate(field, f"a {noun} with this {field} already exists")


def save(
    instance: models.Model,
    *,
    changed: Iterable[str] | None = None,
    problems: dict[str, list[str]] | None = None,
):
    """Validate ``instance`` with its model's field validators (plus ``problems`` a caller
    found across fields) and save it in a savepoint, so a unique violation rolls back only
    this statement and comes back as :class:`Duplicate` naming the field.

    ``changed`` (an update) writes only those fields (and ``auto_now`` ones): a field the
    caller did not change, or one another service owns (the default flag), keeps what the
    database holds, whatever the instance in memory says.
    """
    check(instance, problems)
    update_fields = None
    if changed is not None:
        stamps = [f.name for f in instance._meta.concrete_fields if getattr(f, "auto_now", False)]
        update_fields = [*changed, *stamps]
    try:
        with transaction.atomic():
            instance.save(update_fields=update_fields)
    except IntegrityError as exc:
        duplicate = duplicate_of(instance, exc)
        if duplicate is None:
            raise
        raise duplicate from exc
    except DatabaseError as exc:
        if update_fields is None or isinstance(exc, IntegrityError):
            raise
        # An update that found no row: another request deleted it since it was read.
        raise NotFound(message=f"this {instance._meta.verbose_name} no longer exists") from exc
    return instance


def write(
    instance: models.Model,
    fields: dict,
    *,
    allowed: tuple[str, ...],
    update: bool,
    related: tuple[str, ...] = (),
    rules: Callable[[models.Model], dict[str, list[str]]] | None = None,
):
    """The whole write of a create (``update=False``) or an update: ``related`` fields must
    name the tenant's own objects, ``fields`` are set, ``rules`` (across fields, judged on
    the values the row will hold) and the field validators are checked, then it is saved."""
    check_same_tenant(
        instance.tenant_id, **{name: fields[name] for name in related if name in fields}
    )
    assign(instance, fields, allowed)
    problems = rules(instance) if rules else None
    return save(instance, changed=fields if update else None, problems=problems)


@transaction.atomic
def make_the_default(row: models.Model, owner: str, owner_model: type[models.Model]):
    """Make ``row`` the one ``is_default`` row among those of its ``owner`` (a foreign key
    field: the tenant of a model config, the player of a persona)."""
    owner_id = getattr(row, f"{owner}_id")
    # FOR NO KEY UPDATE on the owner: switches wait for each other, while inserts of rows
    # that reference the owner (they take FOR KEY SHARE) go on.
    list(owner_model.objects.select_for_update(no_key=True).filter(pk=owner_id).values("pk"))
    siblings = type(row).objects.filter(**{f"{owner}_id": owner_id, "is_default": True})
    siblings.exclude(pk=row.pk).update(is_default=False)
    type(row).objects.filter(pk=row.pk).update(is_default=True)
    row.is_default = True
    return row


def compare_and_set(
    instance: models.Model, values: dict, *, version: int, conflict: Callable[[int, int], Exception]
) -> None:
    """Write ``values`` to the row in one conditional UPDATE if it is still at ``version``;
    the version moves on and ``instance`` reads it. A unique clash is :class:`Duplicate`, a
    row gone is :class:`NotFound`, a row moved on is ``conflict(current, version)``."""
    model = type(instance)
    try:
        with transaction.atomic():
            moved = model._default_manager.filter(
                tenant_id=instance.tenant_id, pk=instance.pk, version=version
            ).update(**values, version=F("version") + 1, updated_at=timezone.now())
    except IntegrityError as exc:
        duplicate = duplicate_of(instance, exc)
        if duplicate is None:
            raise
        raise duplicate from exc
    if moved != 1:
        current = (
            model._default_manager.filter(pk=instance.pk).values_list("version", flat=True).first()
        )
        if current is None:
            raise NotFound(message=f"this {model._meta.verbose_name} no longer exists")
        raise conflict(current, version)
    instance.refresh_from_db(fields=["version", "updated_at"])
