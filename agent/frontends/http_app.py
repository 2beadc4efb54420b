"""The HTTP JSON API as an ASGI app (FastAPI on Starlette), served by uvicorn
(see :mod:`agent.frontends.http_api`).

Routes (OpenAPI at ``/docs`` and ``/openapi.json``)::

    GET  /healthz                  → {"kb_version", "mode"}                       liveness
    GET  /readyz                   → KB in use, checkpointer and Neo4j reachable    readiness (503 if not)
    POST /v1/consults              {"question", "task"?} → 201, the first turn
    POST /v1/consults/{id}/turns   {"question", "task"?} → 200, the next turn (404 if no such consult)
    GET  /v1/consults/{id}         → {"consult_id", "turns"}

``?stream=true`` or ``Accept: text/event-stream`` on the two POST routes streams the turn as Server-Sent
Events: ``consult`` ({"consult_id"}, first), ``step`` (each graph step's progress, with its human ``line``),
``token`` (answer tokens, LLM mode), then ``turn`` (the same JSON as the plain response) or ``error``
({"error", "status"}, and "retry_after" in seconds where a plain response would carry Retry-After; status
499 when the page's Stop button cancelled the turn).

The consult page for browsers (``/``, ``/c/{id}``) is :mod:`agent.frontends.web_page`; it calls these same
routes, authenticated by a session cookie instead of the bearer token (:mod:`agent.frontends.web_auth`).

Why FastAPI: the routes, OpenAPI and pydantic models come with it (pydantic is already ours), it is
Starlette underneath (SSE via ``StreamingResponse``, body streaming we can bound), and uvicorn serves it on
one asyncio loop — an idle or half-open socket costs a few KB, not a thread. The body is read by hand rather
than by a pydantic body parameter so that the limits (size, time) and the messages (invalid UTF-8, lone
surrogates, nesting too deep) are ours and every refusal happens before anything is written.

Every error is ``{"error": "…"}`` with a status a client can act on: 400 bad input, 401 token, 404 unknown
consult or route, 405 method, 408 body too slow, 409 consult busy, 413 body too large, 429 server busy
(+ Retry-After), 500 with a one-line message (the traceback goes to the log), 503 a store unreachable
(+ Retry-After) or not ready, 504 a step that exceeded its timeout.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from agent.consult_lock import ConsultBusy
from agent.errors import UserError, store_driver_errors, store_outage
from agent.frontends.http_health import readiness
from agent.frontends.render import event_line
from agent.frontends.running_turns import RUNNING, STOPPED_MESSAGE, STOPPED_STATUS
from agent.frontends.web_auth import SecurityHeaders, access_refusal
from agent.frontends.web_page import add_web_page
from agent.redact import install_log_redaction, redact
from agent.serving import ConsultService, ServerBusy, ServeSettings, UnknownConsult
from agent.sessions import CONSULT_ID, new_consult_id
from graphs.disk.layout import KBError
from graphs.stores.base import StoreError

log = logging.getLogger("evigraph.http")

ServiceOpener = Callable[[ServeSettings], Any]
"""Returns an async context manager yielding the ``ConsultService`` (opened in the app's lifespan)."""


class ApiError(Exception):
    """A request that cannot be served, with the status, message and headers the client gets."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


class TurnRequest(BaseModel):
    """The body of both POST routes (documented in OpenAPI; parsed by :func:`read_turn_request`)."""

    question: str = Field(min_length=1, description="The clinical question or follow-up.")
    task: str = Field(default="auto", description="auto, clinical, mcq, check_reply or audit.")


TURN_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": TurnRequest.model_json_schema()}},
    }
}


def make_app(open_service: ServiceOpener, limits: ServeSettings | None = None) -> FastAPI:
    """The API; ``open_service(limits)`` opens the consult service for the app's lifetime."""
    limits = limits or ServeSettings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with open_service(limits) as service:
            app.state.service = service
            yield

    app = FastAPI(
        title="EviGraph consult API",
        summary="Evidence-grounded clinical consults: cited answers from a knowledge hypergraph.",
        version="1",
        lifespan=lifespan,
    )
    app.state.limits = limits
    _install_error_handlers(app)
    bearer = HTTPBearer(auto_error=False, description="Set EVIGRAPH_API_TOKEN on the server to require it.")

    async def require_token(
        request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)
    ) -> None:
        """The bearer token, or the consult page's session cookie (+ CSRF header on a POST)."""
        refused = access_refusal(request, credentials.credentials if credentials else "", limits.api_token)
        if refused is not None:
            status, message = refused
            raise ApiError(status, message, {"WWW-Authenticate": "Bearer"} if status == 401 else {})

    def service_of(request: Request) -> ConsultService:
        service: ConsultService = request.app.state.service
        return service

    @app.get("/healthz", tags=["health"])
    async def healthz(request: Request) -> dict[str, str]:
        """Liveness: the process answers. Says which KB version and mode it serves."""
        service = service_of(request)
        return {"kb_version": service.kb.version, "mode": service.mode}

    @app.get("/readyz", tags=["health"])
    async def readyz(request: Request) -> JSONResponse:
        """Readiness: KB opened (version and build in use), checkpointer reachable, Neo4j when configured."""
        ready, body = await readiness(service_of(request))
        return JSONResponse(body, status_code=200 if ready else 503)

    guarded = [Depends(require_token)]

    @app.post(
        "/v1/consults", status_code=201, dependencies=guarded, openapi_extra=TURN_BODY, tags=["consults"]
    )
    async def start_consult(request: Request, stream: bool = False) -> Response:
        """Start a consult with its first question; 201 with the turn (or a stream of it)."""
        body = await read_turn_request(request, limits)
        service = service_of(request)
        if wants_stream(request, stream):
            return await stream_turn(service, body)
        result = await service.ask(body.question, task=body.task)
        return JSONResponse(
            result.payload(), status_code=201, headers={"Location": f"/v1/consults/{result.consult_id}"}
        )

    @app.post(
        "/v1/consults/{consult_id}/turns", dependencies=guarded, openapi_extra=TURN_BODY, tags=["consults"]
    )
    async def add_turn(request: Request, consult_id: str, stream: bool = False) -> Response:
        """Ask the next question of a consult; 200 with the turn (409 if another turn of it is running)."""
        checked_id(consult_id)
        body = await read_turn_request(request, limits)
        service = service_of(request)
        if not await service.exists(consult_id):
            raise UnknownConsult(f"No consult '{consult_id}'. Start one with POST /v1/consults.")
        if wants_stream(request, stream):
            return await stream_turn(service, body, consult_id)
        return JSONResponse((await service.ask(body.question, consult_id, task=body.task)).payload())

    @app.get("/v1/consults/{consult_id}", dependencies=guarded, tags=["consults"])
    async def get_consult(request: Request, consult_id: str) -> dict[str, Any]:
        """Every finished turn of a consult. Never waits for a running turn."""
        turns = await service_of(request).history(checked_id(consult_id))
        if turns is None:
            raise ApiError(HTTPStatus.NOT_FOUND, f"No consult '{consult_id}'.")
        return {"consult_id": consult_id, "turns": turns}

    add_web_page(app, limits, guarded)
    app.add_middleware(SecurityHeaders)
    return app


def app_from_env() -> FastAPI:
    """The app of one worker process of ``evigraph serve --workers N``: settings and limits from the
    environment (``evigraph serve`` puts its options there before it starts the workers)."""
    from agent.llm import make_chat_model
    from graphs.model.settings import load_settings

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    install_log_redaction()
    settings = load_settings()
    llm = make_chat_model(settings)
    return make_app(lambda limits: ConsultService.open(settings, limits, llm=llm), ServeSettings())


def checked_id(consult_id: str) -> str:
    if not CONSULT_ID.match(consult_id):
        raise ApiError(HTTPStatus.NOT_FOUND, f"No consult '{consult_id[:128]}'.")
    return consult_id


def wants_stream(request: Request, stream: bool) -> bool:
    return stream or "text/event-stream" in request.headers.get("accept", "")


async def read_turn_request(request: Request, limits: ServeSettings) -> TurnRequest:
    """The body as a ``TurnRequest``, or a 4xx ``ApiError`` saying exactly what is wrong with it."""
    raw = await read_body(request, limits)
    try:
        body = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ApiError(
            HTTPStatus.BAD_REQUEST, f"The body is not valid UTF-8 ({exc.reason} at byte {exc.start})."
        ) from None
    except json.JSONDecodeError as exc:
        raise ApiError(HTTPStatus.BAD_REQUEST, f"The body is not valid JSON ({exc}).") from None
    except RecursionError:
        raise ApiError(HTTPStatus.BAD_REQUEST, "The body is not valid JSON (nested too deep).") from None
    if not isinstance(body, dict):
        raise ApiError(HTTPStatus.BAD_REQUEST, 'The body must be a JSON object like {"question": "…"}.')
    question, task = body.get("question"), body.get("task", "auto")
    if not isinstance(question, str) or not question.strip():
        raise ApiError(HTTPStatus.BAD_REQUEST, 'The body needs a non-empty "question" string.')
    if not isinstance(task, str):
        raise ApiError(HTTPStatus.BAD_REQUEST, '"task" must be a string (auto, clinical, mcq, …).')
    for name, text in (("question", question), ("task", task)):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ApiError(
                HTTPStatus.BAD_REQUEST,
                f'"{name}" contains a lone surrogate (\\ud800–\\udfff): send valid text.',
            ) from None
    return TurnRequest.model_construct(question=question, task=task)


async def read_body(request: Request, limits: ServeSettings) -> bytes:
    """The raw body, refused when larger than the limit (413) or not complete within the time limit (408).

    Why by hand: a ``Content-Length`` larger than what the client sends would otherwise hold the request
    open for as long as the client likes; here the whole body must arrive within ``body_timeout_s``.
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limits.max_body_bytes:
        raise ApiError(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
            f"The body is {declared} bytes; the limit is {limits.max_body_bytes} bytes.",
            {"Connection": "close"},
        )
    chunks: list[bytes] = []
    size = 0

    async def receive_all() -> None:
        nonlocal size
        async for chunk in request.stream():
            size += len(chunk)
            if size > limits.max_body_bytes:
                raise ApiError(
                    HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                    f"The body is over the limit of {limits.max_body_bytes} bytes.",
                    {"Connection": "close"},
                )
            chunks.append(chunk)

    try:
        await asyncio.wait_for(receive_all(), timeout=limits.body_timeout_s)
    except TimeoutError:
        raise ApiError(
            HTTPStatus.REQUEST_TIMEOUT,
            f"The body did not arrive within {limits.body_timeout_s:g} s "
            f"({size} of {declared or 'unknown'} bytes): send it complete, with a correct Content-Length.",
            {"Connection": "close"},
        ) from None
    return b"".join(chunks)


async def stream_turn(service: ConsultService, body: TurnRequest, consult_id: str | None = None) -> Response:
    """The turn as Server-Sent Events: ``consult`` (its id, first), ``step``…, ``token``…, then ``turn`` or
    ``error``. The turn runs as its own task: a client that disconnects mid-stream stops receiving, but the
    turn still finishes and is stored (a lost connection never loses a turn; read it back by its id)."""
    queue: asyncio.Queue[tuple[str, Any] | None] = asyncio.Queue()
    cid = consult_id or new_consult_id()

    def on_event(event: dict[str, Any]) -> None:
        is_token = event.get("step") == "token"
        queue.put_nowait(("token", event) if is_token else ("step", {**event, "line": event_line(event)}))

    turn = asyncio.ensure_future(
        service.ask(
            body.question, cid, task=body.task, on_event=on_event, start_if_missing=consult_id is None
        )
    )
    RUNNING.add(cid, turn)  # a strong reference: the turn outlives a client that went away; Stop cancels it
    turn.add_done_callback(lambda _: queue.put_nowait(None))
    # Refusals known before the first step (busy server, bad task) stay plain HTTP errors.
    await asyncio.sleep(0)
    if turn.done() and turn.exception() is not None:
        raise turn.exception()  # type: ignore[misc]

    async def events() -> AsyncIterator[bytes]:
        yield sse("consult", {"consult_id": cid})
        while (item := await queue.get()) is not None:
            yield sse(*item)
        if turn.cancelled():
            yield sse("error", {"error": STOPPED_MESSAGE, "status": STOPPED_STATUS})
            return
        exc = turn.exception()
        if exc is None:
            yield sse("turn", turn.result().payload())
        else:
            status, message, headers = error_response(exc, "POST stream")
            retry = {"retry_after": int(headers["Retry-After"])} if "Retry-After" in headers else {}
            yield sse("error", {"error": message, "status": status, **retry})

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    if consult_id is None:
        headers["Location"] = f"/v1/consults/{cid}"
    return StreamingResponse(events(), media_type="text/event-stream", headers=headers)


def sse(event: str, data: Any) -> bytes:
    payload = json.dumps(data, ensure_ascii=False, default=str)
    return f"event: {event}\ndata: {payload}\n\n".encode()


def error_response(exc: BaseException, where: str) -> tuple[int, str, dict[str, str]]:
    """Status, message and headers for any failure, with secrets (URL passwords, tokens) masked."""
    status, message, headers = _classify(exc, where)
    return status, redact(message), headers


def _classify(exc: BaseException, where: str) -> tuple[int, str, dict[str, str]]:
    """Status, message and headers for any failure (unexpected ones are logged with their traceback)."""
    if isinstance(exc, ApiError):
        return exc.status, exc.message, exc.headers
    if isinstance(exc, ServerBusy):
        return HTTPStatus.TOO_MANY_REQUESTS, str(exc), {"Retry-After": str(exc.retry_after_s)}
    if isinstance(exc, ConsultBusy):
        return HTTPStatus.CONFLICT, str(exc), {"Retry-After": "5"}
    if isinstance(exc, UnknownConsult):
        return HTTPStatus.NOT_FOUND, str(exc), {}
    if isinstance(exc, UserError):
        return HTTPStatus.BAD_REQUEST, str(exc), {}
    if isinstance(exc, StoreError | KBError):  # a store that is down or a KB being replaced: try again
        log.error("%s: %s", where, exc)
        return HTTPStatus.SERVICE_UNAVAILABLE, str(exc), {"Retry-After": "10"}
    outage = store_outage(exc)
    if outage:  # the driver's own error for a store that stopped: 503, one log line naming the store
        log.error("%s: %s (%s)", where, outage, type(exc).__name__)
        return HTTPStatus.SERVICE_UNAVAILABLE, outage, {"Retry-After": "10"}
    if isinstance(exc, TimeoutError):
        log.error("%s timed out", where, exc_info=exc)
        return (
            HTTPStatus.GATEWAY_TIMEOUT,
            "A step of the turn took too long (a store or the LLM did not answer).",
            {},
        )
    log.error("%s failed", where, exc_info=exc)
    return (
        HTTPStatus.INTERNAL_SERVER_ERROR,
        f"Internal error ({type(exc).__name__}); the details are in the server log.",
        {},
    )


def _install_error_handlers(app: FastAPI) -> None:
    def handler(exc: BaseException, request: Request) -> JSONResponse:
        status, message, headers = error_response(exc, f"{request.method} {request.url.path}")
        return JSONResponse({"error": message}, status_code=status, headers=headers)

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        if exc.status_code == HTTPStatus.NOT_FOUND:
            message = f"No route {request.url.path}."
        elif exc.status_code == HTTPStatus.METHOD_NOT_ALLOWED:
            allowed = dict(exc.headers or {}).get("Allow", "")
            message = (
                f"{request.method} is not allowed on {request.url.path} (use {allowed or 'another method'})."
            )
        else:
            message = str(exc.detail)
        return JSONResponse({"error": message}, status_code=exc.status_code, headers=exc.headers)

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return JSONResponse({"error": f"Invalid {where}: {first.get('msg', 'bad value')}."}, status_code=400)

    async def on_any(request: Request, exc: Exception) -> JSONResponse:
        return handler(exc, request)

    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(Exception, on_any)
    # Every error answered on purpose, by class: Starlette re-raises what only the catch-all handled into
    # uvicorn's "Exception in ASGI application" traceback, and a store outage must be one log line.
    expected = (ApiError, UserError, ServerBusy, ConsultBusy, UnknownConsult, StoreError, KBError)
    for cls in (*expected, *(driver for driver, _ in store_driver_errors())):
        app.add_exception_handler(cls, on_any)
