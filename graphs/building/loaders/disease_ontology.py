"""Loader for the Disease Ontology as parsed JSONL terms (+ optional ``do_edges.tsv``).

Terms give names, exact/related synonyms, UMLS/MeSH xrefs and the definition (used as the entity
description shown with reasoning chains). ``is_a`` comes from the terms; definition-derived edges whose
object has no id get a text node id (``TEXT:<slug>``) so they remain usable as chain hops.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from graphs.building.loaders.base import KGLoader, LoadReport, read_jsonl, read_tsv, register_kg_loader
from graphs.model.schema import Entity, Relation, relation_id, slugify

LICENSE = "CC BY 3.0"
XREF_PREFIXES = {"UMLS_CUI": "UMLS", "MSH": "MESH"}


def _normalise_xref(xref: str) -> str:
    prefix, _, local = xref.partition(":")
    return f"{XREF_PREFIXES.get(prefix, prefix)}:{local}"


def _files(path: Path) -> tuple[Path | None, Path | None]:
    if path.is_file():
        return path, None
    terms = next(iter(sorted(path.glob("do_terms.jsonl*"))), None)
    edges = next(iter(sorted(path.glob("do_edges.tsv*"))), None)
    return terms, edges


@register_kg_loader
class DiseaseOntologyLoader(KGLoader):
    """``do_terms.jsonl[.gz]`` (id, name, definition, synonyms[{text, scope}], xrefs, is_a, obsolete)."""

    format = "disease_ontology"
    description = "directory with do_terms.jsonl (+ do_edges.tsv), or the do_terms.jsonl file itself"

    @classmethod
    def detect(cls, path: Path) -> bool:
        terms, _ = _files(path)
        return terms is not None and terms.name.startswith("do_terms")

    def load(self, path: Path, report: LoadReport) -> Iterator[Entity | Relation]:
        terms, edges = _files(path)
        assert terms is not None
        for n, obj in read_jsonl(terms, report):
            if not obj.get("id") or not obj.get("name"):
                report.skip(terms, n, "term without id or name")
                continue
            if obj.get("obsolete"):
                continue
            report.rows_ok += 1
            synonyms = tuple(
                s["text"].strip()
                for s in obj.get("synonyms") or []
                if isinstance(s, dict) and s.get("text") and s.get("scope") in ("EXACT", "RELATED", None)
            )
            yield Entity(
                id=obj["id"],
                name=obj["name"],
                type="Disease",
                synonyms=synonyms,
                xrefs=tuple(_normalise_xref(x) for x in obj.get("xrefs") or []),
                description=obj.get("definition") or "",
                sources=("disease-ontology",),
            )
            for parent in obj.get("is_a") or []:
                yield Relation(
                    id=relation_id(obj["id"], "is_a", parent),
                    head=obj["id"],
                    relation="is_a",
                    tail=parent,
                    source="disease-ontology",
                    license=LICENSE,
                )
        if edges is None:
            return
        for _n, row in read_tsv(edges, ("subject_id", "relation", "object_id", "object_name"), report):
            if row["relation"] == "is_a":
                continue  # already taken from the terms
            tail = row["object_id"]
            if not tail:
                tail = "TEXT:" + slugify(row["object_name"])
                yield Entity(id=tail, name=row["object_name"], type="Concept", sources=("disease-ontology",))
            report.rows_ok += 1
            yield Relation(
                id=relation_id(row["subject_id"], row["relation"], tail),
                head=row["subject_id"],
                relation=row["relation"],
                tail=tail,
                source="disease-ontology",
                license=LICENSE,
            )
