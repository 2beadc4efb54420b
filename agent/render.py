"""How an answer looks in a terminal: Markdown with numbered citations, sources, KB version, safety note.

Citation ids (``[E:…]``, ``[C:…]``) are stable but unreadable; the terminal numbers them in order of first
appearance (``[1]``, ``[2]``) and lists what each number is underneath, so a clinician can check any claim.
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.markdown import Markdown
from rich.panel import Panel
from rich.text import Text

from agent.citations import CITATION


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


def answer_renderable(answer: dict[str, Any], evidence_text: dict[str, str] | None = None) -> RenderableType:
    body, order = number_citations(str(answer.get("text", "")))
    parts: list[RenderableType] = [Markdown(body)]
    if answer.get("removed_claims"):
        parts.append(Text(f"{len(answer['removed_claims'])} unsupported claim(s) removed.", style="yellow"))
    if order:
        refs = Text()
        for i, cid in enumerate(order, 1):
            snippet = (evidence_text or {}).get(cid, "")
            refs.append(f"[{i}] {cid}", style="bold")
            refs.append(f"  {snippet[:100]}\n" if snippet else "\n")
        parts.append(Panel(refs, title="citations", title_align="left"))
    sources = answer.get("sources", [])
    if sources:
        src = Text()
        for s in sources[:12]:
            src.append(f"• {s.get('title') or s['document_id']}", style="cyan")
            src.append(f"  {s.get('source', '')} {s.get('url', '')}\n")
        parts.append(Panel(src, title=f"sources ({len(sources)})", title_align="left"))
    footer = (
        f"KB {answer.get('kb_version', '?')} · {answer.get('mode', '?')} mode · {answer.get('status', '?')}"
    )
    parts.append(Text(footer, style="dim"))
    parts.append(Text(str(answer.get("safety_note", "")), style="dim italic"))
    return Group(*parts)


def print_answer(
    console: Console, answer: dict[str, Any], evidence_text: dict[str, str] | None = None
) -> None:
    console.print(answer_renderable(answer, evidence_text))


def event_line(event: dict[str, Any]) -> str:
    """One human line per progress event (the live step panel and Slack status use it)."""
    name = event.get("step", "?")
    if event.get("skipped"):
        return f"{name}: skipped"
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
