"""What of an answer a reader sees first: a compact body, short snippets, the cited sources, a one-line recap.

The answer node writes the whole answer (every passage it kept, every chain); the front ends show a compact
view so a typical consult fits a screen (~40 lines at 100 columns): the lead block (status, direct answer,
option line) in full, then a few passages per section, each cut on a word boundary. ``--full`` / ``/more``
show everything. The view works on the answer's Markdown lines, so it needs nothing from the answer node
beyond the text it already writes, and a checkpoint written before the view existed renders the same way.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import Any

from agent.citations import CITATION, cited_ids, strip_citations
from agent.sanitize import clean_text, defuse_markdown

PASSAGE_CHARS = 260
"""A passage bullet in the compact view: about three lines at 100 columns."""
SNIPPET_CHARS = 110
"""A citation snippet: one line at 100 columns beside its number and id."""
HEADING = re.compile(r"^\s*#{1,6}\s+(.*?)\s*$")
BULLET = re.compile(r"^(\s*)[-*+•]\s+")
_REPEATED_BULLET = re.compile(r"^(\s*)([-*+•])\s+(?:[-*+•]\s+)+")
_KEEP_WHOLE = re.compile(r"\b(?:answer|direct|summary|key\s+sentences?|facts?)\b", re.IGNORECASE)
"""Sections written as the answer itself (not supporting passages) are never shortened."""


@dataclass(frozen=True)
class ViewLimits:
    """How much of each part the compact view keeps; ``None`` is the full view."""

    passages_per_section: int = 2
    passages_total: int = 3
    chains: int = 2
    passage_chars: int = PASSAGE_CHARS


COMPACT = ViewLimits()
INSUFFICIENT = ViewLimits(passages_per_section=1, passages_total=2, chains=2, passage_chars=220)
"""An insufficient answer shows only a taste of what was found: the passages are not an answer."""


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut at a word boundary with "…" when longer than ``width`` characters."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    return textwrap.shorten(flat, width=width, placeholder="…")


def single_bullets(text: str) -> str:
    """One bullet per item: a passage that itself starts with "- " must not render as "•  •"."""
    return "\n".join(_REPEATED_BULLET.sub(r"\1\2 ", line) for line in text.splitlines())


def _shorten_item(line: str, width: int) -> str:
    """A passage bullet cut to ``width`` characters of text, its trailing citations kept whole."""
    cites = CITATION.findall(line)
    tail = " ".join(f"[{c}]" for c in cites)
    lead = BULLET.match(line)
    prefix = lead.group(0) if lead else ""
    body = strip_citations(line[len(prefix) :])
    return f"{prefix}{shorten(body, width)}" + (f" {tail}" if tail else "")


def compact_body(text: str, limits: ViewLimits | None) -> tuple[str, int]:
    """The answer's Markdown with at most ``limits`` passages and chains; returns it and how many bullet
    items were left out. The lead block (before the first heading) and answer sections stay whole."""
    text = single_bullets(text)
    if limits is None:
        return text, 0
    out: list[str] = []
    heading: str | None = None
    section: list[str] = []
    kept_total = hidden = 0

    def flush() -> None:
        nonlocal kept_total, hidden
        if heading is None:
            out.extend(section)
            return
        name = heading.lower()
        items = [ln for ln in section if BULLET.match(ln)]
        other = [ln for ln in section if ln.strip() and not BULLET.match(ln)]
        if _KEEP_WHOLE.search(name):
            out.extend([f"### {heading}", *section])
            return
        if "chain" in name:
            keep = items[: limits.chains]
        else:
            room = max(0, limits.passages_total - kept_total)
            keep = [
                _shorten_item(ln, limits.passage_chars)
                for ln in items[: min(limits.passages_per_section, room)]
            ]
            kept_total += len(keep)
        hidden += len(items) - len(keep)
        if keep or other:
            out.extend([f"### {heading}", *other, *keep, ""])

    for line in text.splitlines():
        match = HEADING.match(line)
        if match:
            flush()
            heading, section = match.group(1), []
        else:
            section.append(line)
    flush()
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip(), hidden


_MORE_NOTE = re.compile(r"^\(\d+ passages retrieved;.*\)\s*$")


DIRECT_PASSAGES = ViewLimits(passages_per_section=3, passages_total=3, chains=2, passage_chars=200)
"""Below a direct answer the passages only support it: three, about two lines each."""
_PASSAGE_SECTION = re.compile(r"^###\s+(?:supporting|closest|knowledge-graph)", re.IGNORECASE)
_BOLD_LABEL = re.compile(r"^\*\*[^*]+\*\*\s*$")


def trim_passages(text: str, limits: ViewLimits) -> str:
    """The passage sections under a direct answer cut to ``limits`` (the direct answer stays whole); a
    label whose passages were all cut goes too."""
    out: list[tuple[str, bool]] = []
    in_passages = False
    kept = 0
    for line in text.splitlines():
        if HEADING.match(line):
            in_passages = bool(_PASSAGE_SECTION.match(line.strip()))
        elif in_passages and BULLET.match(line):
            if kept >= limits.passages_total:
                continue
            kept += 1
            line = _shorten_item(line, limits.passage_chars)
        out.append((line, in_passages))
    cleaned: list[str] = []  # drop labels left without a passage
    for i, (line, passages) in enumerate(out):
        if passages and _BOLD_LABEL.match(line.strip()):
            nxt = next((ln for ln, _ in out[i + 1 :] if ln.strip()), "")
            if not BULLET.match(nxt):
                continue
        cleaned.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(cleaned)).strip()


def answer_view(
    answer: dict[str, Any], evidence_text: dict[str, str], full: bool, html: bool = True
) -> tuple[str, int]:
    """The answer's Markdown as shown, and how many passages or chains it leaves out.

    An offline answer with a direct-answer block is already written compact by the answer node; its full
    view adds every retrieved passage and chain it does not show, from the stored ids (no re-run). Other
    answers (LLM, or checkpointed before the direct answer) are compacted here. ``html`` as in
    :func:`agent.sanitize.defuse_markdown`.
    """
    text = defuse_markdown(clean_text(str(answer.get("text", ""))), html=html)
    if "direct" not in answer or answer.get("mode") != "offline":
        limits = None if full else (INSUFFICIENT if answer.get("status") == "insufficient" else COMPACT)
        return compact_body(text, limits)
    shown = set(cited_ids(text))
    passages = [i for i in answer.get("evidence_ids") or [] if i not in shown]
    chains = {k: v for k, v in (answer.get("chain_texts") or {}).items() if k not in shown}
    if not full:  # the answer node's own note says how many passages there are and how to see them
        return trim_passages(single_bullets(text), DIRECT_PASSAGES), 0
    lines = [ln for ln in single_bullets(text).splitlines() if not _MORE_NOTE.match(ln.strip())]
    if passages:
        lines += ["", "### All other retrieved passages"]
        lines += [
            f"- {shorten(defuse_markdown(evidence_text[i], html=html), 700)} [{i}]"
            for i in passages
            if i in evidence_text
        ]
    if chains:
        lines += ["", "### Knowledge-graph chains"]
        lines += [
            f"- {defuse_markdown(clean_text(str(t), keep_newlines=False))} [{k}]" for k, t in chains.items()
        ]
    return single_bullets("\n".join(lines)).strip(), 0


def cited_sources(answer: dict[str, Any], cited: list[str]) -> list[dict[str, Any]]:
    """The answer's sources that a shown citation points to (all of them for an answer written before the
    answer recorded which document each passage came from)."""
    sources = list(answer.get("sources") or [])
    documents = answer.get("evidence_documents")
    if not isinstance(documents, dict):
        return sources
    wanted = {documents[c] for c in cited if c in documents}
    return [s for s in sources if s.get("document_id") in wanted]


def citation_texts(answer: dict[str, Any], evidence_text: dict[str, str] | None) -> dict[str, str]:
    """What each citation id stands for: a passage's text, or a chain's text ("metformin -treats-> …")."""
    texts = dict(answer.get("chain_texts") or {})
    texts.update(evidence_text or {})
    return {k: clean_text(str(v), keep_newlines=False) for k, v in texts.items()}


def short_answer(answer: dict[str, Any], width: int = 160) -> str:
    """A one-line recap of an earlier turn's answer (``chat --resume``): its status and first statement."""
    status = str(answer.get("status", "?"))
    for raw in clean_text(str(answer.get("text", ""))).splitlines():
        line = strip_citations(BULLET.sub("", raw)).replace("**", "").strip()
        if not line or HEADING.match(raw) or line.lower().startswith("retrieved evidence"):
            continue
        return f"{status} · {shorten(line, width)}"
    return status


def shown_citations(body: str) -> list[str]:
    """The citation ids a (compact) body still shows, in order of first use."""
    return list(dict.fromkeys(cited_ids(body)))
