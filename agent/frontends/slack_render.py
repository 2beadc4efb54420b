"""How an answer looks in Slack: Block Kit sections in mrkdwn, showing what the terminal shows.

The content matches :func:`agent.frontends.render.answer_renderable`: the answer with numbered
citations (offline
answers keep their "Retrieved evidence (offline mode — …)" label), a plain "Insufficient evidence" line when
the evidence fell short, the citation list with passage snippets, the sources, the KB version, the mode and
the safety note. Slack's mrkdwn is not Markdown, so headings, bold, bullets and links are translated.

Why escape: passages and titles come from documents, and in Slack ``<!channel>`` or ``<@U…>`` inside a
message would ping people; ``&``, ``<`` and ``>`` are escaped in everything that comes from data, so a
document can only ever show as text. Why blocks: a section holds at most 3,000 characters and a message at
most 50 blocks, so long offline answers are split on line boundaries and capped within those limits.
"""

from __future__ import annotations

import re
from typing import Any

from agent.frontends.answer_view import answer_view, citation_texts, cited_sources, shorten
from agent.frontends.render import answer_warnings, distinct_sources, number_citations
from agent.sanitize import clean_text

Block = dict[str, Any]

SECTION_CHARS = 3000
"""Slack's limit for the text of one section block."""
MAX_BODY_SECTIONS = 20
MAX_SOURCES = 12
SNIPPET_CHARS = 100
FALLBACK_CHARS = 2800
INSUFFICIENT_PLAIN = "*Insufficient evidence*: the knowledge base did not return enough to answer this."

_HEADING = re.compile(r"^\s*#{1,6}\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+")
_ITALIC = re.compile(r"(?<![*\w])\*(?![*\s])(.+?)(?<![*\s])\*(?![*\w])")
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_SAFE_URL = re.compile(r"^https?://[^\s<>|]+$")


def escape(text: str) -> str:
    """Slack's three control characters as entities: data can never become a mention or a link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def link(url: str, label: str) -> str:
    """``<url|label>`` for a plain http(s) URL; otherwise the label alone (never a broken link)."""
    if not _SAFE_URL.match(url):
        return escape(label)
    return f"<{url.replace('&', '&amp;')}|{escape(label).replace('|', '¦')}>"


def to_mrkdwn(markdown: str) -> str:
    """Translate the Markdown of an answer into Slack mrkdwn (after escaping what it contains)."""
    out: list[str] = []
    for raw in escape(markdown).splitlines():
        line = raw
        heading = _HEADING.match(line)
        if heading:
            title = heading.group(1).replace("**", "").strip()
            out.append(f"*{title}*" if title else "")
            continue
        if line.startswith("&gt; "):
            line = "> " + line[5:]
        line = _BULLET.sub(r"\1• ", line)
        line = _ITALIC.sub(r"_\1_", line)
        line = _BOLD.sub(lambda m: f"*{m.group(1) or m.group(2)}*", line)
        line = _LINK.sub(lambda m: link(m.group(2).replace("&amp;", "&"), m.group(1)), line)
        out.append(line)
    return "\n".join(out).strip()


def split_sections(text: str, limit: int = SECTION_CHARS) -> list[str]:
    """Pack paragraphs into pieces of at most ``limit`` characters, so a heading stays with its passages;
    a paragraph too long for one piece is split at line ends, and a line too long is cut."""
    pieces: list[str] = []
    current = ""
    for paragraph in (p.strip("\n") for p in text.split("\n\n")):
        if not paragraph.strip():
            continue
        candidate = f"{current}\n\n{paragraph}" if current else paragraph
        if len(candidate) <= limit:
            current = candidate
            continue
        if current:
            pieces.append(current)
        current = ""
        for line in paragraph.splitlines():
            while len(line) > limit:
                if current:
                    pieces.append(current)
                pieces.append(line[: limit - 1] + "…")
                current, line = "", line[limit - 1 :]
            candidate = f"{current}\n{line}" if current else line
            if len(candidate) > limit:
                pieces.append(current)
                candidate = line
            current = candidate
    if current.strip():
        pieces.append(current)
    return [p for p in pieces if p.strip()]


def section(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def context(text: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text[:SECTION_CHARS]}]}


def answer_body(answer: dict[str, Any]) -> tuple[str, list[str]]:
    """The answer text in mrkdwn with ``[n]`` citations, and the cited ids in number order."""
    body, order, _ = compact_answer(answer)
    return body, order


def compact_answer(answer: dict[str, Any]) -> tuple[str, list[str], int]:
    """:func:`answer_body` and how many passages or chains the compact view left out.

    The compact view (as in the terminal) keeps a Slack reply readable; the text is cleaned of control
    characters and its Markdown links defused first, so a document's link shows its target in plain sight
    instead of becoming a Slack link."""
    text, hidden = answer_view(answer, {}, full=False, html=False)
    body, order = number_citations(text)
    text = to_mrkdwn(body)
    if answer.get("status") == "insufficient" and "insufficient evidence" not in text.lower():
        text = f"{INSUFFICIENT_PLAIN}\n\n{text}".strip()
    return text or "_(no answer text)_", order, hidden


def citation_lines(order: list[str], texts: dict[str, str]) -> list[str]:
    """``[n] `id` snippet`` per citation: the passage's or chain's text, cut on a word boundary."""
    lines = []
    for n, cid in enumerate(order, 1):
        snippet = escape(shorten(texts.get(cid, ""), SNIPPET_CHARS))
        lines.append(f"[{n}] `{cid}`{' ' + snippet if snippet else ''}")
    return lines


def source_lines(sources: list[dict[str, Any]]) -> list[str]:
    lines = []
    for s in sources[:MAX_SOURCES]:
        title = clean_text(str(s.get("title") or s.get("document_id", "")), keep_newlines=False)
        where = escape(clean_text(str(s.get("source", "")), keep_newlines=False))
        url = clean_text(str(s.get("url", "")), keep_newlines=False)
        named = link(url, title) if url else escape(title)
        lines.append(f"• {named}" + (f" — {where}" if where else ""))
    if len(sources) > MAX_SOURCES:
        lines.append(f"…and {len(sources) - MAX_SOURCES} more")
    return lines


def footer(answer: dict[str, Any], consult_id: str) -> str:
    mode = answer.get("mode", "?")
    mode_label = "offline mode (extractive)" if mode == "offline" else f"{mode} mode"
    return (
        f"KB {escape(clean_text(str(answer.get('kb_version', '?'))))} · {mode_label} · "
        f"{escape(str(answer.get('status', '?')))} · consult `{consult_id}`"
    )


def answer_blocks(answer: dict[str, Any], evidence_text: dict[str, str], consult_id: str) -> list[Block]:
    """The whole answer as blocks: body, citations, sources, KB version and mode, safety note."""
    body, order, hidden = compact_answer(answer)
    pieces = split_sections(body)
    blocks = [section(p) for p in pieces[:MAX_BODY_SECTIONS]]
    if hidden or len(pieces) > MAX_BODY_SECTIONS:
        blocks.append(context(f"Answer shortened for Slack; the full text is in consult `{consult_id}`."))
    removed = answer.get("removed_claims") or []
    if removed:
        blocks.append(context(f"{len(removed)} unsupported claim(s) removed."))
    for warning in answer_warnings(answer)[:3]:
        blocks.append(context(f":warning: {escape(warning)}"))
    if order:
        texts = citation_texts(answer, evidence_text)
        cites = split_sections("*Citations*\n" + "\n".join(citation_lines(order, texts)))
        blocks += [section(p) for p in cites[:4]]
    sources = distinct_sources(cited_sources(answer, order))
    if sources:
        src = split_sections(f"*Sources ({len(sources)})*\n" + "\n".join(source_lines(sources)))
        blocks += [section(p) for p in src[:3]]
    blocks.append(context(footer(answer, consult_id)))
    blocks.append(context(f"_{escape(clean_text(str(answer.get('safety_note', ''))))}_"))
    return blocks


def answer_fallback_text(answer: dict[str, Any], consult_id: str) -> str:
    """The message's plain ``text`` (notifications, screen readers): the answer's start and its footer."""
    body, _ = answer_body(answer)
    short = body if len(body) <= FALLBACK_CHARS else body[:FALLBACK_CHARS] + "…"
    return f"{short}\n{footer(answer, consult_id)}"
