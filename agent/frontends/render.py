"""How an answer looks in a terminal: Markdown with numbered citations, sources, KB version, safety note.

Citation ids (``[E:…]``, ``[C:…]``) are stable but unreadable; the terminal numbers them in order of first
appearance (``[1]``, ``[2]``) and lists what each number is underneath, so a clinician can check any claim.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.markdown import Markdown
from rich.panel import Panel
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from agent.citations import CITATION
from agent.frontends.answer_view import (
    SNIPPET_CHARS,
    answer_view,
    citation_texts,
    cited_sources,
    shorten,
    single_bullets,
)
from agent.sanitize import clean_payload, clean_text, defuse_markdown


def number_citations(text: str) -> tuple[str, list[str]]:
    """Replace citation ids by ``[n]`` in order of first use; return the text and the ids in that order."""
    order: list[str] = []

    def repl(match: re.Match[str]) -> str:
        nums = []
        for cid in re.split(r"\s*[,;]\s*", match.group(1)):
            if cid not in order:
                order.append(cid)
            nums.append(str(order.index(cid) + 1))
        return "[" + ", ".join(nums) + "]"

    return CITATION.sub(repl, text), order


def answer_renderable(
    answer: dict[str, Any], evidence_text: dict[str, str] | None = None, full: bool = False
) -> RenderableType:
    """The answer as the terminal shows it: compact unless ``full`` (``--full``, ``/more``).

    Everything from the answer is cleaned of control and escape sequences, and its Markdown is defused and
    rendered without terminal hyperlinks, so a document cannot write to the terminal or hide a link target.
    """
    text, hidden = answer_view(answer, evidence_text or {}, full)
    body, order = number_citations(text)
    parts: list[RenderableType] = [Text(f"⚠ {w}", style="yellow") for w in answer_warnings(answer)]
    parts.append(Markdown(body, hyperlinks=False))
    if hidden:
        parts.append(
            Text(f"{hidden} more passage(s) and chain(s): /more in chat, --full with ask.", style="dim")
        )
    if answer.get("removed_claims"):
        parts.append(Text(f"{len(answer['removed_claims'])} unsupported claim(s) removed.", style="yellow"))
    if order:
        parts.append(citations_panel(answer, order, citation_texts(answer, evidence_text), full))
    sources = distinct_sources(cited_sources(answer, order))
    if sources and full:
        src = Text()
        for s in sources[:12]:
            title = clean_text(str(s.get("title") or s["document_id"]), keep_newlines=False)
            src.append(f"• {title}", style="cyan")
            src.append(f"  {clean_text(str(s.get('source', '')))} {clean_text(str(s.get('url', '')))}\n")
        src.rstrip()
        parts.append(Panel(src, title=f"sources cited ({len(sources)})", title_align="left"))
    footer = (
        f"KB {answer.get('kb_version', '?')} · {answer.get('mode', '?')} mode · {answer.get('status', '?')}"
    )
    parts.append(Text(clean_text(footer), style="dim"))
    parts.append(Text(clean_text(str(answer.get("safety_note", ""))), style="dim italic"))
    return Group(*parts)


def citations_panel(answer: dict[str, Any], order: list[str], texts: dict[str, str], full: bool) -> Panel:
    """What each ``[n]`` is. Compact: one line each — a passage's source document, a chain's text (the
    passages themselves are in the body above). Full: the passage snippet too, cut on a word boundary."""
    documents = answer.get("evidence_documents") or {}
    titles = {
        s.get("document_id"): f"{s.get('title') or s.get('document_id')} · {s.get('source', '')}".strip(" ·")
        for s in answer.get("sources") or []
    }
    rows: list[RenderableType] = []
    chain_cells: list[Text] = []
    grid_at = 0  # the chains' grid goes where the first chain's number falls ([1] before [2][3])
    for i, cid in enumerate(order, 1):
        line = Text(f"[{i}] {cid}", style="bold", overflow="fold")
        about = titles.get(documents.get(cid)) if cid.startswith("E:") else texts.get(cid)
        if about:
            line.append(f"  {clean_text(str(about), keep_newlines=False)}", style="cyan")
        if full and cid.startswith("E:") and texts.get(cid):
            line.append(f"\n     {shorten(texts[cid], 2 * SNIPPET_CHARS)}", style="none")
        elif not about and texts.get(cid):
            line.append(f"  {shorten(texts[cid], SNIPPET_CHARS)}")
        if cid.startswith("C:") and not full and texts.get(cid):
            # compact: the chain's text is what reads; its id is in the full view (/more, --full)
            cell = Text(f"[{i}] ", style="bold", overflow="fold")
            cell.append(clean_text(texts[cid], keep_newlines=False), style="cyan")
            if not chain_cells:
                grid_at = len(rows)
            chain_cells.append(cell)
        else:
            rows.append(line)
    if chain_cells:  # compact: chain lines are short, two to a row (a direct answer cites several per drug)
        # Wrapped, never cut: "Metformin -treats-> type 2 diab…" at 80 columns hid the fact being cited.
        grid = Table.grid(expand=True, padding=(0, 2))
        grid.add_column(ratio=1, overflow="fold")
        grid.add_column(ratio=1, overflow="fold")
        for k in range(0, len(chain_cells), 2):
            grid.add_row(*chain_cells[k : k + 2])
        rows.insert(grid_at, grid)
    return Panel(Group(*rows), title="citations", title_align="left")


def answer_warnings(answer: dict[str, Any]) -> list[str]:
    """What the reader must know about how the answer was made: truncated input, a step that fell back."""
    out = [clean_text(str(w), keep_newlines=False) for w in answer.get("warnings") or []]
    if answer.get("fallback"):
        out.append(clean_text(str(answer["fallback"]), keep_newlines=False))
    return list(dict.fromkeys(w for w in out if w))


def print_answer(
    console: Console, answer: dict[str, Any], evidence_text: dict[str, str] | None = None, full: bool = False
) -> None:
    console.print(answer_renderable(answer, evidence_text, full=full))


def event_line(event: dict[str, Any]) -> str:
    """One human line per progress event (the live step panel and Slack status use it); entity names and
    chain texts come from the KB, so the line is cleaned of control characters."""
    return clean_text(_event_line(event), keep_newlines=False)


def _event_line(event: dict[str, Any]) -> str:
    name = event.get("step", "?")
    if event.get("skipped"):
        return f"{name}: skipped"
    if name == "start":
        return f"turn {event.get('turn', '?')} · task {event.get('task', '?')}"
    if name == "token":
        return "writing the answer…"
    if name == "answer":
        return f"answer: {event.get('status', '?')} ({event.get('mode', '?')} mode)"
    if name == "execute_tools":
        return f"ran {len(event.get('ran', []) or [])} follow-up search(es)" + (
            f", {len(event['rejected'])} rejected" if event.get("rejected") else ""
        )
    if name == "ner_link":
        return f"linked: {', '.join(event.get('entities', [])[:6]) or 'no entities'}"
    if name == "hypergraph_walk":
        return f"topics: {'; '.join(event.get('topics', [])[:4]) or 'none'}"
    if name == "reasoning_chain":
        return f"chains: {len(event.get('chains', []))}" + (
            f" — {event['chains'][0]}" if event.get("chains") else ""
        )
    if name == "evidence_rank":
        return f"top evidence: {(event.get('top') or ['none'])[0]}"
    if name == "sufficiency":
        verdict = "sufficient" if event.get("sufficient") else "insufficient"
        missing = ", ".join(event.get("missing", [])[:4])
        return f"round {event.get('round')}: {verdict} ({event.get('completeness')}/10)" + (
            f"; missing {missing}" if missing else ""
        )
    if name == "plan":
        return f"follow-up: {'; '.join(event.get('calls', [])[:3]) or 'nothing more to search'}"
    if name == "hypothesis":
        return f"hypothesis: {str(event.get('hypothesis', ''))[:80]}"
    return name


def steps_panel(lines: list[str], status: str, running: bool) -> RenderableType:
    """The live list of a turn's steps; the spinner shows while the agent still works."""
    rows: list[RenderableType] = [Text(f"✓ {line}") for line in lines]
    if running:
        rows.append(Spinner("dots", text=Text(status, style="cyan")))
    else:
        rows.append(Text(status, style="dim"))
    return Panel(Group(*rows), title="steps", title_align="left", border_style="dim")


def sources_renderable(answer: dict[str, Any]) -> RenderableType:
    """Every source of an answer, once per page, with the ``[n]`` the shown answer cites it by (``/sources``).

    Why: the list used to number sources 1–7 while the answer cited [9]–[13], and repeated one fact sheet's
    URL five times (MedQuAD splits a page into several documents). Numbers follow the compact answer as the
    terminal first prints it; sources retrieved but not cited there come last, without a number.
    """
    sources = answer.get("sources", [])
    if not sources:
        return Text("The last answer has no sources.", style="yellow")
    _, order = number_citations(answer_view(answer, {}, False)[0])
    documents = answer.get("evidence_documents") or {}
    numbers: dict[str, list[int]] = {}
    for n, cid in enumerate(order, 1):
        if cid in documents:
            numbers.setdefault(str(documents[cid]), []).append(n)
    pages: dict[str, dict[str, Any]] = {}  # one row per page: its URL, else its title and source
    for s in sources:
        title = str(s.get("title") or s.get("document_id", ""))
        url = str(s.get("url", ""))
        page = pages.setdefault(
            url or f"{title}\x00{s.get('source', '')}",
            {"titles": [], "source": str(s.get("source", "")), "url": url, "cited": []},
        )
        page["titles"].append(title)
        page["cited"].extend(numbers.get(str(s.get("document_id")), []))
    ranked = sorted(pages.values(), key=lambda p: (not p["cited"], min(p["cited"] or [0])))
    cited = sum(1 for p in ranked if p["cited"])
    heading = f"sources ({cited} cited, {len(ranked)} in all)"
    table = Table("cited as", "title", "source", title=heading, title_justify="left")
    table.add_column("link", overflow="fold")
    for page in ranked:
        label = ", ".join(f"[{n}]" for n in sorted(set(page["cited"]))) or "not cited"
        titles = list(dict.fromkeys(page["titles"]))
        title = titles[0] + (f" (+{len(titles) - 1} more sections)" if len(titles) > 1 else "")
        cells = (label, title, page["source"], page["url"])
        table.add_row(*(clean_text(v, keep_newlines=False) for v in cells))
    return table


def trace_renderable(trace: list[dict[str, Any]]) -> RenderableType:
    """What the agent did in the last turn, step by step, with any fallback it took (``/trace``)."""
    if not trace:
        return Text("No trace yet: ask a question first.", style="yellow")
    table = Table("step", "round", "summary", "fallback", title="trace of the last turn")
    table.title_justify = "left"
    for rec in trace:
        table.add_row(
            *(clean_text(str(rec.get(k, ""))) for k in ("step", "round", "summary")),
            Text(clean_text(str(rec.get("fallback", ""))), style="yellow"),
        )
    return table


def consult_markdown(
    consult_id: str, turns: list[dict[str, Any]], evidence_text: dict[str, str], exported_at: str
) -> str:
    """A whole consult as a Markdown document: every question, the full cited answer, its citations (with
    passage or chain text) and the sources it cites. Text from data is cleaned and defused, and what goes
    into list items is escaped, so a document can neither hide a link nor inject markup into the export."""
    out = [f"# EviGraph consult {consult_id}", "", f"Exported {exported_at} · {len(turns)} turn(s)", ""]
    for i, turn in enumerate(turns, 1):
        answer = turn.get("answer", {})
        question = clean_text(str(turn.get("question", ""))).strip()
        text = single_bullets(defuse_markdown(clean_text(str(answer.get("text", "")))))
        body, order = number_citations(text)
        title = escape_markdown(shorten(question.splitlines()[0], 120)) if question else "(no question)"
        out += [f"## Turn {i}: {title}", ""]
        out += ["> " + escape_markdown(line) for line in question.splitlines()] + [""]
        out += [
            f"*Task {turn.get('task', '?')} · KB {turn.get('kb_version') or answer.get('kb_version', '?')} · "
            f"{answer.get('mode', '?')} mode · {answer.get('status', '?')}*",
            "",
            body,
            "",
        ]
        warnings = answer_warnings(answer)
        if warnings:
            out += [f"> ⚠ {escape_markdown(w)}" for w in warnings] + [""]
        texts = citation_texts(answer, evidence_text)
        if order:
            out += ["### Citations", ""]
            for n, cid in enumerate(order, 1):
                snippet = escape_markdown(shorten(texts.get(cid, ""), 300))
                out.append(f"{n}. `{cid}` {snippet}".rstrip())
            out.append("")
        sources = distinct_sources(cited_sources(answer, order))
        if sources:
            out += ["### Sources", ""]
            for s in sources:
                url = clean_text(str(s.get("url", "")), keep_newlines=False)
                link = f" <{url}>" if SAFE_URL.match(url) else ""
                name = clean_text(str(s.get("title") or s.get("document_id", "")), keep_newlines=False)
                where = clean_text(str(s.get("source", "")), keep_newlines=False)
                out.append(f"- {escape_markdown(name)} ({escape_markdown(where)}){link}")
            out.append("")
        if answer.get("safety_note"):
            out += [f"*{clean_text(str(answer['safety_note']))}*", ""]
    return "\n".join(out).rstrip() + "\n"


SAFE_URL = re.compile(r"^https?://[^\s<>()\[\]`]+$")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<])")


def escape_markdown(text: str) -> str:
    """Plain text that Markdown shows as written, inside a list item or quote: what could start emphasis,
    code, a link or an HTML tag is backslash-escaped (the rest reads as is mid-line)."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def consults_table(rows: list[dict[str, Any]]) -> RenderableType:
    """Recent consults (``evigraph consults``, ``/resume`` without an id)."""

    # The id is what the reader copies into `--resume`: it is never cut; the question gives way instead.
    def width(key: str, title: str) -> int:
        return max([len(title), *(len(str(r.get(key, ""))) for r in rows)])

    table = Table()
    table.add_column("consult", no_wrap=True, min_width=width("consult_id", "consult"))
    table.add_column("turns", no_wrap=True, justify="right", min_width=width("turns", "turns"))
    table.add_column("last activity (UTC)", no_wrap=True, min_width=width("updated", "last activity"))
    table.add_column("first question", overflow="fold")
    for r in rows:
        question = shorten(clean_text(str(r.get("first_question", ""))), 70)
        table.add_row(str(r["consult_id"]), str(r.get("turns", 0)), str(r.get("updated", "")), question)
    return table


def turn_footer(consult_id: str, seconds: float, llm_calls: int, llm_tokens: int = 0) -> Text:
    tokens = f" ({llm_tokens} tokens)" if llm_tokens else ""
    return Text(f"consult {consult_id} · {seconds:.1f} s · LLM calls {llm_calls}{tokens}", style="dim")


def consult_json(consult_id: str, turns: list[dict[str, Any]], kb_version: str, exported_at: str) -> str:
    """A whole consult as JSON: every turn's question, task, full answer (sources, KB version) as stored."""
    payload = {
        "consult_id": consult_id,
        "exported_at": exported_at,
        "kb_version": kb_version,
        "turns": clean_payload(turns),
    }
    return json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n"


def distinct_sources(sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sources as a reader tells them apart: one line per (title, source, URL).

    Why: MedQuAD splits one web page into several question–answer documents with the same title and URL;
    listed per document they look like a repeated line. The answer's JSON keeps every document.
    """
    seen: dict[tuple[str, str, str], dict[str, Any]] = {}
    for s in sources:
        key = (
            str(s.get("title") or s.get("document_id", "")),
            str(s.get("source", "")),
            str(s.get("url", "")),
        )
        seen.setdefault(key, s)
    return list(seen.values())
