"""The knowledge base's data model, with stable ids.

Why stable ids: an answer cites ``[E:…]`` (evidence) and ``[C:…]``/relation ids; a citation must mean the
same passage after a rebuild. Every id is therefore derived from source ids and content, never from load
order:

* entity ids are the source graph's node ids (``DOID:…``, ``DRUGBANK:…``), or ``FOCUS:<slug>`` for a
  document focus the graph does not know;
* relation id = hash(head, relation, tail);
* document id = ``<source>:<source record id>``;
* evidence id = hash(document id, span, text) — the same window of the same document text gets the same id;
* topic id = ``T:<entity id>|<label>`` (one topic per keyword entity and label, EbmKG §3).
"""

from __future__ import annotations

import hashlib
import re

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1
"""Bumped when the on-disk layout changes; a KB with another version is refused with a rebuild hint."""


def short_hash(*parts: str, length: int = 12) -> str:
    """A short, stable hex digest of the parts (SHA-1 is fine: ids, not security)."""
    digest = hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()
    return digest[:length]


def slugify(text: str) -> str:
    """Lower-case ASCII-ish slug used in generated entity ids."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:80] or "x"


def relation_id(head: str, relation: str, tail: str) -> str:
    return "R:" + short_hash(head, relation, tail)


def evidence_id(document_id: str, start: int, end: int, text: str) -> str:
    return "E:" + short_hash(document_id, str(start), str(end), text)


def topic_id(entity_id: str, label: str) -> str:
    return f"T:{entity_id}|{label}"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Entity(_Frozen):
    """A normalised medical concept (a node of the typed graph and of the hypergraph)."""

    id: str
    name: str
    type: str
    synonyms: tuple[str, ...] = ()
    xrefs: tuple[str, ...] = Field(default=(), description="UMLS:C…, MESH:D…, DOID:…, DRUGBANK:DB… ")
    description: str = ""
    sources: tuple[str, ...] = ()


class Relation(_Frozen):
    """A typed, directed edge head -relation-> tail with its provenance."""

    id: str
    head: str
    relation: str
    tail: str
    source: str = Field(default="", description="Dataset(s) the edge came from.")
    license: str = ""
    evidence_refs: tuple[str, ...] = ()


class Document(_Frozen):
    """A source document; evidence units point into its text by character offsets."""

    id: str
    title: str
    source: str
    url: str = ""
    date: str = ""
    license: str = ""
    focus: str = Field(default="", description="What the document is about (its keyword), if known.")
    content_hash: str = Field(default="", description="Hash of the document text, for idempotent updates.")


class Evidence(_Frozen):
    """A paragraph-sized unit of a document: the lower hyperedge of the hypergraph (EbmKG §3)."""

    id: str
    document_id: str
    text: str
    label: str = Field(description="Hyper-relation type: symptoms, causes, treatment, …")
    keyword_entity: str = Field(description="Entity id of the document's focus.")
    start: int = Field(ge=0, description="Character offset of the unit in the document text.")
    end: int = Field(ge=0)


class Topic(_Frozen):
    """An upper hyperedge: all evidence about one keyword entity under one label."""

    id: str
    entity_id: str
    label: str
    description: str = ""
    evidence_ids: tuple[str, ...] = ()


class TopicEdge(_Frozen):
    """Entity↔topic edge with ALGORITHMS.md eq. 6 weight ``w(t, m) = |{e ∈ E_t : m ∈ f(e)}| / |E_t|``."""

    topic_id: str
    entity_id: str
    weight: float = Field(gt=0.0, le=1.0)
