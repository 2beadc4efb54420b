"""Loader for Hetionet v1.0 nodes (``id``/``name``/``kind``) and SIF edges (source/metaedge/target).

Hetionet ids look like ``Disease::DOID:9352`` or ``Compound::DB00331``; they are mapped to the unified
graph's ids (``DOID:9352``, ``DRUGBANK:DB00331``, ``NCBIGene:…``, ``UBERON:…``, ``MESH:…``) so that both
sources merge into one node. Metaedge abbreviations become readable relation names.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from graphs.building.loaders.base import KGLoader, LoadReport, read_tsv, register_kg_loader
from graphs.model.schema import Entity, Relation, relation_id

METAEDGE_RELATIONS = {
    "CtD": "treats",
    "CpD": "palliates",
    "CbG": "binds_gene",
    "CrC": "resembles",
    "CuG": "upregulates_gene",
    "CdG": "downregulates_gene",
    "DaG": "associated_gene",
    "DuG": "upregulates_gene",
    "DdG": "downregulates_gene",
    "DlA": "localizes_to",
    "DrD": "resembles",
    "DpS": "has_symptom",
    "AdG": "downregulates_gene",
    "AuG": "upregulates_gene",
    "AeG": "expresses_gene",
    "GiG": "interacts_with",
    "GcG": "covaries_with",
    "Gr>G": "regulates_gene",
    "CcSE": "causes_side_effect",
}
KIND_PREFIX = {"Compound": "DRUGBANK:", "Gene": "NCBIGene:", "Disease": "", "Anatomy": "", "Symptom": "MESH:"}


def normalise_hetionet_id(raw: str) -> tuple[str, str]:
    """``Kind::local`` → (unified id, kind)."""
    kind, _, local = raw.partition("::")
    if not local:
        return raw, "Concept"
    prefix = KIND_PREFIX.get(kind, kind.upper().replace(" ", "_") + ":")
    return prefix + local, kind


def _files(path: Path) -> tuple[Path | None, list[Path]]:
    if path.is_file():
        return None, [path]
    nodes = next((p for p in sorted(path.glob("*nodes*.tsv*"))), None)
    edges = sorted(p for p in path.glob("*.sif*") if p.is_file())
    return nodes, edges


@register_kg_loader
class HetionetLoader(KGLoader):
    """A directory with Hetionet ``*nodes*.tsv`` (id, name, kind) and ``*.sif[.tsv][.gz]`` edge files."""

    format = "hetionet"
    description = (
        "directory with Hetionet *nodes*.tsv (id/name/kind) and *.sif* edges (source/metaedge/target)"
    )

    @classmethod
    def detect(cls, path: Path) -> bool:
        nodes, edges = _files(path) if path.is_dir() else (None, [])
        return nodes is not None and bool(edges)

    def load(self, path: Path, report: LoadReport) -> Iterator[Entity | Relation]:
        nodes, edge_files = _files(path)
        if nodes is not None:
            for n, row in read_tsv(nodes, ("id", "name", "kind"), report):
                node_id, kind = normalise_hetionet_id(row["id"])
                if not row["name"]:
                    report.skip(nodes, n, "empty name")
                    continue
                report.rows_ok += 1
                yield Entity(
                    id=node_id,
                    name=row["name"],
                    type=row["kind"] or kind,
                    xrefs=(row["id"],),
                    sources=("hetionet",),
                )
        for edges in edge_files:
            for n, row in read_tsv(edges, ("source", "metaedge", "target"), report):
                rel = METAEDGE_RELATIONS.get(row["metaedge"], row["metaedge"])
                head, _ = normalise_hetionet_id(row["source"])
                tail, _ = normalise_hetionet_id(row["target"])
                if not head or not tail:
                    report.skip(edges, n, "empty source or target")
                    continue
                report.rows_ok += 1
                yield Relation(
                    id=relation_id(head, rel, tail),
                    head=head,
                    relation=rel,
                    tail=tail,
                    source="hetionet",
                    license="see Hetionet_source_license_table.md",
                )
