"""Who may use the API and the consult page: the bearer token, the page's session cookie, CSRF, origins.

Why one module for both: the page calls the same ``/v1`` routes as any client, so one decision serves them.
A program sends ``Authorization: Bearer TOKEN``. A browser cannot keep a bearer token safe from scripts, so
the page asks for the token once (``POST /web/login``) and the server sets an HttpOnly, SameSite=Strict
session cookie holding a random session id, its issue time and an HMAC of both keyed by the token, never the
token itself: a stolen cookie does not reveal the token, changing ``EVIGRAPH_API_TOKEN`` makes every cookie
stale at once (the page then asks again), and a session ends after ``SESSION_MAX_AGE_S`` even in a browser
that stays open.

Logging out ends the session on the server too, not only in the browser: its id is written to
``DATA_DIR/web-logouts/`` (a file per id, seen by every worker process of ``serve --workers N``), and a
cookie with that id is refused from then on, so a copy of the cookie taken before the logout is worthless.
Records older than the session lifetime are removed at the next logout (those cookies have expired anyway).

CSRF, in three layers, because a cookie is sent by the browser whatever page made the request:

- SameSite=Strict: a modern browser does not send the cookie on a request started by another site;
- a state-changing request authenticated by the cookie must carry ``X-EviGraph-CSRF`` with a value derived
  from the token, which only a page served to the cookie's holder knows (another origin cannot read the
  page, and a custom header cannot be sent cross-origin without a CORS preflight, which is never granted);
- a state-changing request whose ``Origin`` is not this server is refused (403) even without a token, so a
  web page cannot drive a local token-less server (``evigraph serve`` on 127.0.0.1) from the clinician's
  browser. Programs send no ``Origin`` and are not affected.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import time
from http import HTTPStatus
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import SecretStr
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("evigraph.http")
SESSION_COOKIE = "evigraph_session"
SESSION_MAX_AGE_S = 12 * 3600
"""A session lasts a working shift at most; then the page asks for the token again."""
CLOCK_SKEW_S = 60
LOGOUTS_DIR = "web-logouts"
_SESSION = re.compile(r"^(\d{1,12})\.([0-9a-f]{32})\.([0-9a-f]{64})$")
"""A cookie value: issue time (Unix seconds), session id, HMAC of both."""
CSRF_HEADER = "X-EviGraph-CSRF"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
TOKEN_MESSAGE = "Send the API token as 'Authorization: Bearer TOKEN' (the server's EVIGRAPH_API_TOKEN)."
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
"""The page's Content-Security-Policy: its own script and style files only, no inline script, no request to
any other host, never framed."""
COMMON_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # "no-referrer" makes a form POST send "Origin: null"
}


def _derive(token: str, purpose: bytes) -> str:
    return hmac.new(token.encode(), purpose, hashlib.sha256).hexdigest()


def session_mac(token: str, issued: int, session: str) -> str:
    return _derive(token, f"evigraph web session v2 {issued} {session}".encode())


def new_session(token: str) -> str:
    """A new cookie value (the token itself never leaves the login request)."""
    issued, session = int(time.time()), secrets.token_hex(16)
    return f"{issued}.{session}.{session_mac(token, issued, session)}"


def session_id(value: str, token: str) -> str | None:
    """The session id of a cookie value made with ``token`` and not yet expired; else None."""
    match = _SESSION.match(value)
    if not token or match is None:
        return None
    issued, session, mac = int(match[1]), match[2], match[3]
    if not -CLOCK_SKEW_S <= time.time() - issued <= SESSION_MAX_AGE_S:
        return None
    return session if token_matches(mac, session_mac(token, issued, session)) else None


def _logouts(request: Request) -> Path:
    return Path(request.app.state.service.settings.data_dir) / LOGOUTS_DIR


def end_session(request: Request, token: str) -> None:
    """Record the request's session as logged out (and forget the records of expired sessions)."""
    session = session_id(request.cookies.get(SESSION_COOKIE, ""), token)
    if session is None:
        return
    folder = _logouts(request)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / session).touch()
        expired = time.time() - SESSION_MAX_AGE_S - CLOCK_SKEW_S
        for record in folder.iterdir():
            if record.stat().st_mtime < expired:
                record.unlink(missing_ok=True)
    except OSError as exc:  # the browser forgets the cookie anyway; a copy of it stays valid until it expires
        log.error("could not record a logout in %s: %s", folder, exc)


def csrf_value(token: str) -> str:
    """The value the page sends in ``X-EviGraph-CSRF``; empty when the server has no token."""
    return _derive(token, b"evigraph web csrf v1") if token else ""


def expected_token(token: SecretStr | None) -> str:
    return token.get_secret_value() if token else ""


def token_matches(given: str, expected: str) -> bool:
    """Whether ``given`` (a token, cookie or CSRF value) is ``expected``, compared in constant time."""
    return bool(given) and hmac.compare_digest(given.encode(), expected.encode())


def cross_origin(request: Request) -> bool:
    """Whether a browser says this request comes from a page of another origin (no ``Origin``: a program,
    or a same-origin navigation)."""
    origin = request.headers.get("origin")
    if origin is None:
        return False
    hosts = {request.headers.get("host", ""), request.headers.get("x-forwarded-host", "")} - {""}
    return origin == "null" or urlsplit(origin).netloc not in hosts


def has_session(request: Request, token: SecretStr | None) -> bool:
    """Whether the page may be shown: no token is configured, or the session cookie matches it."""
    expected = expected_token(token)
    if not expected:
        return True
    session = session_id(request.cookies.get(SESSION_COOKIE, ""), expected)
    return session is not None and not (_logouts(request) / session).exists()


def access_refusal(request: Request, bearer: str, token: SecretStr | None) -> tuple[int, str] | None:
    """Why a request to a guarded route is refused (status, message), or None when it may go on."""
    state_changing = request.method not in SAFE_METHODS
    if state_changing and cross_origin(request):
        return HTTPStatus.FORBIDDEN, "A request from another web origin is refused."
    expected = expected_token(token)
    if not expected or token_matches(bearer, expected):
        return None
    if not bearer and has_session(request, token):
        if not state_changing or token_matches(request.headers.get(CSRF_HEADER, ""), csrf_value(expected)):
            return None
        return HTTPStatus.FORBIDDEN, f"The {CSRF_HEADER} header is missing or wrong: reload the page."
    return HTTPStatus.UNAUTHORIZED, TOKEN_MESSAGE


def login_cookie(token: str, secure: bool) -> str:
    """The ``Set-Cookie`` value of a successful login (a session cookie: it ends with the browser, and the
    server refuses it after ``SESSION_MAX_AGE_S``)."""
    flags = "; Secure" if secure else ""
    return f"{SESSION_COOKIE}={new_session(token)}; Path=/; HttpOnly; SameSite=Strict{flags}"


def logout_cookie() -> str:
    return f"{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"


class SecurityHeaders:
    """ASGI middleware adding ``COMMON_HEADERS`` to every response that does not set them itself.

    Why plain ASGI rather than ``@app.middleware("http")``: Starlette's BaseHTTPMiddleware wraps streamed
    responses in its own task, and the SSE stream of a turn must end exactly when the client goes away.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [
                    (name.lower().encode(), value.encode())
                    for name, value in COMMON_HEADERS.items()
                    if name.lower().encode() not in present
                ]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, with_headers)
