"""Writes of worldbooks: create, publish (CAS on the head), imports, prompt bindings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from pydantic import ValidationError

from console.storable import unstorable_at
from worldbook import compiled, errors
from worldbook.contracts import (
    MAX_BATCH_BOOKS,
    MAX_PROMPT_ID,
    NativeImport,
    PromptBindings,
)
from worldbook.engine import scopes
from worldbook.engine.gc_pause import paused_gc
from worldbook.engine.importers import ImportFailure, parse_import
from worldbook.engine.schema import (
    BookIn,
    content_hash,
    validate_book_for_publish,
    validation_error_details,
)
from worldbook.indexing import embedding_version
from worldbook.models import (
    BindingScope,
    Book,
    BookRevision,
    FileImport,
    PromptBinding,
    ScopeSettings,
    TimedEffectState,
)
from worldbook.selectors import bound_revisions, get_book

MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_BATCH_BYTES = 48 * 1024 * 1024


def check_storable(value, where: str = "body") -> None:
    """422 ``invalid_text`` naming the first string (value or key) the database would reject
    (see console.storable)."""
    found = unstorable_at(value, where)
    if found is not None:
        path, message = found
        raise errors.Invalid("invalid_text", message, {"path": path})


def parse_model(model_cls, payload, *, strict: bool = False):
    """``model_cls.model_validate(payload)``, or a 422 naming every invalid field.

    ``strict`` for JSON bodies: their documented types hold exactly (``true`` or ``"5"`` is
    not an integer), while forms and importers, which hand over text, may be converted.
    """
    try:
        return model_cls.model_validate(payload, strict=strict)
    except ValidationError as exc:
        details = validation_error_details(exc)
        raise errors.Invalid(
            details.get("code", "validation_error"),
            details.get("message", "invalid request"),
            details.get("details", {}),
        ) from exc


def parse_book(payload) -> BookIn:
    """A native book body as a ``BookIn``, or a 422 naming the problem (not yet checked as a
    whole: ``create_book`` and ``publish_revision`` do that)."""
    if not isinstance(payload, dict):
        raise errors.invalid("a book must be a JSON object")
    check_storable(payload, "book")
    return parse_model(BookIn, payload)


def validate_book(payload) -> BookIn:
    """:func:`parse_book` plus the whole-revision checks, for previews that write nothing."""
    book = parse_book(payload)
    validate_book_for_publish(book)  # a PublishError is a 422 of its own
    return book


def _write_revision(
    tenant, book: Book, number: int, model: BookIn, report: dict, stats: dict | None = None
) -> BookRevision:
    content = model.model_dump(mode="json")
    return BookRevision.objects.create(
        tenant=tenant,
        book=book,
        revision=number,
        content=content,
        content_hash=content_hash(model, content),
        entry_count=len(model.entries),
        import_report=report,
        entry_stats=stats,
    )


def _store_prepared(tenant, book: Book, revision: BookRevision, model: BookIn) -> None:
    """Once the transaction commits, store the new revision prepared for selection
    (``compiled.store``), so no turn on any machine prepares it, worker or not."""
    key = (str(book.pk), revision.revision, revision.content_hash)
    transaction.on_commit(lambda: compiled.store(tenant, *key, model.entries))


def create_book(tenant, model: BookIn, *, report: dict | None = None) -> tuple[Book, BookRevision]:
    """A new book at revision 1 (a book that cannot be published is a 422)."""
    validate_book_for_publish(model)
    with transaction.atomic():
        book = Book.objects.create(
            tenant=tenant, name=model.name, description=model.description, head_revision=1
        )
        report = report or {"format": "native", "entry_count": len(model.entries)}
        revision = _write_revision(tenant, book, 1, model, report)
        _store_prepared(tenant, book, revision, model)
    return book, revision


def publish_revision(
    tenant, book: Book, model: BookIn, expected_revision: int, *, stats: dict | None = None
) -> BookRevision:
    """Publish a full new revision if the head is still ``expected_revision`` (else 409).

    The whole-revision checks run here, before the head moves, so no door can skip them.
    ``stats`` are the new revision's per-entry facts when the caller already knows them (a
    draft publish); otherwise the editor derives them on its first read.
    """
    validate_book_for_publish(model)
    with transaction.atomic():
        moved = Book.objects.filter(
            tenant=tenant, pk=book.pk, head_revision=expected_revision
        ).update(
            head_revision=F("head_revision") + 1,
            name=model.name,
            description=model.description,
            # update() skips auto_now; the book list is ordered by updated_at.
            updated_at=timezone.now(),
        )
        if moved != 1:
            current = (
                Book.objects.filter(pk=book.pk).values_list("head_revision", flat=True).first()
            )
            raise errors.RevisionConflict(current, expected_revision)
        number = expected_revision + 1
        report = {"format": "native", "entry_count": len(model.entries)}
        revision = _write_revision(tenant, book, number, model, report, stats)
        _store_prepared(tenant, book, revision, model)
        followers = PromptBinding.objects.filter(book=book, revision__isnull=True, enabled=True)
        if followers.exists():  # bound prompts read the new head from their next turn
            compiled.queue_warm([(str(book.pk), number, revision.content_hash)])
    book.head_revision = number
    return revision


def book_result(book: Book, revision: BookRevision, *, deduplicated: bool = False) -> dict:
    return {
        "book_id": str(book.id),
        "revision": revision.revision,
        "deduplicated": deduplicated,
        "import_report": revision.import_report,
    }


def import_native_batch(tenant, request: NativeImport) -> list[dict]:
    """1–10 native books, all checked before any is written, in one transaction."""
    for index, model in enumerate(request.books):
        try:
            validate_book_for_publish(model)
        except errors.WorldbookError as exc:
            exc.details = {**exc.details, "book_index": index}
            raise
    with transaction.atomic():
        return [book_result(*create_book(tenant, model)) for model in request.books]


def parse_upload(name: str, data: bytes):
    """An uploaded file as an ImportResult; an importer's error names the file."""
    if len(data) > MAX_FILE_BYTES:
        raise file_too_large(name)
    try:
        return parse_import(name, data, max_bytes=MAX_FILE_BYTES)
    except ImportFailure as exc:
        raise type(exc)(exc.code, f"{name}: {exc.message}", exc.details) from exc


def file_too_large(name: str) -> errors.TooLarge:
    return errors.TooLarge("file_too_large", f"{name} is larger than 16 MiB")


@dataclass
class Upload:
    name: str
    data: bytes


def import_files(tenant, uploads: list[Upload]) -> list[dict]:
    """1–10 files, all parsed before anything is written; duplicates by SHA-256 return the
    original revision 1 with ``deduplicated: true``. All or nothing."""
    if not 1 <= len(uploads) <= MAX_BATCH_BOOKS:
        raise errors.invalid("send 1 to 10 files in the 'files' field")
    if sum(len(u.data) for u in uploads) > MAX_BATCH_BYTES:
        raise errors.TooLarge("payload_too_large", "files exceed 48 MiB in total")
    # The parsed books (thousands of entries each) stay alive to the end: see gc_pause.
    with paused_gc():
        return _import(tenant, uploads)


def _import(tenant, uploads: list[Upload]) -> list[dict]:
    parsed = []
    for upload in uploads:
        result = parse_upload(upload.name, upload.data)
        model = parse_book(result.book)
        parsed.append((upload, result, model))
    out = []
    with transaction.atomic():
        for upload, result, model in parsed:
            existing = (
                FileImport.objects.select_related("book")
                .filter(tenant=tenant, sha256=result.sha256)
                .first()
            )
            if existing is not None:
                rev = BookRevision.objects.get(book=existing.book, revision=existing.revision)
                out.append(book_result(existing.book, rev, deduplicated=True))
                continue
            report = {**result.report, "format": result.format, "filename": upload.name}
            book, rev = create_book(tenant, model, report=report)
            try:
                with transaction.atomic():
                    FileImport.objects.create(
                        tenant=tenant,
                        sha256=result.sha256,
                        book=book,
                        filename=upload.name[:300],
                        format=result.format,
                    )
            except IntegrityError as exc:
                raise errors.Conflict(
                    "import_in_progress", "the same file is being imported"
                ) from exc
            out.append(book_result(book, rev))
    return out


# Checks of the books one turn reads across scopes (the host's: it knows which scopes meet
# in a conversation). Each is called as ``check(tenant, scope, prompt_id)`` inside the write's
# transaction, after the new bindings are in, and raises a coded error to undo them.
_limit_checks: list[Callable[[Any, str, str], None]] = []


def register_limit_check(check: Callable[[Any, str, str], None]) -> None:
    """Add a check every binding write runs (see ``_limit_checks``); once per check."""
    if check not in _limit_checks:
        _limit_checks.append(check)


def put_bindings(
    tenant, prompt_id: str, bindings, *, scope: str = BindingScope.PROMPT
) -> list[PromptBinding]:
    """Replace every binding of ``prompt_id`` in ``scope`` atomically (``[]`` clears them).

    ``bindings`` is a validated :class:`PromptBindings` (the API's) or its ``bindings`` list
    as plain data (console, commands), validated here by the same class. The tenant's global
    books have ``prompt_id`` "" (the caller checks that a scope's target exists).
    """
    if scope not in BindingScope.values:
        raise errors.invalid(f"unknown binding scope {scope!r}", scope=scope)
    if scope != BindingScope.GLOBAL or prompt_id:
        check_prompt_id(prompt_id)
    if not isinstance(bindings, PromptBindings):
        bindings = parse_model(PromptBindings, {"bindings": bindings})
    rows: list[PromptBinding] = []
    for index, item in enumerate(bindings.bindings):
        try:
            book = get_book(tenant, item.book_id)
        except errors.NotFound as exc:
            raise errors.Invalid(
                "binding_book_missing",
                f"book {item.book_id} does not exist",
                {"book_id": item.book_id},
            ) from exc
        if any(row.book_id == book.id for row in rows):
            # One book under two spellings of its id (case, hyphens, braces): the list's
            # own check compares the texts, the unique constraint the books.
            raise errors.Invalid(
                "duplicate_binding", f"book {book.id} is bound twice", {"book_id": str(book.id)}
            )
        revision = item.revision
        if (
            revision is not None
            and not BookRevision.objects.filter(book=book, revision=revision).exists()
        ):
            raise errors.Invalid(
                "binding_revision_missing",
                f"book {item.book_id} has no revision {revision}",
                {"book_id": item.book_id, "revision": revision},
            )
        rows.append(
            PromptBinding(
                tenant=tenant,
                scope=scope,
                prompt_id=prompt_id,
                book=book,
                revision=revision,
                position=index if item.position is None else item.position,
                enabled=item.enabled,
            )
        )
    with transaction.atomic():
        PromptBinding.objects.filter(tenant=tenant, scope=scope, prompt_id=prompt_id).delete()
        PromptBinding.objects.bulk_create(rows)
        for check in _limit_checks:
            check(tenant, scope, prompt_id)
        bound = bound_revisions(tenant, prompt_id, embedding_version(), scope=scope)
        compiled.queue_warm([(b.book_id, b.revision, b.content_hash) for b in bound])
    return rows


def set_scope_strategy(tenant, strategy) -> ScopeSettings:
    """The tenant's order between lorebook scopes (``engine.scopes.STRATEGIES``; a number is
    SillyTavern's ``world_info_character_strategy``), or a 422 ``invalid_strategy``."""
    if isinstance(strategy, int) and not isinstance(strategy, bool):
        strategy = scopes.ST_NUMBERS.get(strategy, strategy)
    if strategy not in scopes.STRATEGIES:
        raise errors.Invalid(
            "invalid_strategy",
            f"character_strategy must be one of {', '.join(scopes.STRATEGIES)} (or 0, 1, 2)",
            {"allowed": list(scopes.STRATEGIES)},
        )
    settings, _ = ScopeSettings.objects.update_or_create(
        tenant=tenant, defaults={"character_strategy": strategy}
    )
    return settings


def check_prompt_id(prompt_id: str) -> str:
    """A prompt id of 1–200 storable characters, or a 422 naming ``prompt_id``."""
    if not prompt_id or len(prompt_id) > MAX_PROMPT_ID:
        raise errors.invalid("prompt_id (1-200 characters) is required")
    check_storable(prompt_id, "prompt_id")
    return prompt_id


def forget_conversations(tenant, conversation_ids) -> int:
    """Delete the timed-effect state kept for these conversations (it is keyed by the
    caller's conversation id, without a foreign key); returns how many rows went."""
    ids = [str(conversation_id) for conversation_id in conversation_ids]
    deleted, _ = TimedEffectState.objects.filter(tenant=tenant, conversation_id__in=ids).delete()
    forget_scope(tenant, BindingScope.CHAT, ids)  # their chat books' bindings
    return deleted


def forget_scope(tenant, scope: str, prompt_ids) -> None:
    """Delete the bindings of these scenarios, chats or personas (deleted themselves: the
    bindings name them by id, without a foreign key). The books stay."""
    ids = [str(prompt_id) for prompt_id in prompt_ids]
    PromptBinding.objects.filter(tenant=tenant, scope=scope, prompt_id__in=ids).delete()
