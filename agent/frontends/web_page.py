"""The consult page for clinicians in a browser, served by ``evigraph serve`` beside the JSON API.

Routes (added to the API's app by :func:`add_web_page`)::

    GET  /                             the page: ask, follow up, recent consults (the token form if needed)
    GET  /c/{id}                       the same page opened on a consult (its permalink); a 404 page if none
    POST /web/login                    form field ``token`` → the session cookie, back to the page
    POST /web/logout                   end the session (on the server too) and forget the cookie
    GET  /web/static/{app.js,app.css}  the page's only script and style sheet
    GET  /web/consults                 recent consults (first question, last activity, status)      guarded
    GET  /web/consults/{id}[?full=1]   every turn as the page shows it, citations resolved           guarded
    GET  /web/consults/{id}/export.md  the terminal's /export, as a download (also export.json)      guarded
    POST /web/consults/{id}/stop       cancel the consult's running turn (the Stop button)            guarded

Asking goes through the API's own ``POST /v1/consults…?stream=true`` (same limits, errors and KB switching),
authenticated by the session cookie plus the CSRF header (:mod:`agent.frontends.web_auth`).

Why no framework and no build step: the page must work on a hospital network that reaches nothing outside,
so nothing is fetched at run time and nothing is vendored. The HTML is three small templates filled with
:func:`html.escape`d values, the script is one hand-written file (``web/app.js``) that puts every string
into the page with ``textContent``, and a KG chain is drawn as inline SVG by that script (a chain is a short
path: boxes left to right, labelled arrows), so no graph library is needed.
"""

from __future__ import annotations

import asyncio
import html
from http import HTTPStatus
from importlib import resources
from string import Template
from typing import Any
from urllib.parse import parse_qs

from fastapi import FastAPI, Request
from fastapi.params import Depends
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from agent.frontends.chat_commands import aconsult_summaries, export_document, exported_evidence_ids
from agent.frontends.running_turns import RUNNING
from agent.frontends.web_auth import (
    PAGE_CSP,
    cross_origin,
    csrf_value,
    end_session,
    expected_token,
    has_session,
    login_cookie,
    logout_cookie,
    token_matches,
)
from agent.frontends.web_view import chains_by_id, consult_view, needed_ids, read_lookups
from agent.nodes.answer import SAFETY_NOTE
from agent.serving import ConsultService, ServeSettings, UnknownConsult
from agent.sessions import CONSULT_ID, thread_config

WEB = resources.files("agent.frontends").joinpath("web")
STATIC = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}
PAGE_HEADERS = {"Content-Security-Policy": PAGE_CSP, "Cache-Control": "no-store"}
LOGIN_BODY_BYTES = 4096
TASKS = ("auto", "clinical", "mcq", "check_reply", "audit")
LOGOUT_FORM = (
    '<form method="post" action="/web/logout" class="logout"><button type="submit">Log out</button></form>'
)


SCRIPT_TAG = '<script src="/web/static/app.js" defer></script>'


def template(name: str) -> Template:
    return Template(WEB.joinpath(name).read_text(encoding="utf-8"))


def html_page(body: str, title: str, status: int = HTTPStatus.OK, script: bool = False) -> HTMLResponse:
    """``body`` (already escaped) in the shared shell: the style sheet, and the script when ``script``."""
    text = SHELL.substitute(title=html.escape(title), script=SCRIPT_TAG if script else "", body=body)
    return HTMLResponse(text, status_code=status, headers=PAGE_HEADERS)


SHELL = template("shell.html")


def add_web_page(app: FastAPI, limits: ServeSettings, guarded: list[Depends]) -> None:
    """Add the page's routes to the API's ``app``; ``guarded`` is the API's token check."""
    page, login, missing = template("page.html"), template("login.html"), template("notfound.html")
    static = {name: WEB.joinpath(name).read_bytes() for name in STATIC}

    def service_of(request: Request) -> ConsultService:
        service: ConsultService = request.app.state.service
        return service

    def login_page(
        request: Request, message: str = "", status: int = HTTPStatus.UNAUTHORIZED
    ) -> HTMLResponse:
        back = request.url.path if request.url.path.startswith("/c/") else "/"
        body = login.substitute(message=html.escape(message), next=html.escape(back))
        return html_page(body, "EviGraph — access token", status)

    def render_page(request: Request, consult_id: str) -> HTMLResponse:
        service = service_of(request)
        values = {
            "consult_id": consult_id,
            "csrf": csrf_value(expected_token(limits.api_token)),
            "kb_version": service.kb.version,
            "mode": service.mode,
            "safety_note": SAFETY_NOTE,
        }
        markup = {  # fixed markup, no data in it
            "logout": "" if limits.api_token is None else LOGOUT_FORM,
            "task_options": "".join(f'<option value="{t}">{t}</option>' for t in TASKS[1:]),
        }
        escaped = {k: html.escape(v) for k, v in values.items()}
        return html_page(page.substitute(escaped, **markup), "EviGraph consult", script=True)

    @app.get("/", include_in_schema=False)
    async def home(request: Request) -> HTMLResponse:
        if not has_session(request, limits.api_token):
            return login_page(request)
        return render_page(request, "")

    @app.get("/c/{consult_id}", include_in_schema=False)
    async def consult_page(request: Request, consult_id: str) -> HTMLResponse:
        if not has_session(request, limits.api_token):
            return login_page(request)
        if not CONSULT_ID.match(consult_id) or not await service_of(request).exists(consult_id):
            body = missing.substitute(consult_id=html.escape(consult_id[:128]))
            return html_page(body, "EviGraph — no such consult", HTTPStatus.NOT_FOUND)
        return render_page(request, consult_id)

    @app.post("/web/login", include_in_schema=False)
    async def web_login(request: Request) -> Response:
        expected = expected_token(limits.api_token)
        if cross_origin(request):
            return login_page(request, "A login from another web origin is refused.", HTTPStatus.FORBIDDEN)
        try:
            raw = await asyncio.wait_for(_small_body(request), timeout=limits.body_timeout_s)
        except TimeoutError:
            return login_page(
                request, "The form did not arrive in time. Try again.", HTTPStatus.REQUEST_TIMEOUT
            )
        form = parse_qs(raw.decode("utf-8", "replace"))
        token = (form.get("token") or [""])[0]
        back = (form.get("next") or ["/"])[0]
        back = back if back.startswith("/") and not back.startswith("//") else "/"
        if expected and not token_matches(token, expected):
            return login_page(request, "That is not this server's token. Try again.")
        response = RedirectResponse(back, status_code=HTTPStatus.SEE_OTHER)
        if expected:
            secure = request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
            response.headers["Set-Cookie"] = login_cookie(expected, secure)
        return response

    @app.post("/web/logout", include_in_schema=False)
    async def web_logout(request: Request) -> Response:
        response = RedirectResponse("/", status_code=HTTPStatus.SEE_OTHER)
        if not cross_origin(request):
            end_session(request, expected_token(limits.api_token))
            response.headers["Set-Cookie"] = logout_cookie()
        return response

    @app.get("/web/static/{name}", include_in_schema=False)
    async def web_static(name: str) -> Response:
        if name not in static:
            return JSONResponse({"error": f"No file {name[:64]}."}, status_code=HTTPStatus.NOT_FOUND)
        return Response(static[name], media_type=STATIC[name], headers={"Cache-Control": "no-cache"})

    @app.get("/web/consults", dependencies=guarded, include_in_schema=False)
    async def web_consults(request: Request) -> dict[str, Any]:
        return {"consults": await aconsult_summaries(service_of(request).checkpointer, 30)}

    @app.get("/web/consults/{consult_id}", dependencies=guarded, include_in_schema=False)
    async def web_consult(request: Request, consult_id: str, full: bool = False) -> dict[str, Any]:
        service = service_of(request)
        values = await stored_values(service, consult_id)
        evidence, entities, relations = needed_ids(list(values.get("turns") or []), chains_by_id(values))
        lookups = await service.use_kb(lambda kb: read_lookups(kb, evidence, entities, relations))
        return {
            "consult_id": consult_id,
            "kb_version": service.kb.version,
            "mode": service.mode,
            "running": RUNNING.running(consult_id),
            "turns": consult_view(values, lookups, full),
        }

    @app.get("/web/consults/{consult_id}/export.{fmt}", dependencies=guarded, include_in_schema=False)
    async def web_export(request: Request, consult_id: str, fmt: str) -> Response:
        if fmt not in ("md", "json"):
            return JSONResponse({"error": "Export as .md or .json."}, status_code=HTTPStatus.NOT_FOUND)
        service = service_of(request)
        turns = await service.history(consult_id) if CONSULT_ID.match(consult_id) else None
        if turns is None:
            raise UnknownConsult(f"No consult '{consult_id[:128]}'.")
        texts = await service.evidence_texts(exported_evidence_ids(turns)) if fmt == "md" else {}
        text = await asyncio.to_thread(export_document, fmt, consult_id, turns, texts, service.kb.version)
        media = "text/markdown; charset=utf-8" if fmt == "md" else "application/json"
        disposition = f'attachment; filename="evigraph-consult-{consult_id}.{fmt}"'
        return Response(text, media_type=media, headers={"Content-Disposition": disposition})

    @app.post("/web/consults/{consult_id}/stop", dependencies=guarded, include_in_schema=False)
    async def web_stop(consult_id: str) -> dict[str, Any]:
        return {"consult_id": consult_id, "stopped": RUNNING.stop(consult_id)}


async def stored_values(service: ConsultService, consult_id: str) -> dict[str, Any]:
    """The consult's latest checkpoint (turns and the chains they cite); ``UnknownConsult`` (404) if none."""
    saved = None
    if CONSULT_ID.match(consult_id):
        saved = await service.checkpointer.aget_tuple(thread_config(consult_id))  # type: ignore[arg-type]
    if saved is None:
        raise UnknownConsult(f"No consult '{consult_id[:128]}'.")
    values: dict[str, Any] = saved.checkpoint.get("channel_values", {})
    return values


async def _small_body(request: Request) -> bytes:
    """A login form's body, at most ``LOGIN_BODY_BYTES`` (a longer one is cut: no token is that long)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        chunks.append(chunk)
        size += len(chunk)
        if size > LOGIN_BODY_BYTES:
            break
    return b"".join(chunks)[:LOGIN_BODY_BYTES]
