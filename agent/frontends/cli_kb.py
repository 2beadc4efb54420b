"""``evigraph kb …``: build, inspect and update the knowledge base from the terminal."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from agent.errors import user_errors
from graphs.building.builder import BuildConfig, BuildResult, TopicDescriber, build_kb
from graphs.building.default_kb import build_default_kb, shipped_embedding_caches
from graphs.building.incremental import MAX_DOCUMENT_CHARS, add_documents, remove_document
from graphs.disk.integrity import rebuild_hint
from graphs.disk.layout import current_build, dir_size, read_manifest, verify_build
from graphs.model.settings import Settings, load_settings
from graphs.neo4j.loader import export_kb_to_neo4j
from graphs.stores.embedded import EmbeddedGraphStore

if TYPE_CHECKING:
    from agent.consult import Consultant

kb_app = typer.Typer(help="Build, inspect and update the knowledge base.", no_args_is_help=True)
console = Console(stderr=True)

KBDirOption = Annotated[
    Path | None, typer.Option("--kb-dir", help="Knowledge-base root (default: data dir/kb).")
]


class BuildProgress:
    """Rich progress bar fed by the builder's (stage, done, total) callbacks."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage not in self.tasks:
            for task in self.tasks.values():
                self.progress.update(task, completed=self.progress.tasks[task].total)
            self.tasks[stage] = self.progress.add_task(stage, total=max(total, 1))
        self.progress.update(self.tasks[stage], completed=done, total=max(total, 1))


def progress_bar() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description:<32}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


def ensure_default_kb(settings: Settings) -> None:
    """Build the default KB with a progress bar when there is none yet (first `ask`/`chat`)."""
    if (settings.kb_root / "current").exists():
        return
    console.print(
        f"[yellow]No knowledge base at {settings.kb_root}: building the default one (first use only)."
    )
    started = time.perf_counter()
    with progress_bar() as bar:
        build_default_kb(settings, "core", BuildProgress(bar))
    console.print(f"[green]Knowledge base ready in {time.perf_counter() - started:.0f} s.")


def _llm_describer(settings: Settings) -> TopicDescriber:
    from agent.errors import UserError
    from agent.llm import Usage, make_chat_model, topic_summariser

    model = make_chat_model(settings)
    if model is None:
        raise UserError("--llm-summaries needs an LLM: set EVIGRAPH_LLM_BASE_URL and/or OPENAI_API_KEY.")
    describer: TopicDescriber = topic_summariser(model, Usage())
    return describer


def parse_source(value: str) -> tuple[Path, str | None]:
    """``PATH[=FORMAT]`` → (path, format or ``None``). A path that exists as given is taken whole, so a file
    or folder whose name holds '=' still works; otherwise a word after the last '=' is the format."""
    whole = Path(value).expanduser()
    path, sep, fmt = value.rpartition("=")
    if whole.exists() or not sep or not path or not re.fullmatch(r"\w*", fmt):
        return whole, None
    return Path(path).expanduser(), (fmt or None)


def _print_result(result: BuildResult) -> None:
    m = result.manifest
    console.print(f"[green]Built KB {m['kb_version']} in {m['build_seconds']} s → {result.build_dir}")
    console.print("  " + ", ".join(f"{k} {v:,}" for k, v in m["counts"].items()))
    if result.report.issues:
        console.print(f"[yellow]{len(result.report.issues)} row(s) skipped:")
        for line in result.report.summary(10):
            console.print(f"  [yellow]{line}")


@kb_app.command("build")
def build(
    kg: Annotated[list[str] | None, typer.Option("--kg", help="KG source PATH[=FORMAT]; repeatable.")] = None,
    corpus: Annotated[
        list[str] | None, typer.Option("--corpus", help="Corpus PATH[=FORMAT]; repeatable.")
    ] = None,
    full: Annotated[
        bool, typer.Option("--full", help="Default KB with all of MedQuAD (GARD, GHR too).")
    ] = False,
    profile: Annotated[
        str | None,
        typer.Option(
            "--profile",
            help="Default KB profile: core (consumer health, the default), full (+ rare diseases), "
            "literature (core + 24 k PubMed passages, cited as research literature).",
        ),
    ] = None,
    vectors: Annotated[
        str, typer.Option(help="matrix | qdrant-local | qdrant (uses EVIGRAPH_QDRANT_URL)")
    ] = "",
    max_documents: Annotated[int | None, typer.Option(help="Stop after this many documents.")] = None,
    name: Annotated[str, typer.Option(help="Name recorded in the KB version.")] = "custom",
    llm_summaries: Annotated[
        bool,
        typer.Option(
            "--llm-summaries", help="Topic descriptions by the configured LLM (one call per topic)."
        ),
    ] = False,
    graph: Annotated[
        str | None,
        typer.Option("--graph", help="Also load the graph into this Neo4j (bolt:// or neo4j:// URI)."),
    ] = None,
    kb_dir: KBDirOption = None,
) -> None:
    """Build a KB (the default one from the shipped data/, or from --kg/--corpus sources) and publish it."""
    settings = load_settings(kb_dir=kb_dir, neo4j_uri=graph)
    describe = _llm_describer(settings) if llm_summaries else None
    with user_errors(), progress_bar() as bar:
        if not kg and not corpus:
            chosen = profile or ("full" if full else "core")
            result = build_default_kb(settings, chosen, BuildProgress(bar), describe)
        else:
            if not corpus:
                raise typer.BadParameter("give at least one --corpus with --kg")
            config = BuildConfig(
                kg_sources=[parse_source(v) for v in kg or []],
                corpus_sources=[parse_source(v) for v in corpus],
                embedding_backend=settings.embedding_backend,
                vector_backend=vectors or ("qdrant" if settings.qdrant_url else "matrix"),
                qdrant_url=settings.qdrant_url,
                max_documents=max_documents,
                name=name,
                describe_topic=describe,
                embedding_caches=shipped_embedding_caches(settings),
                user_embedding_cache=settings.data_dir / "embedding-cache.npz",
            )
            result = build_kb(settings.kb_root, config, BuildProgress(bar))
    _print_result(result)
    if graph:
        with user_errors(), progress_bar() as bar:
            summary = export_kb_to_neo4j(settings.kb_root, settings, BuildProgress(bar))
        console.print(
            f"[green]Loaded into Neo4j {graph} in {summary['seconds']:.0f} s: {summary['graph_counts']}"
        )
        console.print("Use it with EVIGRAPH_GRAPH_BACKEND=neo4j EVIGRAPH_NEO4J_URI=" + graph)


def build_notes(manifest: dict[str, Any], show_skipped: bool = False) -> list[str]:
    """How the sources were cut into passages and which source rows were left out, in words.

    Why: ``kb info`` printed the chunking settings as a raw dict and ended with "skipped rows: 264", which a
    newcomer read as data loss with no cause and no way to look."""
    lines: list[str] = []
    chunking = manifest.get("chunking") or {}
    if chunking:
        lines.append(
            f"passages: documents cut into passages of about {chunking.get('target_words', '?')} words "
            f"(at most {chunking.get('max_words', '?')}); consecutive passages share "
            f"{chunking.get('overlap', 'no text')}"
        )
    skipped = int(manifest.get("skipped_rows") or 0)
    if not skipped:
        return [*lines, "skipped source rows: none"]
    lines.append(
        f"skipped source rows: {skipped:,} — rows of the source files the importer could not use (a missing "
        "id or name, a malformed line, a known mislabelled document); they are not in the KB, everything "
        "else is:"
    )
    reasons = dict(manifest.get("skipped_by_reason") or {})
    if not reasons:  # a build made before reasons were counted: group its examples
        lines.append("  (this build recorded the reasons of its first rows only:)")
        for example in manifest.get("skipped_examples") or []:
            if not example.startswith("…"):
                key = f"{Path(example.split(':', 1)[0]).name}: {example.rsplit(': ', 1)[-1]}"
                reasons[key] = reasons.get(key, 0) + 1
    for reason, count in list(reasons.items())[:8]:
        lines.append(f"  {count:,} × {reason}")
    examples = [e for e in manifest.get("skipped_examples") or [] if not e.startswith("…")]
    if show_skipped:
        lines += [f"  {e}" for e in examples]
        if skipped > len(examples):
            lines.append(
                f"  (the first {len(examples)} of {skipped:,}; rebuild with the sources fixed to keep them)"
            )
    else:
        lines.append("  `evigraph kb info --skipped` lists them by file and line.")
    return lines


@kb_app.command("info")
def info(
    kb_dir: KBDirOption = None,
    skipped: Annotated[
        bool, typer.Option("--skipped", help="List the skipped source rows (file, line, reason).")
    ] = False,
) -> None:
    """Counts by type, sizes on disk, build settings and the KB version."""
    settings = load_settings(kb_dir=kb_dir)
    with user_errors():
        build = current_build(settings.kb_root)
        manifest = read_manifest(build).data
        store = EmbeddedGraphStore(build)
        out = Console()
        out.print(f"[bold]EviGraph knowledge base[/] {manifest['kb_version']}  ({build})")
        out.print(
            f"built {manifest.get('created_at')} in {manifest.get('build_seconds')} s · embedder "
            f"{manifest.get('embedder')} · evidence search "
            f"{manifest.get('search_embedder') or 'by the embedder (no search-encoder vectors)'} · "
            f"vectors {manifest.get('vector_backend')} · profile {manifest.get('profile', '-')}"
        )
        table = Table("what", "count")
        for k, v in store.counts().items():
            table.add_row(k, f"{v:,}")
        out.print(table)
        for title, sql in (
            ("entities by type", "SELECT type, COUNT(*) FROM entities GROUP BY type ORDER BY 2 DESC"),
            (
                "relations by type",
                "SELECT relation, COUNT(*) FROM relations GROUP BY relation ORDER BY 2 DESC",
            ),
            ("evidence by label", "SELECT label, COUNT(*) FROM evidence GROUP BY label ORDER BY 2 DESC"),
            ("documents by source", "SELECT source, COUNT(*) FROM documents GROUP BY source ORDER BY 2 DESC"),
        ):
            t = Table("name", "count", title=title)
            for k, v in store.grouped_counts(sql).items():
                t.add_row(k, f"{v:,}")
            out.print(t)
        sizes = Table("file", "MB", title="size on disk")
        for p in sorted(build.iterdir()):
            size = dir_size(p) if p.is_dir() else p.stat().st_size
            sizes.add_row(p.name, f"{size / 1e6:.1f}")
        sizes.add_row("total", f"{dir_size(build) / 1e6:.1f}")
        out.print(sizes)
        for line in build_notes(manifest, show_skipped=skipped):
            out.print(line, markup=False, highlight=False)
        if manifest.get("updates"):
            out.print(f"incremental updates: {len(manifest['updates'])} (last: {manifest['updates'][-1]})")
        store.close()


@kb_app.command("verify")
def verify(kb_dir: KBDirOption = None) -> None:
    """Check every byte of the published build: checksums, SQLite pages, every vector, every array.

    Exit 0 when the build is intact; otherwise each problem is listed with its file, and the fix, exit 2.
    """
    settings = load_settings(kb_dir=kb_dir)
    started = time.perf_counter()
    with user_errors():
        build = current_build(settings.kb_root)
        manifest = read_manifest(build)
        problems = [p.message("") for p in verify_build(build, manifest, full=True)]
        if not problems:
            problems = _matcher_problems(build)
    seconds = time.perf_counter() - started
    if problems:
        for line in problems:
            console.print(f"[bold red]damaged:[/] {line.strip()}")
        console.print(f"[bold red]The KB {manifest.version} is damaged.[/] {rebuild_hint(manifest.data)}")
        raise typer.Exit(2)
    files = len(manifest.data.get("files", {}))
    console.print(
        f"[green]KB {manifest.version} is intact: {files} files, {dir_size(build) / 1e6:.0f} MB checked "
        f"in {seconds:.1f} s ({build})."
    )


def _matcher_problems(build: Path) -> list[str]:
    """The entity dictionary unpickles (its bytes matched the record, so this catches builder bugs only)."""
    from graphs.disk.layout import MATCHER_FILE
    from graphs.text.ner import DictionaryMatcher

    path = build / MATCHER_FILE
    try:
        DictionaryMatcher.load(path)
    except Exception as exc:  # an unpickling failure can be any exception type
        return [f"{path}: the entity dictionary does not load ({type(exc).__name__}: {exc})."]
    return []


@kb_app.command("add")
def add(
    file: Annotated[
        Path,
        typer.Argument(
            help="Corpus file or folder: PubMed XML, DailyMed SPL or openFDA drug labels, a folder of "
            "Markdown/text/HTML, EviGraph JSONL (README, 'Importing your sources'). PATH=FORMAT forces a "
            "format, as --format does.",
        ),
    ],
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="pubmed | dailymed | openfda | folder | documents | medquad | pubmed_passages "
            "(default: detected from the content)",
        ),
    ] = None,
    max_doc_chars: Annotated[
        int, typer.Option("--max-doc-chars", min=1, help="Skip (and report) longer documents.")
    ] = MAX_DOCUMENT_CHARS,
    kb_dir: KBDirOption = None,
) -> None:
    """Add documents; only the topics of the entities involved change. Re-adding is a no-op.

    Of several rows with the same id the last one wins; rows with non-text fields, invalid UTF-8 or an
    over-long text are skipped and listed with file:line.
    """
    path, forced = parse_source(str(file))
    if forced and fmt and forced != fmt:
        raise typer.BadParameter(f"'{file}' names format {forced} but --format says {fmt}: give one of them")
    settings = load_settings(kb_dir=kb_dir)
    with user_errors(), progress_bar() as bar:
        result = add_documents(
            settings.kb_root,
            path,
            fmt or forced,
            progress=BuildProgress(bar),
            max_document_chars=max_doc_chars,
        )
    console.print(
        f"[green]KB {result.kb_version}: added {len(result.added_documents)}, unchanged "
        f"{len(result.unchanged_documents)}, topics updated {len(result.touched_topics)}."
    )
    for line in result.report.summary(10):
        console.print(f"  [yellow]skipped {line}")


@kb_app.command("remove")
def remove(
    doc_id: Annotated[str, typer.Argument(help="Document id, e.g. medquad:GARD_0000001-1 or doc:<id>.")],
    kb_dir: KBDirOption = None,
) -> None:
    """Remove one document and its evidence; only the affected topics change."""
    settings = load_settings(kb_dir=kb_dir)
    with user_errors():
        result = remove_document(settings.kb_root, doc_id)
    console.print(
        f"[green]KB {result.kb_version}: removed {doc_id}; topics updated {len(result.touched_topics)}."
    )


def open_consultant(settings: Settings, offline: bool = False) -> Consultant:
    """What every front end serves (ask, chat, Slack, HTTP): the configured KB — the default one built on
    first use, with its progress shown — and the configured LLM unless ``offline``."""
    from agent.consult import Consultant

    if settings.kb_dir is None:
        ensure_default_kb(settings)
    return Consultant(settings, use_llm=not offline)
