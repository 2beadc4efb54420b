"""The ``evigraph`` command: consults (ask, chat), servers (slack, serve), KB management, settings."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import SecretStr
from rich.console import Console

from agent.errors import user_errors
from agent.frontends.cli_kb import kb_app
from agent.frontends.cli_llm import llm_app
from agent.frontends.cli_serve import serve, slack
from agent.frontends.mcp_cli import mcp
from agent.redact import install_log_redaction, redact_value, remember_secret
from graphs.model.settings import SettingsError, load_settings


class EviGraphApp(typer.Typer):
    """The CLI app; a bad setting read by any command is one line and exit code 2, not a traceback (the
    settings are read inside commands, before their own error handling starts)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except SettingsError as exc:
            Console(stderr=True).print(f"[bold red]Error:[/] {exc}", markup=True, highlight=False)
            raise SystemExit(2) from None


app = EviGraphApp(
    name="evigraph",
    help="EviGraph: evidence-grounded consults from a medical knowledge hypergraph, with citations.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(kb_app, name="kb")
app.add_typer(llm_app, name="llm")


@app.callback()
def _startup() -> None:
    """Before any command: no log record of this process may carry a secret (see agent/redact.py)."""
    install_log_redaction()
    try:
        settings = load_settings()
    except Exception:  # a bad setting is reported by the command that needs it
        return
    for name in type(settings).model_fields:  # configured keys of any shape are masked by value
        value = getattr(settings, name)
        if isinstance(value, SecretStr):
            remember_secret(value.get_secret_value())


app.command("slack")(slack)
app.command("serve")(serve)
app.command("mcp")(mcp)


@app.command("config")
def config(as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """Print the effective settings (secrets masked)."""
    values = redact_value(load_settings().masked())  # URLs too: passwords in userinfo or ?password=
    if as_json:
        typer.echo(json.dumps(values, indent=2, default=str))
        return
    out = Console()
    for key, value in values.items():
        out.print(f"[bold]{key:<18}[/] {value}")


@app.command("ask")
def ask(
    question: Annotated[str, typer.Argument(help="The question; use - to read it from standard input.")],
    task: Annotated[str, typer.Option(help="auto | clinical | mcq | check_reply | audit")] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print the answer as JSON (for machines).")] = False,
    offline: Annotated[
        bool, typer.Option("--offline", help="Do not use an LLM even if one is configured.")
    ] = False,
    consult: Annotated[str | None, typer.Option("--consult", help="Continue this consult id.")] = None,
    kb_dir: Annotated[Path | None, typer.Option("--kb-dir", help="Knowledge-base root.")] = None,
    full: Annotated[
        bool, typer.Option("--full", help="Show every passage and chain, not the compact view.")
    ] = False,
) -> None:
    """One question, one cited answer (builds the default KB on first use)."""
    from agent.consult import prepare_turn
    from agent.context import ConsultContext
    from agent.frontends.cli_kb import open_consultant
    from agent.frontends.render import event_line, print_answer, turn_footer

    settings = load_settings(kb_dir=kb_dir)
    err = Console(stderr=True)
    with user_errors():
        # The user's wait began when the process started (start-up counts towards the LLM deadline), or
        # once the question was read from stdin; a first-use KB build (its own progress bar) is not counted.
        waiting_since = process_started()
        if question == "-":
            question = sys.stdin.read()
            waiting_since = time.monotonic()
        prepare_turn(question, task)  # bad input is refused before the KB is opened (or built)
        kb_ready = settings.kb_dir is not None or (settings.kb_root / "current").exists()
        consultant = open_consultant(settings, offline)
        if not kb_ready:
            waiting_since = time.monotonic()
        context = ConsultContext(started_at=waiting_since, extra={"full": full})
        if as_json:
            result = consultant.ask(question, consult_id=consult, task=task, context=context)
        else:
            with err.status("consulting…") as status:
                result = consultant.ask(
                    question,
                    consult_id=consult,
                    task=task,
                    on_event=lambda e: status.update(event_line(e)),
                    context=context,
                )
    if as_json:
        typer.echo(json.dumps(result.payload(), indent=2, default=str))
        return
    out = Console()
    evidence = consultant.evidence_texts(result.answer.get("evidence_ids", []))
    print_answer(out, result.answer, evidence, full=full)
    err.print(turn_footer(result.consult_id, result.seconds, result.llm_calls, result.llm_tokens))


def process_started() -> float:
    """``time.monotonic()`` when this process started (Linux ``/proc``; now where it cannot be read)."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        age = uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: start time in clock ticks
    except (OSError, ValueError, IndexError):
        return time.monotonic()
    return time.monotonic() - max(0.0, age)


@app.command("chat")
def chat(
    resume: Annotated[str | None, typer.Option("--resume", help="Continue this consult id.")] = None,
    task: Annotated[str, typer.Option(help="auto | clinical | mcq | check_reply | audit")] = "auto",
    offline: Annotated[
        bool, typer.Option("--offline", help="Do not use an LLM even if one is configured.")
    ] = False,
    kb_dir: Annotated[Path | None, typer.Option("--kb-dir", help="Knowledge-base root.")] = None,
) -> None:
    """A consult in the terminal: questions and follow-ups, live steps, cited answers, /help for commands."""
    from agent.consult import check_task
    from agent.frontends.cli_kb import open_consultant
    from agent.frontends.terminal import ChatSession

    settings = load_settings(kb_dir=kb_dir)
    out = Console()
    with user_errors():
        check_task(task)  # before loading anything
        with out.status("loading the knowledge base…"):
            consultant = open_consultant(settings, offline)
        session = ChatSession(
            consultant, out, task=task, consult_id=resume, history_path=settings.data_dir / "chat_history"
        )
    raise typer.Exit(session.run())


@app.command("consults")
def consults(
    limit: Annotated[int, typer.Option(help="How many, newest first.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Recent consult ids with their first question (continue one with `evigraph chat --resume ID`)."""
    from agent.frontends.chat_commands import consult_summaries
    from agent.frontends.render import consults_table
    from agent.sessions import open_checkpointer

    settings = load_settings()
    with user_errors():
        rows = consult_summaries(open_checkpointer(settings, read_only=True), limit)
    if as_json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        typer.echo("No consults yet: start one with `evigraph chat` or `evigraph ask`.")
        return
    Console().print(consults_table(rows))


EVAL_PACKAGES = ("matplotlib",)
"""Imported by evals (report plots) and installed by the ``eval`` extra, not by default (bm25s is core)."""
_PASSTHROUGH = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}


def _run_module(module: str, args: list[str]) -> None:
    """Run an evals module in a subprocess: the product never imports evals (see README, Layout)."""
    import importlib.util
    import subprocess

    missing = [name for name in EVAL_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        Console(stderr=True).print(
            f"`evigraph eval` and `evigraph bench` need the eval extra ({', '.join(missing)} missing): "
            "pip install -e '.[eval]'",
            markup=False,
        )
        raise typer.Exit(2)

    raise typer.Exit(subprocess.call([sys.executable, "-m", module, *args]))


@app.command("eval", context_settings=_PASSTHROUGH)
def evaluate(ctx: typer.Context) -> None:
    """Evaluation harness: `evigraph eval retrieval --dataset … --systems …` (runs python -m evals.run)."""
    _run_module("evals.run", list(ctx.args))


@app.command("bench", context_settings=_PASSTHROUGH)
def bench(ctx: typer.Context) -> None:
    """Benchmarks: `evigraph bench tools|kb|consult|graph_scale|neo4j|embedders [args]` (evals.bench_…)."""
    args = list(ctx.args)
    known = ("tools", "kb", "consult", "graph_scale", "neo4j", "embedders")
    if not args or args[0] not in known:
        Console(stderr=True).print(f"Usage: evigraph bench {{{'|'.join(known)}}} [options]")
        raise typer.Exit(2)
    _run_module(f"evals.bench_{args[0]}", args[1:])


def main() -> None:
    app()


if __name__ == "__main__":
    main()
