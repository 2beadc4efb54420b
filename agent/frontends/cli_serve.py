"""``evigraph slack`` and ``evigraph serve``: run the Slack bot or the HTTP API in the foreground.

Both serve consults as ``evigraph ask`` does (default KB built on first use, ``--offline`` to ignore a
configured LLM), through the one async consult service (``agent.serving``), and report setup problems
(missing Slack secrets, a refused token, a busy port) as one-line errors before they start listening. They
bind to 127.0.0.1 unless told otherwise: neither has TLS, and the HTTP API has no authentication, so
anything public goes through a TLS proxy.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from socketserver import BaseServer
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from agent.errors import UserError, user_errors
from agent.frontends.cli_kb import ensure_default_kb, open_consultant
from graphs.model.settings import Settings, load_settings

if TYPE_CHECKING:
    from agent.service_runner import ServiceRunner

Host = Annotated[str, typer.Option(help="Address to listen on (keep 127.0.0.1 behind a TLS proxy).")]
Offline = Annotated[bool, typer.Option("--offline", help="Do not use an LLM even if one is configured.")]
KbDir = Annotated[Path | None, typer.Option("--kb-dir", help="Knowledge-base root.")]


def slack(
    host: Host = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 3000,
    offline: Offline = False,
    kb_dir: KbDir = None,
    socket: Annotated[
        bool, typer.Option("--socket", help="Socket Mode: no public URL; needs SLACK_APP_TOKEN (xapp-…).")
    ] = False,
) -> None:
    """Slack bot: mention it in a channel or DM it; one Slack thread is one consult.

    Needs SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET. Slack's Request URL: https://YOUR-PROXY/slack/events
    With --socket: SLACK_BOT_TOKEN and SLACK_APP_TOKEN, and no Request URL at all.
    """
    from slack_bolt.error import BoltError
    from slack_sdk.errors import SlackApiError

    from agent.frontends.slack_bot import (
        EVENTS_PATH,
        make_slack_app,
        make_slack_server,
        make_socket_mode_handler,
    )

    settings = load_settings(kb_dir=kb_dir)
    _log_to_stderr()
    with user_errors():
        token, secret = settings.slack_bot_token, settings.slack_signing_secret
        second = ("SLACK_APP_TOKEN", settings.slack_app_token) if socket else ("SLACK_SIGNING_SECRET", secret)
        missing = [
            n for n, v in (("SLACK_BOT_TOKEN", token), second) if v is None or not v.get_secret_value()
        ]
        if missing or token is None:
            raise UserError(
                f"Set {' and '.join(missing)} in the environment or in .env (your Slack app's "
                "OAuth & Permissions → Bot User OAuth Token; Basic Information → Signing Secret, or "
                "App-Level Tokens with connections:write for --socket)."
            )
        runner = open_runner(settings, offline)
    try:
        with user_errors():
            try:
                signing = secret.get_secret_value() if secret is not None else ""
                slack_app = make_slack_app(
                    runner, token.get_secret_value(), signing, streaming=settings.slack_streaming
                )
            except (BoltError, SlackApiError) as exc:
                raise UserError(
                    f"Slack did not accept the bot token ({exc}). Check SLACK_BOT_TOKEN."
                ) from None
            except OSError as exc:
                raise UserError(f"Could not reach Slack to check the bot token ({exc}).") from None
            if socket and settings.slack_app_token is not None:
                handler = make_socket_mode_handler(slack_app, settings.slack_app_token.get_secret_value())
                mode = runner.service.mode
                Console(stderr=True).print(f"[dim]Slack Socket Mode · {mode} mode · Ctrl-C to stop")
                try:
                    handler.start()  # blocks; reconnects by itself
                except KeyboardInterrupt:
                    handler.close()
                return
            server = _listen(lambda: make_slack_server(slack_app, host, port), host, port)
        where = f"http://{host}:{port}{EVENTS_PATH}"
        _serve(server, f"Slack events at {where} · {runner.service.mode} mode · KB {runner.kb.version}")
    finally:
        runner.close()


def open_runner(settings: Settings, offline: bool = False) -> ServiceRunner:
    """The consult service of the Slack bot and the MCP server (the HTTP API's, on its own loop thread):
    the configured KB — the default one built on first use — live-switched, and the LLM unless ``offline``."""
    from agent.llm import make_chat_model
    from agent.service_runner import ServiceRunner
    from agent.serving import ServeSettings

    if settings.kb_dir is None:
        ensure_default_kb(settings)
    return ServiceRunner(settings, ServeSettings(), llm=None if offline else make_chat_model(settings))


def serve(
    host: Host = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8080,
    offline: Offline = False,
    kb_dir: KbDir = None,
    parallel: Annotated[
        int | None, typer.Option(help="Turns run at the same time (EVIGRAPH_MAX_PARALLEL_TURNS, default 4).")
    ] = None,
    workers: Annotated[
        int, typer.Option(min=1, help="Server processes (about one CPU each; each opens its own KB).")
    ] = 1,
) -> None:
    """The consult page for browsers at / and the HTTP JSON API (OpenAPI at /docs): POST /v1/consults,
    POST /v1/consults/ID/turns, GET /v1/consults/ID, GET /healthz, GET /readyz. Set EVIGRAPH_API_TOKEN to
    require a bearer token (the page asks for it once)."""
    from agent.frontends.http_api import ApiServer, serve_workers
    from agent.serving import ConsultService, ServeSettings

    settings = load_settings(kb_dir=kb_dir)
    _log_to_stderr()
    with user_errors():
        limits = ServeSettings() if parallel is None else ServeSettings(max_parallel_turns=parallel)
        consultant = open_consultant(settings, offline)  # builds the default KB on first use, checks the LLM

        def open_service(limits: ServeSettings) -> Any:
            return ConsultService.open(settings, limits, llm=consultant.llm)

        consultant.kb.close()  # the service opens (and live-switches) its own
        try:
            api = ApiServer(open_service, host, port, limits) if workers == 1 else None
        except OSError as exc:
            raise UserError(
                f"Cannot listen on {host}:{port} ({exc.strerror or exc}). Choose another --port."
            ) from None
    err = Console(stderr=True)
    where = f"http://{host}:{api.port if api else port}"
    err.print(
        f"[dim]EviGraph consult page at {where}/ · API {where}/v1/consults (docs {where}/docs) · "
        f"{consultant.mode} mode · KB {consultant.kb.version} · {workers} worker(s) · Ctrl-C to stop"
    )
    if api is not None:
        api.serve()
    else:
        _export_for_workers(settings.kb_root, offline, limits)
        with user_errors():
            try:
                serve_workers(host, port, workers, limits)
            except OSError as exc:
                raise UserError(
                    f"Cannot listen on {host}:{port} ({exc.strerror or exc}). Choose another --port."
                ) from None
    err.print("[dim]stopped.")


def _export_for_workers(kb_root: Path, offline: bool, limits: Any) -> None:
    """Worker processes build their settings from the environment: put this command's options there."""
    os.environ["EVIGRAPH_KB_DIR"] = str(kb_root)
    os.environ["EVIGRAPH_MAX_PARALLEL_TURNS"] = str(limits.max_parallel_turns)
    if offline:
        os.environ["EVIGRAPH_LLM_ENABLED"] = "false"


def _listen(make: Callable[[], BaseServer], host: str, port: int) -> BaseServer:
    """Bind the server; a busy port or an unknown host becomes a message saying so."""
    try:
        return make()
    except OSError as exc:
        raise UserError(
            f"Cannot listen on {host}:{port} ({exc.strerror or exc}). Choose another --port."
        ) from None


def _serve(server: BaseServer, banner: str) -> None:
    """Serve in the foreground until Ctrl-C, which stops cleanly (exit 0)."""
    err = Console(stderr=True)
    err.print(f"[dim]{banner} · Ctrl-C to stop")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        err.print("[dim]stopped.")
    finally:
        server.server_close()


def _log_to_stderr() -> None:
    """Servers report requests and failures through logging: show them on stderr."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
