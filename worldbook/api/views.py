"""The worldbook HTTP API: the seed's paths and shapes under our token auth and tenancy."""

from __future__ import annotations

from django.db import transaction
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from console.errors import ApiError
from console.idempotency import request_fingerprint, run_idempotent
from console.models import Scope
from worldbook import errors, indexing, retrieval, selectors, services
from worldbook.api import schemas
from worldbook.engine.exporter import export_book
from worldbook.engine.schema import SelectRequest
from worldbook.tasks import build_index

MAX_BODY = services.MAX_BATCH_BYTES


class WorldbookView(APIView):
    required_scope = Scope.CONTENT
    read_scopes = (Scope.CONTENT, Scope.PLAY)

    def initial(self, request, *args, **kwargs):
        length = request.META.get("CONTENT_LENGTH") or "0"
        if length.isdigit() and int(length) > MAX_BODY:
            raise errors.TooLarge("payload_too_large", "request body exceeds 48 MiB")
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


def _json_safe(body):
    import json

    from django.core.serializers.json import DjangoJSONEncoder

    return json.loads(json.dumps(body, cls=DjangoJSONEncoder))


class BooksView(WorldbookView):
    @extend_schema(operation_id="v1_books_list", responses=schemas.BookListResponse)
    def get(self, request):
        books = selectors.scoped_books(request.tenant)
        return Response({"books": [_book_summary(b) for b in books]})

    @extend_schema(request=schemas.BookBody, responses={201: schemas.CreateResponse})
    def post(self, request):
        payload = self.body()

        def work():
            model = services.validate_book(payload)
            book, rev = services.create_book(request.tenant, model)
            return {"books": [services.book_result(book, rev)], "replayed": False}, 201

        return run_idempotent(request, "worldbook.books", payload, work)


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

    @extend_schema(request=schemas.PublishBody, responses={201: schemas.PublishResponse})
    def post(self, request, book_id):
        book = selectors.get_book(request.tenant, book_id)
        payload = dict(self.body())
        expected = payload.pop("expected_revision", None)
        if not isinstance(expected, int) or isinstance(expected, bool) or expected < 1:
            raise errors.invalid("expected_revision (a positive integer) is required")
        if "book" in payload and len(payload) == 1:
            payload = payload["book"]
        model = services.validate_book(payload)
        rev = services.publish_revision(request.tenant, book, model, expected)
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
    @extend_schema(request=schemas.NativeImportBody, responses={201: schemas.CreateResponse})
    def post(self, request):
        payload = self.body()
        if set(payload) - {"books"}:
            raise errors.invalid(f"unknown field {sorted(set(payload) - {'books'})[0]!r}")

        def work():
            books = services.import_native_batch(request.tenant, payload.get("books"))
            return {"books": books, "replayed": False}, 201

        return run_idempotent(request, "worldbook.imports", payload, work)


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

    @extend_schema(request=schemas.FilesUpload, responses={201: schemas.CreateResponse})
    def post(self, request):
        uploads = _uploads(request, "files")
        fingerprint = request_fingerprint([(u.name, request_fingerprint(u.data)) for u in uploads])

        def work():
            books = services.import_files(request.tenant, uploads)
            return {"books": books, "replayed": False}, 201

        return run_idempotent(request, "worldbook.files", {"files": fingerprint}, work)


class IndexView(WorldbookView):
    @extend_schema(parameters=[OpenApiParameter("revision", int)], responses=schemas.IndexResponse)
    def get(self, request, book_id):
        book = selectors.get_book(request.tenant, book_id)
        raw = request.query_params.get("revision")
        try:
            revision = int(raw) if raw else book.head_revision
        except ValueError as exc:
            raise errors.invalid("revision must be an integer") from exc
        selectors.get_revision(request.tenant, book, revision)
        index = selectors.latest_index(request.tenant, book, revision)
        return Response(_json_safe(indexing.index_status(index)))

    @extend_schema(request=schemas.IndexBody, responses={202: schemas.IndexResponse})
    def post(self, request, book_id):
        book = selectors.get_book(request.tenant, book_id)
        payload = self.body()
        unknown = set(payload) - {"revision", "force"}
        if unknown:
            raise errors.invalid(f"unknown field {sorted(unknown)[0]!r}")
        revision = payload.get("revision", book.head_revision)
        force = payload.get("force", False)
        if (
            not isinstance(revision, int)
            or isinstance(revision, bool)
            or not isinstance(force, bool)
        ):
            raise errors.invalid("revision must be an integer and force a boolean")
        selectors.get_revision(request.tenant, book, revision)
        index, started = indexing.request_build(request.tenant, book, revision, force=force)
        if started:
            transaction.on_commit(lambda: build_index.delay(index.id))
        body = _json_safe({**indexing.index_status(index), "reused": not started})
        return Response(body, status=202 if started else 200)


class SelectView(WorldbookView):
    read_only_post = True

    @extend_schema(request=schemas.SelectBody, responses=schemas.SelectResponse)
    def post(self, request):
        select_request = services.parse_model(SelectRequest, self.body())
        return Response(retrieval.select_context(request.tenant, select_request))


class SearchView(WorldbookView):
    read_only_post = True

    @extend_schema(request=schemas.SearchBody, responses=schemas.SearchResponse)
    def post(self, request):
        body = services.parse_model(schemas.SearchRequest, self.body())
        refs = [(ref.book_id, ref.revision) for ref in body.books]
        return Response(
            retrieval.search(
                request.tenant, query=body.query, refs=refs, mode=body.mode, limit=body.limit
            )
        )


class _PromptIdMixin:
    def _prompt_id(self) -> str:
        prompt_id = self.request.query_params.get("prompt_id", "")
        if not prompt_id or len(prompt_id) > 200:
            raise errors.invalid("prompt_id (1-200 characters) is required")
        services.check_storable(prompt_id, "prompt_id")
        return prompt_id


class BindingsView(_PromptIdMixin, WorldbookView):
    def _render(self, prompt_id):
        rows = selectors.list_bindings(self.request.tenant, prompt_id)
        return {
            "tenant_id": str(self.request.tenant.id),
            "prompt_id": prompt_id,
            "bindings": [
                {
                    "book_id": str(b.book_id),
                    "revision": b.revision,
                    "position": b.position,
                    "enabled": b.enabled,
                }
                for b in rows
            ],
        }

    @extend_schema(
        parameters=[OpenApiParameter("prompt_id", str, required=True)],
        responses=schemas.BindingsResponse,
    )
    def get(self, request):
        return Response(self._render(self._prompt_id()))

    @extend_schema(
        parameters=[OpenApiParameter("prompt_id", str, required=True)],
        request=schemas.BindingsBody,
        responses=schemas.BindingsResponse,
    )
    def put(self, request):
        prompt_id = self._prompt_id()
        payload = self.body()
        if set(payload) - {"bindings"} or "bindings" not in payload:
            raise errors.invalid('the body is {"bindings": [...]}')
        services.put_bindings(request.tenant, prompt_id, payload["bindings"])
        return Response(self._render(prompt_id))


class ResolveBindingsView(_PromptIdMixin, WorldbookView):
    @extend_schema(
        parameters=[OpenApiParameter("prompt_id", str, required=True)],
        responses=schemas.ResolveResponse,
    )
    def get(self, request):
        prompt_id = self._prompt_id()
        books = selectors.resolve_bindings(request.tenant, prompt_id)
        return Response(
            {"tenant_id": str(request.tenant.id), "prompt_id": prompt_id, "books": books}
        )
