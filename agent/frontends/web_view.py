"""The consult page's view of a consult: each turn's answer as blocks of text spans with numbered citations,
and what each citation opens — a passage with its cited sentence located, or a KG chain as typed nodes and
labelled edges with their source datasets.

Why the server builds it: the answer is Markdown written for terminals. Parsing it here, with the terminal's
compact view (:func:`agent.frontends.answer_view.answer_view`) and numbering
(:func:`agent.frontends.render.number_citations`), keeps the ``[n]`` of a consult the same in every front end,
and leaves the browser only strings to put into elements with ``textContent``: no KB text ever reaches
``innerHTML``, so a passage carrying ``<script>`` is shown as those characters. Every string from the KB or
the checkpoint is cleaned of escape and control characters (:func:`agent.sanitize.clean_text`) first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agent.citations import CITATION
from agent.frontends.answer_view import BULLET, HEADING, answer_view
from agent.frontends.render import SAFE_URL, answer_warnings, number_citations
from agent.sanitize import clean_payload, clean_text, defuse_markdown
from graphs.kb import KnowledgeBase
from graphs.model.schema import Document, Entity, Evidence, Relation

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_MORE_NOTE = re.compile(r"^\((\d+) passages retrieved;.*\)\s*$")
_ARROW = re.compile(r"\s+(?:-([^\s<>]+?)->|<-([^\s<>]+?)-)\s+")
"""One edge of a chain's text: ``A -treats-> B`` (forward) or ``A <-associated_with- B`` (backward)."""
_SOURCES = re.compile(r"\s*[,;|]\s*")
"""Between the datasets of one relation's ``source`` ("hetionet-v1.0|pharmacotherapydb")."""
MIN_QUOTE = 12
"""Shorter text before a citation ("Answer:") is not looked for in the passage."""


@dataclass
class Lookups:
    """What the KB holds for the citations of a consult (read once, on a worker thread)."""

    evidence: dict[str, Evidence] = field(default_factory=dict)
    documents: dict[str, Document] = field(default_factory=dict)
    entities: dict[str, Entity] = field(default_factory=dict)
    relations: dict[str, Relation] = field(default_factory=dict)


def needed_ids(
    turns: list[dict[str, Any]], chains: dict[str, dict[str, Any]]
) -> tuple[list[str], list[str], list[str]]:
    """Evidence, entity and relation ids the citations of ``turns`` may open (every retrieved passage, so
    the full view needs no second read)."""
    evidence: list[str] = []
    entities: list[str] = []
    relations: list[str] = []
    for turn in turns:
        answer = turn.get("answer") or {}
        evidence += [str(i) for i in answer.get("evidence_ids") or []]
        for cid, nodes in (answer.get("chain_nodes") or {}).items():
            entities += [str(n) for n in nodes]
            rec = chains.get(cid) or {}
            entities += [str(n) for n in rec.get("node_ids") or []]
            relations += [str(r) for r in rec.get("relation_ids") or []]
    return _unique(evidence), _unique(entities), _unique(relations)


def read_lookups(
    kb: KnowledgeBase, evidence_ids: list[str], entity_ids: list[str], rel_ids: list[str]
) -> Lookups:
    evidence = kb.store.get_evidence(evidence_ids)
    documents = kb.store.get_documents(_unique(e.document_id for e in evidence.values()))
    return Lookups(evidence, documents, kb.store.get_entities(entity_ids), kb.store.get_relations(rel_ids))


def consult_view(values: dict[str, Any], lookups: Lookups, full: bool = False) -> list[dict[str, Any]]:
    """Every stored turn of a consult as the page shows it (``values``: the consult's checkpoint)."""
    chains = chains_by_id(values)
    turns = clean_payload(list(values.get("turns") or []))
    return [turn_view(turn, i, chains, lookups, full) for i, turn in enumerate(turns, 1)]


def chains_by_id(values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(c.get("id")): c for c in values.get("chains") or [] if isinstance(c, dict)}


def turn_view(
    turn: dict[str, Any], index: int, chains: dict[str, dict[str, Any]], lookups: Lookups, full: bool
) -> dict[str, Any]:
    answer = dict(turn.get("answer") or {})
    passages = {i: passage_text(e) for i, e in lookups.evidence.items()}
    text, hidden = answer_view(answer, passages, full, html=False)
    lines = text.splitlines()
    more = next((int(m.group(1)) for ln in lines if (m := _MORE_NOTE.match(ln.strip()))), 0)
    body = "\n".join(ln for ln in lines if not _MORE_NOTE.match(ln.strip()))
    blocks, order = answer_blocks(body)
    key_sentences = [s for s in (answer.get("direct") or {}).get("sentences") or [] if isinstance(s, dict)]
    citations = []
    for n, cid in enumerate(order, 1):
        if cid.startswith("C:"):
            citations.append(chain_view(cid, n, answer, chains.get(cid) or {}, lookups))
        else:
            citations.append(passage_view(cid, n, answer, lookups))
    texts = {c["id"]: c.get("text", "") for c in citations if c["kind"] == "passage"}
    for block in blocks:
        for span in block["spans"]:
            if "cite" in span:
                quote = span.pop("quote")
                if span["id"] in texts:
                    others = [
                        str(s.get("text", "")) for s in key_sentences if s.get("evidence_id") == span["id"]
                    ]
                    span["hl"] = locate([quote, *others], texts[span["id"]])
    verdict = answer.get("verdict") or {}
    missing = [*verdict.get("missing_entities", []), *verdict.get("missing_relations", [])]
    missing += verdict.get("missing_labels", [])
    return {
        "index": index,
        "question": clean_text(str(turn.get("question", ""))),
        "task": str(turn.get("task") or answer.get("task") or ""),
        "status": str(answer.get("status", "")),
        "mode": str(answer.get("mode", "")),
        "kb_version": str(turn.get("kb_version") or answer.get("kb_version") or ""),
        "safety_note": clean_text(str(answer.get("safety_note", ""))),
        "warnings": answer_warnings(answer),
        "missing": [clean_text(str(m), keep_newlines=False) for m in missing if m][:8],
        "removed_claims": len(answer.get("removed_claims") or []),
        "blocks": blocks,
        "citations": citations,
        "more": more if not full else 0,
        "hidden": hidden,
    }


def answer_blocks(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The answer's Markdown as blocks (``h``, ``li``, ``p``) of spans: ``{"text", "bold"}`` or
    ``{"cite": n, "id", "quote"}`` where ``quote`` is the text the citation closes (to highlight it)."""
    _, order = number_citations(text)
    numbers = {cid: n for n, cid in enumerate(order, 1)}
    blocks: list[dict[str, Any]] = []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        heading = HEADING.match(raw)
        bullet = BULLET.match(raw)
        kind, line = (
            ("h", heading.group(1)) if heading else ("li", raw[bullet.end() :]) if bullet else ("p", raw)
        )
        spans: list[dict[str, Any]] = []
        pos = 0
        for match in CITATION.finditer(line):
            before = line[pos : match.start()]
            spans += _text_spans(before)
            quote = " ".join(_BOLD.sub(r"\1", before).split())
            for cid in re.split(r"\s*[,;]\s*", match.group(1)):
                spans.append({"cite": numbers[cid], "id": cid, "quote": quote})
            pos = match.end()
        spans += _text_spans(line[pos:])
        blocks.append({"kind": kind, "spans": spans})
    return blocks, order


def _text_spans(text: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    pos = 0
    for match in _BOLD.finditer(text):
        if match.start() > pos:
            out.append({"text": text[pos : match.start()], "bold": False})
        out.append({"text": match.group(1), "bold": True})
        pos = match.end()
    if pos < len(text):
        out.append({"text": text[pos:], "bold": False})
    return [s for s in out if s["text"]]


def locate(quotes: Iterable[str], passage: str) -> list[int] | None:
    """Where the first of ``quotes`` found in ``passage`` is: ``[start, end]``. A quote cut with "…" is
    looked for without it, and a labelled one ("Answer: …") also without its label."""
    for quote in quotes:
        flat = " ".join(quote.split()).removesuffix("…").rstrip()
        for candidate in (flat, flat.split(": ", 1)[-1]):
            if len(candidate) >= MIN_QUOTE and (at := passage.find(candidate)) >= 0:
                return [at, at + len(candidate)]
    return None


def passage_text(evidence: Evidence) -> str:
    """A passage as the page shows it: cleaned, its Markdown links showing their targets, one paragraph."""
    return " ".join(defuse_markdown(clean_text(evidence.text), html=False).split())


def passage_view(cid: str, n: int, answer: dict[str, Any], lookups: Lookups) -> dict[str, Any]:
    evidence = lookups.evidence.get(cid)
    doc_id = evidence.document_id if evidence else str((answer.get("evidence_documents") or {}).get(cid, ""))
    document = lookups.documents.get(doc_id)
    stored: dict[str, Any] = next(
        (s for s in answer.get("sources") or [] if s.get("document_id") == doc_id), {}
    )
    title = document.title if document else str(stored.get("title", ""))
    source = document.source if document else str(stored.get("source", ""))
    url = clean_text(document.url if document else str(stored.get("url", "")), keep_newlines=False)
    return {
        "n": n,
        "id": cid,
        "kind": "passage",
        "text": passage_text(evidence) if evidence else "",
        "document_id": clean_text(doc_id, keep_newlines=False),
        "title": clean_text(title, keep_newlines=False),
        "source": clean_text(source, keep_newlines=False),
        "url": url,
        "link": bool(SAFE_URL.match(url)),
    }


def chain_view(
    cid: str, n: int, answer: dict[str, Any], rec: dict[str, Any], lookups: Lookups
) -> dict[str, Any]:
    """A chain as nodes left to right and the edges between neighbours, each edge with its relation, its
    direction and the datasets it comes from (the KB's relation records, else the KG fact citing it)."""
    text = clean_text(
        str((answer.get("chain_texts") or {}).get(cid) or rec.get("text", "")), keep_newlines=False
    )
    names, edges = parse_chain(text)
    node_ids = [str(i) for i in rec.get("node_ids") or (answer.get("chain_nodes") or {}).get(cid) or []]
    known = {
        key.casefold(): e
        for e in (lookups.entities[i] for i in node_ids if i in lookups.entities)
        for key in (e.name, *e.synonyms)
    }
    nodes = []
    for name in names:
        entity = known.get(name.casefold())
        kind = clean_text(entity.type, keep_newlines=False) if entity else ""
        nodes.append({"name": name, "type": kind, "id": clean_text(entity.id) if entity else ""})
    relations = [lookups.relations.get(str(r)) for r in rec.get("relation_ids") or []]
    facts = [f for f in (answer.get("direct") or {}).get("facts") or [] if cid in (f.get("chain_ids") or [])]
    fact_sources = _unique(str(s) for f in facts for s in f.get("sources") or [])
    for i, edge in enumerate(edges):
        relation = relations[i] if i < len(relations) and len(relations) == len(edges) else None
        found = _SOURCES.split(relation.source) if relation and relation.source else []
        edge["sources"] = [clean_text(s, keep_newlines=False) for s in found or fact_sources if s]
    return {"n": n, "id": cid, "kind": "chain", "text": text, "nodes": nodes, "edges": edges}


def parse_chain(text: str) -> tuple[list[str], list[dict[str, Any]]]:
    """``"A -treats-> B <-causes- C"`` → names ``[A, B, C]`` and edges ``[treats →, causes ←]``."""
    names: list[str] = []
    edges: list[dict[str, Any]] = []
    pos = 0
    for match in _ARROW.finditer(text):
        names.append(text[pos : match.start()].strip())
        edges.append({"relation": match.group(1) or match.group(2), "forward": match.group(1) is not None})
        pos = match.end()
    names.append(text[pos:].strip())
    return names, edges


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
