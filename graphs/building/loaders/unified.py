"""Loader for the unified medical KG (``nodes.tsv`` + ``edges.tsv``, see shared/data PROVENANCE §3.6)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from graphs.building.loaders.base import KGLoader, LoadReport, read_tsv, register_kg_loader, split_pipes
from graphs.model.schema import Entity, Relation, relation_id

NODE_COLUMNS = ("node_id", "name", "type")
EDGE_COLUMNS = ("source_id", "relation", "target_id")


def _find(directory: Path, stem: str) -> Path | None:
    for name in (f"{stem}.tsv", f"{stem}.tsv.gz"):
        if (directory / name).exists():
            return directory / name
    return None


@register_kg_loader
class UnifiedKGLoader(KGLoader):
    """A directory with ``nodes.tsv[.gz]`` (node_id, name, type, sources, xrefs, synonyms) and
    ``edges.tsv[.gz]`` (source_id, relation, target_id, datasets, attributes, evidence_refs, licenses)."""

    format = "unified"
    description = "directory with nodes.tsv and edges.tsv (node_id/name/type; source_id/relation/target_id)"

    @classmethod
    def detect(cls, path: Path) -> bool:
        return path.is_dir() and _find(path, "nodes") is not None and _find(path, "edges") is not None

    def load(self, path: Path, report: LoadReport) -> Iterator[Entity | Relation]:
        nodes, edges = _find(path, "nodes"), _find(path, "edges")
        assert nodes is not None and edges is not None  # guaranteed by detect()
        for n, row in read_tsv(nodes, NODE_COLUMNS, report):
            if not row["node_id"] or not row["name"]:
                report.skip(nodes, n, "empty node_id or name")
                continue
            report.rows_ok += 1
            yield Entity(
                id=row["node_id"],
                name=row["name"],
                type=row["type"] or "Concept",
                synonyms=split_pipes(row.get("synonyms", "")),
                xrefs=split_pipes(row.get("xrefs", "")),
                sources=split_pipes(row.get("sources", "")),
            )
        for n, row in read_tsv(edges, EDGE_COLUMNS, report):
            head, rel, tail = row["source_id"], row["relation"], row["target_id"]
            if not head or not rel or not tail:
                report.skip(edges, n, "empty source_id, relation or target_id")
                continue
            report.rows_ok += 1
            yield Relation(
                id=relation_id(head, rel, tail),
                head=head,
                relation=rel,
                tail=tail,
                source=row.get("datasets", ""),
                license=row.get("licenses", ""),
                evidence_refs=tuple(
                    x for x in row.get("evidence_refs", "").replace("|", ",").split(",") if x
                ),
            )
