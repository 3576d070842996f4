"""The REST gateway: `POST /v1/ocr` and its friends, in front of the service's `ocr` model.

A client of the service like any other (triton_ocr.client over gRPC's asyncio API, a few
channels shared by all requests), so a gateway can run beside Triton or anywhere that reaches
it. Every answer to a caller's bad input is a problem+json `{"error": …}` with a 4xx status;
the service busy or starting is a 503 with Retry-After, a timeout a 504. Overload is not waited
out here: beyond `max_in_flight` uploads in all or `max_per_client` from one caller
(admission.py), or when the service refuses one as overloaded, the caller gets a 503 (a 429 for
its own share) that says so after `refusal_delay_s`, and backs off. Request contents are never
logged.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hmac
import itertools
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from starlette.exceptions import HTTPException as StarletteHTTPException
from tritonclient.utils import InferenceServerException

from triton_ocr import contract
from triton_ocr.client import AsyncOcrClient, Document, ImageDecodeError, pdf
from triton_ocr.client.formats import (  # the formats `read` writes: the same here
    FILE_FORMATS,
    FORMATS,
    MEDIA_TYPES,
    TABLE_FORMATS,
    jsonl_records,
    page_record,
    render_markdown,
    render_text,
)
from triton_ocr.client.ocr_client import is_overload
from triton_ocr.contract import TABLES

from .admission import Refusal, UploadGate
from .page import page_router, preview_router
from .settings import GatewaySettings
from .uploads import REQUEST_BODY, UploadError, bounded_body, files_of

PROBLEM = "application/problem+json"
RETRY_AFTER_S = 2
# the service's gRPC status -> the HTTP status the caller gets
STATUSES = {"StatusCode.INVALID_ARGUMENT": 400, "StatusCode.UNAVAILABLE": 503}
TIMEOUTS = ("StatusCode.DEADLINE_EXCEEDED",)
GATEWAY_PARAMETERS = ("format", "words")  # the rest of the query goes to `ocr`


class Problem(Exception):
    def __init__(
        self, status: int, message: str, retry_after: int | None = None, shed: bool = False
    ) -> None:
        """`shed`: the service refused the request as overloaded."""
        super().__init__(message)
        self.status, self.retry_after, self.shed = status, retry_after, shed


def problem(status: int, message: str, retry_after: int | None = None) -> JSONResponse:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    body = {"error": message, "status": status}
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=headers)


def query_value(text: str) -> Any:
    """A query parameter as the `ocr` entry point wants it: booleans, numbers, else the text
    (the server checks names, types and ranges, as it does for every caller)."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


@dataclass(frozen=True)
class Query:
    """What a POST /v1/ocr query string asks for."""

    format: str
    words: bool  # word boxes (always for the formats that hold them)
    headers_footers: bool  # markdown: keep running headers and footers
    parameters: dict[str, Any]  # the `ocr` request parameters


def query_flag(given: dict[str, str], name: str) -> bool:
    value = query_value(given.pop(name, "false"))
    if not isinstance(value, bool):
        raise Problem(400, f"{name} must be true or false, not {value!r}")
    return value


def query_parameters(query: Sequence[tuple[str, str]]) -> Query:
    """format, words, headers_footers and the `ocr` request parameters of a query string."""
    given = dict(query)
    if len(given) != len(query):
        repeated = sorted({name for name, _ in query if [n for n, _ in query].count(name) > 1})
        raise Problem(400, f"query parameter given twice: {', '.join(repeated)}")
    chosen = given.pop("format", "json")
    if chosen not in FORMATS:
        raise Problem(400, f"format must be one of {', '.join(FORMATS)}, not {chosen!r}")
    words = query_flag(given, "words")
    headers_footers = query_flag(given, "headers_footers")
    parameters = {name: query_value(value) for name, value in given.items()}
    if chosen in TABLE_FORMATS:  # Markdown writes tables: asked for unless tables=false
        parameters.setdefault(TABLES, True)
    return Query(chosen, words or chosen in FILE_FORMATS, headers_footers, parameters)


def service_problem(error: Exception) -> Problem:
    """The service's refusal or failure as the caller's HTTP problem."""
    if isinstance(error, ImageDecodeError):
        return Problem(400, str(error))
    if isinstance(error, InferenceServerException):
        status = str(error.status())
        message = error.message() or str(error)
        if is_overload(error):
            return Problem(503, f"the service is overloaded: {message}", RETRY_AFTER_S, True)
        if status in TIMEOUTS:
            return Problem(504, f"the service did not answer in time: {message}")
        code = STATUSES.get(status, 502)
        return Problem(code, message, RETRY_AFTER_S if code == 503 else None)
    if isinstance(error, (TimeoutError, asyncio.TimeoutError)):
        return Problem(504, "the service did not answer in time")
    return Problem(503, f"the service cannot be reached: {error}", RETRY_AFTER_S)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "triton_ocr_rest_requests",
            "REST OCR requests",
            ["format", "code"],
            registry=self.registry,
        )
        self.seconds = Histogram(
            "triton_ocr_rest_request_seconds",
            "REST OCR request latency",
            ["format"],
            registry=self.registry,
        )
        self.shed = Counter(
            "triton_ocr_rest_shed",
            "REST uploads refused as overloaded, by the gateway's bound or by the service",
            ["by"],
            registry=self.registry,
        )


def make_app(settings: GatewaySettings) -> FastAPI:
    """The gateway's ASGI app (uvicorn runs it: `triton-ocr gateway`)."""
    clients = [
        # overload refusals passed on at once (overload_timeout 0): the caller backs off
        AsyncOcrClient(settings.triton_url, "grpc", timeout=settings.timeout_s, overload_timeout=0)
        for _ in range(max(1, settings.channels))
    ]
    turn = itertools.cycle(clients)

    def next_client() -> AsyncOcrClient:  # the channels taken in turn
        return next(turn)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI):
        yield
        for client in clients:
            await client.close()

    app = FastAPI(
        title="triton-ocr",
        summary="OCR of images, PDFs and TIFFs by the triton-ocr service",
        docs_url=None,  # Swagger UI loads from a CDN: /docs is page.py's, offline
        redoc_url=None,
        lifespan=lifespan,
    )
    metrics = Metrics()

    @app.exception_handler(StarletteHTTPException)
    async def http_problem(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        """FastAPI's own refusals (no such route, method) and page.py's in the same
        problem+json; a 503 says when to retry, as every 503 here does."""
        retry_after = RETRY_AFTER_S if exc.status_code == 503 else None
        return problem(exc.status_code, str(exc.detail), retry_after)

    def refuse(why: Refusal) -> Response:
        metrics.shed.labels("client" if why.per_client else "gateway").inc()
        said = "too many uploads from one caller" if why.per_client else "the gateway is overloaded"
        message = (
            f"{said}: {why.in_flight} uploads are being answered, at most {why.limit} at once; "
            f"send again after {RETRY_AFTER_S} s"
        )
        return problem(429 if why.per_client else 503, message, RETRY_AFTER_S)

    # before the body is read and through a streamed answer's end: a middleware, not a route's
    # dependency (admission.py)
    app.add_middleware(
        UploadGate,
        limit=max(1, settings.max_in_flight),
        per_client=max(1, settings.max_per_client),
        refuse=refuse,
        delay_s=settings.refusal_delay_s,
    )
    # the /v1/ routes' dependency, declared in /openapi.json as their security
    authorized = [Depends(bearer_token(settings.token))] if settings.token is not None else []
    app.include_router(health_router(next_client, metrics))
    app.include_router(ocr_router(settings, next_client, metrics), dependencies=authorized)
    # the page for people at /, /docs and its POST /v1/preview
    app.include_router(page_router())
    preview = preview_router(next_client, settings.max_body_bytes)
    app.include_router(preview, dependencies=authorized)
    return app


def bearer_token(token: str) -> Callable[..., Awaitable[None]]:
    """A dependency that lets in only callers sending `Authorization: Bearer <token>`."""
    scheme = HTTPBearer(auto_error=False, description="the gateway's --token-file")

    async def check(given: HTTPAuthorizationCredentials | None = Depends(scheme)) -> None:
        sent = given.credentials if given is not None else ""
        if not hmac.compare_digest(sent.encode(), token.encode()):
            raise StarletteHTTPException(401, "missing or wrong bearer token")

    return check


def health_router(next_client: Callable[[], AsyncOcrClient], metrics: Metrics) -> APIRouter:
    """/healthz, /readyz and /metrics: probes and scrapers, no token."""
    router = APIRouter()

    @router.get("/healthz")
    async def healthz() -> dict:
        """The gateway is up (whether the service is: /readyz)."""
        return {"status": "ok"}

    @router.get("/readyz")
    async def readyz() -> Response:
        """Ready when the service's `ocr` entry point is."""
        try:
            ready = await next_client().client.is_model_ready(contract.OCR_MODEL)
        except Exception as exc:  # noqa: BLE001 (any failure to ask is "not ready")
            return problem(503, f"the service cannot be reached: {exc}", RETRY_AFTER_S)
        if not ready:
            return problem(503, f"the service's {contract.OCR_MODEL} is not ready", RETRY_AFTER_S)
        return JSONResponse({"status": "ready"})

    @router.get("/metrics")
    async def prometheus() -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return router


def ocr_router(
    settings: GatewaySettings, next_client: Callable[[], AsyncOcrClient], metrics: Metrics
) -> APIRouter:
    """POST /v1/ocr; the app adds its dependencies (the token)."""
    router = APIRouter()

    @router.post(
        "/v1/ocr",
        responses={200: {"content": {media: {} for media in MEDIA_TYPES.values()}}},
        openapi_extra={
            "requestBody": REQUEST_BODY,
            "parameters": [
                {"name": "format", "in": "query", "schema": {"enum": list(FORMATS)}},
                {"name": "words", "in": "query", "schema": {"type": "boolean"}},
                {"name": "headers_footers", "in": "query", "schema": {"type": "boolean"}},
                {"name": "tables", "in": "query", "schema": {"type": "boolean"}},
            ],
        },
    )
    async def ocr(request: Request) -> Response:
        """Read the uploaded files (multipart `file` parts, or one raw body): `format` json (the
        `read --json` document; a list for several files), jsonl (a page per line, as each file
        is read), text, markdown (`headers_footers=true` keeps running headers and footers),
        hocr, alto or pdf (one file); `words=true` for word boxes; `tables=true` for each page's
        tables (markdown asks for them unless `tables=false`); any other query parameter is an
        `ocr` request parameter (docs/api.md)."""
        start = time.perf_counter()
        chosen = request.query_params.get("format", "json")
        try:
            response = await answer(request, settings, next_client())
        except (Problem, UploadError) as exc:
            response = problem(exc.status, str(exc), getattr(exc, "retry_after", None))
            if getattr(exc, "shed", False):
                metrics.shed.labels("service").inc()
                await asyncio.sleep(settings.refusal_delay_s)  # as the gateway's own refusals
        label = chosen if chosen in FORMATS else "invalid"
        metrics.requests.labels(label, str(response.status_code)).inc()
        metrics.seconds.labels(label).observe(time.perf_counter() - start)
        return response

    return router


async def answer(request: Request, settings: GatewaySettings, client: AsyncOcrClient) -> Response:
    query = query_parameters(request.query_params.multi_items())
    chosen, parameters = query.format, query.parameters
    try:
        limit = settings.max_body_bytes or (await client.limits(contract.OCR_MODEL)).max_image_bytes
    except Exception as exc:  # noqa: BLE001
        raise service_problem(exc) from exc
    body = await bounded_body(request.stream(), request.headers.get("content-length"), limit)
    files = files_of(body, request.headers.get("content-type"))
    if chosen in FILE_FORMATS and len(files) > 1:
        raise Problem(400, f"format={chosen} answers one file; {len(files)} were sent")
    if chosen == "pdf":
        return await searchable(client, files[0], parameters)
    if chosen == "jsonl":
        return await jsonl_answer(client, files, query.words, parameters)
    documents = await read(client, [data for _, data in files], query.words, parameters)
    documents = [Document(d.pages, name) for d, (name, _) in zip(documents, files, strict=True)]
    several = len(documents) > 1
    if chosen == "json":
        found = [document.to_dict() for document in documents]
        return JSONResponse(found[0] if len(found) == 1 else found)
    if chosen == "text":
        return PlainTextResponse("".join(render_text(d, several) for d in documents))
    if chosen == "markdown":
        text = "\n".join(render_markdown(d, several, query.headers_footers) for d in documents)
        return Response(text, media_type=MEDIA_TYPES[chosen])
    rendered = documents[0].to_hocr() if chosen == "hocr" else documents[0].to_alto()
    return Response(rendered, media_type=MEDIA_TYPES[chosen])


async def read(
    client: AsyncOcrClient, items: list[bytes], words: bool, parameters: dict[str, Any]
) -> list[Document]:
    try:
        return await client.read_documents(items, word_boxes=words, **parameters)
    # asyncio.TimeoutError is TimeoutError from Python 3.11 only (the container's is 3.10)
    except (
        InferenceServerException,
        ImageDecodeError,
        OSError,
        TimeoutError,
        asyncio.TimeoutError,
    ) as exc:
        raise service_problem(exc) from exc


@dataclass(frozen=True)
class Part:
    """What one `ocr` request of a jsonl answer reads: a whole file, or one page of a PDF."""

    name: str | None
    data: bytes
    page: int | None = None  # the page's 0-based index in its PDF (None: the whole file)
    pages: int = 1  # the file's pages


async def jsonl_answer(
    client: AsyncOcrClient,
    files: list[tuple[str | None, bytes]],
    words: bool,
    parameters: dict[str, Any],
) -> Response:
    """format=jsonl: a page per line as each is read, in the order sent. A PDF of several pages
    goes one page per request, so its first line comes after one page's work, not the whole
    file's; as many pages are in flight as the service reads at once within a request
    (images_in_flight), and the request limits (items; pages all together) hold for the upload
    as they would for one request. The first line is read before answering, so a parameter the
    service refuses is a 400, not a 200 with an error line."""
    try:
        many, documents = await client.request_limits()
    except Exception as exc:  # noqa: BLE001
        raise service_problem(exc) from exc
    if len(files) > many.max_images_per_request:
        limit = many.max_images_per_request
        raise Problem(400, f"the request holds {len(files)} files; at most {limit} per request")
    splits = await asyncio.to_thread(lambda: [pdf.split_pages(data) for _, data in files])
    total = sum(count for count, _ in splits)
    if total > documents.max_pages:
        limit = documents.max_pages
        raise Problem(400, f"the request holds {total} pages; at most {limit} per request")

    async def parts() -> AsyncGenerator[Part, None]:
        for (name, data), (count, apart) in zip(files, splits, strict=True):
            if apart is None:
                yield Part(name, data)
                continue
            try:
                for page in range(count):
                    yield Part(name, await asyncio.to_thread(next, apart), page, count)
            finally:
                apart.close()

    results = read_ahead(client, parts(), max(1, many.images_in_flight), words, parameters)
    first = await anext(results)
    if isinstance(first[1], Problem):
        await results.aclose()
        raise first[1]

    async def body() -> AsyncIterator[bytes]:
        try:
            yield part_lines(*first).encode()
            async for result in results:
                yield part_lines(*result).encode()
        finally:
            await results.aclose()

    return StreamingResponse(body(), media_type=MEDIA_TYPES["jsonl"])


async def read_ahead(
    client: AsyncOcrClient,
    parts: AsyncGenerator[Part, None],
    in_flight: int,
    words: bool,
    parameters: dict[str, Any],
) -> AsyncGenerator[tuple[Part, Document | Problem], None]:
    """Each part read by a request of its own, `in_flight` at a time, answered in order; a part
    the service refuses comes with its Problem. Closing it cancels the reads still running."""
    pending: collections.deque[tuple[Part, asyncio.Future]] = collections.deque()
    try:
        async for part in parts:
            pending.append(
                (part, asyncio.ensure_future(read(client, [part.data], words, parameters)))
            )
            if len(pending) >= in_flight:
                yield await answered(*pending.popleft())
        while pending:
            yield await answered(*pending.popleft())
    finally:
        for _, task in pending:
            task.cancel()
        await asyncio.gather(*(task for _, task in pending), return_exceptions=True)
        await parts.aclose()


async def answered(part: Part, task: asyncio.Future) -> tuple[Part, Document | Problem]:
    try:
        (document,) = await task
    except Problem as exc:
        return part, exc
    return part, document


def part_lines(part: Part, result: Document | Problem) -> str:
    """A part's JSON lines: its pages, numbered as in its file; a refused part is one line
    {"file", "page" (of a PDF read page by page), "error"}."""
    if isinstance(result, Problem):
        where = {} if part.page is None else {"page": part.page + 1, "pages": part.pages}
        return json.dumps({"file": part.name, **where, "error": str(result)}) + "\n"
    if part.page is None:
        return jsonl_records(Document(result.pages, part.name))
    (page,) = result.pages
    return page_record(part.name, replace(page, number=part.page), part.pages)


async def searchable(
    client: AsyncOcrClient, upload: tuple[str | None, bytes], parameters: dict[str, Any]
) -> Response:
    """format=pdf: the file as a searchable PDF (client/pdf.py; pages with text kept)."""
    name, data = upload
    try:
        job = await asyncio.to_thread(pdf.prepare, data)
    except ValueError as exc:
        raise Problem(400, str(exc)) from exc
    document = Document(())
    if job.send is not None:
        (read_back,) = await read(client, [job.send], True, parameters)
        document = pdf.renumbered(job, read_back)
    errors = [page.error for page in document.pages if page.error]
    try:
        made = await asyncio.to_thread(pdf.searchable_pdf, job, document)
    except ValueError as exc:
        raise Problem(400, str(exc)) from exc
    headers = {"X-Pages-Not-Read": str(len(errors))} if errors else None
    return Response(made, media_type=MEDIA_TYPES["pdf"], headers=headers)
