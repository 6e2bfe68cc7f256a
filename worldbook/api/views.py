"""The worldbook HTTP API: the seed's paths and shapes under our token auth and tenancy.

A JSON body is read through :func:`validates`, which documents the request with the same
pydantic class that then validates it; the view receives the validated model.
"""

from __future__ import annotations

import functools

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from console.body_limit import BodyLimit
from console.errors import ApiError
from console.idempotency import IDEMPOTENCY_KEY, request_fingerprint, run_idempotent
from console.models import Scope
from worldbook import contracts, errors, indexing, retrieval, scope_targets, selectors, services
from worldbook.api import schemas
from worldbook.engine import scopes
from worldbook.engine.exporter import export_book
from worldbook.engine.results import SelectResponse
from worldbook.engine.schema import BookIn, SelectRequest
from worldbook.tasks import queue_build


class WorldbookView(BodyLimit, APIView):
    required_scope = Scope.CONTENT
    read_scopes = (Scope.CONTENT, Scope.PLAY)
    max_body_bytes = services.MAX_BATCH_BYTES  # the seed's 48 MiB batch

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        wanted = request.query_params.get("tenant_id")
        tenant = request.tenant
        if wanted is not None and wanted not in (str(tenant.id), tenant.name):
            raise ApiError(
                "tenant_mismatch", "tenant_id does not match the token's tenant", status_code=403
            )

    def body(self) -> dict:
        data = self.request.data
        if not isinstance(data, dict):
            raise errors.invalid("the body must be a JSON object")
        services.check_storable(data)
        return data


def validates(model, **schema):
    """Document ``model`` as the method's request body and call the method with the body
    validated by it, strictly (JSON types as documented): ``method(self, request, body,
    *args)``. The raw JSON object stays on ``self.payload`` (idempotency keys fingerprint
    what the client sent)."""

    def decorate(method):
        @functools.wraps(method)
        def view(self, request, *args, **kwargs):
            self.payload = self.body()
            body = services.parse_model(model, self.payload, strict=True)
            return method(self, request, body, *args, **kwargs)

        view.body_model = model
        return extend_schema(request=model, **schema)(view)

    return decorate


def _book_summary(book) -> dict:
    return {
        "book_id": str(book.id),
        "name": book.name,
        "description": book.description,
        "head_revision": book.head_revision,
        "created_at": book.created_at,
        "updated_at": book.updated_at,
    }


def _revision_body(book, rev) -> dict:
    return {
        "book_id": str(book.id),
        "revision": rev.revision,
        "content_hash": rev.content_hash,
        "entry_count": rev.entry_count,
        "import_report": rev.import_report,
        "created_at": rev.created_at,
        "book": rev.content,
    }


class BooksView(WorldbookView):
    @extend_schema(operation_id="v1_books_list", responses=schemas.BookListResponse)
    def get(self, request):
        books = selectors.scoped_books(request.tenant)
        return Response({"books": [_book_summary(b) for b in books]})

    @validates(BookIn, responses={201: schemas.CreateResponse}, parameters=[IDEMPOTENCY_KEY])
    def post(self, request, body: BookIn):
        def work():
            book, rev = services.create_book(request.tenant, body)
            return {"books": [services.book_result(book, rev)], "replayed": False}, 201

        return run_idempotent(request, "worldbook.books", self.payload, work)


class BookDetailView(WorldbookView):
    @extend_schema(responses=schemas.BookDetailResponse)
    def get(self, request, book_id):
        book = selectors.get_book(request.tenant, book_id)
        rev = selectors.get_revision(request.tenant, book, None)
        return Response({**_book_summary(book), "head": _revision_body(book, rev)})


class RevisionsView(WorldbookView):
    @extend_schema(operation_id="v1_books_revisions_list", responses=schemas.RevisionListResponse)
    def get(self, request, book_id):
        book = selectors.get_book(request.tenant, book_id)
        rows = book.revisions.order_by("-revision").values(
            "revision", "content_hash", "entry_count", "created_at"
        )
        return Response(
            {"book_id": str(book.id), "head_revision": book.head_revision, "revisions": list(rows)}
        )

    @validates(contracts.RevisionPublish, responses={201: schemas.PublishResponse})
    def post(self, request, body: contracts.RevisionPublish, book_id):
        book = selectors.get_book(request.tenant, book_id)
        rev = services.publish_revision(request.tenant, book, body.book(), body.expected_revision)
        return Response(
            {"book_id": str(book.id), "revision": rev.revision, "content_hash": rev.content_hash},
            status=201,
        )


class RevisionDetailView(WorldbookView):
    @extend_schema(responses=schemas.RevisionResponse)
    def get(self, request, book_id, revision):
        book = selectors.get_book(request.tenant, book_id)
        rev = selectors.get_revision(request.tenant, book, revision)
        return Response(_revision_body(book, rev))


class ExportView(WorldbookView):
    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["native", "sillytavern"])],
        responses={200: dict},
    )
    def get(self, request, book_id, revision):
        fmt = request.query_params.get("format", "native")
        if fmt not in ("native", "sillytavern"):
            raise errors.BadRequest("invalid_format", "format must be native or sillytavern")
        book = selectors.get_book(request.tenant, book_id)
        rev = selectors.get_revision(request.tenant, book, revision)
        return Response(export_book(rev.content, fmt))


class NativeImportView(WorldbookView):
    @validates(
        contracts.NativeImport,
        responses={201: schemas.CreateResponse},
        parameters=[IDEMPOTENCY_KEY],
    )
    def post(self, request, body: contracts.NativeImport):
        def work():
            books = services.import_native_batch(request.tenant, body)
            return {"books": books, "replayed": False}, 201

        return run_idempotent(request, "worldbook.imports", self.payload, work)


def _uploads(request, field: str) -> list[services.Upload]:
    files = request.FILES.getlist(field)
    return [services.Upload(f.name or "upload", f.read(services.MAX_FILE_BYTES + 1)) for f in files]


class ImportPreviewView(WorldbookView):
    parser_classes = [MultiPartParser]
    read_only_post = True

    @extend_schema(request=schemas.PreviewUpload, responses=schemas.PreviewResponse)
    def post(self, request):
        uploads = _uploads(request, "file")
        if len(uploads) != 1:
            raise errors.invalid("send exactly one file in the 'file' field")
        result = services.parse_upload(uploads[0].name, uploads[0].data)
        services.validate_book(result.book)
        report = {**result.report, "format": result.format}
        return Response({"book": result.book, "import_report": report, "sha256": result.sha256})


class ImportFilesView(WorldbookView):
    parser_classes = [MultiPartParser]

    @extend_schema(
        request=schemas.FilesUpload,
        responses={201: schemas.CreateResponse},
        parameters=[IDEMPOTENCY_KEY],
    )
    def post(self, request):
        uploads = _uploads(request, "files")
        fingerprint = request_fingerprint([(u.name, request_fingerprint(u.data)) for u in uploads])

        def work():
            books = services.import_files(request.tenant, uploads)
            return {"books": books, "replayed": False}, 201

        return run_idempotent(request, "worldbook.files", {"files": fingerprint}, work)


class IndexView(WorldbookView):
    @extend_schema(parameters=[OpenApiParameter("revision", int)], responses=contracts.IndexState)
    def get(self, request, book_id):
        book = selectors.get_book(request.tenant, book_id)
        raw = request.query_params.get("revision")
        try:
            revision = int(raw) if raw else book.head_revision
        except ValueError as exc:
            raise errors.invalid("revision must be an integer") from exc
        selectors.get_revision(request.tenant, book, revision)
        index = selectors.latest_index(request.tenant, book, revision)
        return Response(indexing.index_state(book.id, revision, index).model_dump(mode="json"))

    @validates(
        contracts.IndexBuild,
        responses={202: contracts.IndexBuildResponse, 200: contracts.IndexBuildResponse},
    )
    def post(self, request, body: contracts.IndexBuild, book_id):
        book = selectors.get_book(request.tenant, book_id)
        revision = book.head_revision if body.revision is None else body.revision
        selectors.get_revision(request.tenant, book, revision)
        index, started = indexing.request_build(request.tenant, book, revision, force=body.force)
        if started:
            queue_build(index.id)
        state = indexing.index_state(book.id, revision, index)
        out = contracts.IndexBuildResponse(**dict(state), reused=not started)
        return Response(out.model_dump(mode="json"), status=202 if started else 200)


class SelectView(WorldbookView):
    read_only_post = True

    @validates(SelectRequest, responses=SelectResponse)
    def post(self, request, body: SelectRequest):
        # A read-only caller (a viewer's session) may select, not advance timed effects.
        record = not request.user.read_only
        return Response(retrieval.select_context(request.tenant, body, record=record))


class SearchView(WorldbookView):
    read_only_post = True

    @validates(contracts.EntrySearch, responses=contracts.SearchResponse)
    def post(self, request, body: contracts.EntrySearch):
        refs = [(ref.book_id, ref.revision) for ref in body.books]
        return Response(
            retrieval.search(
                request.tenant, query=body.query, refs=refs, mode=body.mode, limit=body.limit
            )
        )


class _PromptIdMixin:
    def _prompt_id(self) -> str:
        return services.check_prompt_id(self.request.query_params.get("prompt_id", ""))


class BindingsView(_PromptIdMixin, WorldbookView):
    def _render(self, prompt_id):
        rows = selectors.list_bindings(self.request.tenant, prompt_id)
        return {
            "tenant_id": str(self.request.tenant.id),
            "prompt_id": prompt_id,
            "bindings": [contracts.binding_body(b) for b in rows],
        }

    @extend_schema(
        parameters=[OpenApiParameter("prompt_id", str, required=True)],
        responses=contracts.BindingsResponse,
    )
    def get(self, request):
        return Response(self._render(self._prompt_id()))

    @validates(
        contracts.PromptBindings,
        parameters=[OpenApiParameter("prompt_id", str, required=True)],
        responses=contracts.BindingsResponse,
    )
    def put(self, request, body: contracts.PromptBindings):
        prompt_id = self._prompt_id()
        services.put_bindings(request.tenant, prompt_id, body)
        return Response(self._render(prompt_id))


class ResolveBindingsView(_PromptIdMixin, WorldbookView):
    @extend_schema(
        parameters=[OpenApiParameter("prompt_id", str, required=True)],
        responses=contracts.ResolveResponse,
    )
    def get(self, request):
        prompt_id = self._prompt_id()
        books = selectors.resolve_bindings(request.tenant, prompt_id)
        return Response(
            {"tenant_id": str(request.tenant.id), "prompt_id": prompt_id, "books": books}
        )


_SCOPE_PARAMETERS = [
    OpenApiParameter("scope", str, required=True, enum=["global", "scenario", "chat", "persona"]),
    OpenApiParameter(
        "target_id", str, description="the scenario, conversation or persona id (not global)"
    ),
]


class ScopeBindingsView(WorldbookView):
    """A lorebook scope's books beside the character's (``/prompt-bindings``): the tenant's
    global books, a scenario's, a conversation's (chat) or a persona's (docs/worldbook.md,
    "Lorebook scopes")."""

    def _target(self) -> tuple[str, str]:
        params = self.request.query_params
        scope = scope_targets.check_scope(params.get("scope", ""))
        return scope, scope_targets.target_id(self.request.tenant, scope, params.get("target_id"))

    def _render(self, scope: str, target: str) -> dict:
        rows = selectors.list_bindings(self.request.tenant, target, scope)
        return {
            "tenant_id": str(self.request.tenant.id),
            "scope": scope,
            "target_id": target,
            "bindings": [contracts.binding_body(b) for b in rows],
        }

    @extend_schema(parameters=_SCOPE_PARAMETERS, responses=contracts.ScopeBindingsResponse)
    def get(self, request):
        return Response(self._render(*self._target()))

    @validates(
        contracts.PromptBindings,
        parameters=_SCOPE_PARAMETERS,
        responses=contracts.ScopeBindingsResponse,
    )
    def put(self, request, body: contracts.PromptBindings):
        scope, target = self._target()
        services.put_bindings(request.tenant, target, body, scope=scope)
        return Response(self._render(scope, target))


class ScopeSettingsView(WorldbookView):
    """The tenant's order between lorebook scopes (a scenario's ``worldbook`` object may
    set its own)."""

    def _render(self) -> dict:
        strategy = selectors.scope_strategy(self.request.tenant)
        return {
            "tenant_id": str(self.request.tenant.id),
            "character_strategy": scopes.strategy_of(strategy),
        }

    @extend_schema(responses=contracts.ScopeSettingsResponse)
    def get(self, request):
        return Response(self._render())

    @validates(contracts.ScopeSettingsBody, responses=contracts.ScopeSettingsResponse)
    def put(self, request, body: contracts.ScopeSettingsBody):
        services.set_scope_strategy(request.tenant, body.character_strategy)
        return Response(self._render())
