"""The ``evigraph`` command: consults (ask, chat), knowledge-base management and settings."""

from __future__ import annotations

import json

import typer
from rich.console import Console

from agent.cli_kb import kb_app
from graphs.settings import load_settings

app = typer.Typer(
    name="evigraph",
    help="EviGraph: evidence-grounded consults from a medical knowledge hypergraph, with citations.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(kb_app, name="kb")


@app.command("config")
def config(as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """Print the effective settings (secrets masked)."""
    values = load_settings().masked()
    if as_json:
        typer.echo(json.dumps(values, indent=2, default=str))
        return
    out = Console()
    for key, value in values.items():
        out.print(f"[bold]{key:<18}[/] {value}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
