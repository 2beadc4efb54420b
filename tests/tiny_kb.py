"""A hand-made, fully known knowledge base for exact tests (built with the real builder and embedder).

Graph: metformin -treats-> type 2 diabetes; insulin -treats-> type 2 diabetes; type 2 diabetes
-has_symptom-> polyuria; type 2 diabetes -is_a-> diabetes mellitus <-is_a- type 1 diabetes.
Corpus (MedQuAD-shaped): three "treatment" answers and one "symptoms" answer about type 2 diabetes, one
"treatment" answer about type 1 diabetes.
"""

from __future__ import annotations

import json
from pathlib import Path

from graphs.building.builder import BuildConfig

NODES = [
    ("DOID:9352", "type 2 diabetes mellitus", "Disease", "UMLS:C0011860", "type 2 diabetes|T2DM"),
    ("DOID:9744", "type 1 diabetes mellitus", "Disease", "UMLS:C0011854", "type 1 diabetes"),
    ("DOID:9351", "diabetes mellitus", "Disease", "UMLS:C0011849", ""),
    ("DRUGBANK:DB00331", "Metformin", "Compound", "", ""),
    ("DRUGBANK:DB00030", "Insulin", "Compound", "", "insulin human"),
    ("MESH:D011141", "Polyuria", "Symptom", "", "frequent urination"),
    ("MESH:D006943", "Hyperglycemia", "Symptom", "", "high blood sugar"),
]
EDGES = [
    ("DRUGBANK:DB00331", "treats", "DOID:9352"),
    ("DRUGBANK:DB00030", "treats", "DOID:9352"),
    ("DRUGBANK:DB00030", "treats", "DOID:9744"),
    ("DOID:9352", "has_symptom", "MESH:D011141"),
    ("DOID:9352", "is_a", "DOID:9351"),
    ("DOID:9744", "is_a", "DOID:9351"),
]


def _qa(qid: str, focus: str, cui: str, qtype: str, answer: str) -> dict[str, object]:
    return {
        "id": qid,
        "doc_id": qid.split("-")[0],
        "source": "NIDDK",
        "url": f"https://example.org/{qid}",
        "focus": focus,
        "focus_cuis": [cui],
        "focus_synonyms": [],
        "qtype": qtype,
        "question": f"What are the {qtype} for {focus} ?",
        "answer": answer,
    }


DOCS = [
    _qa(
        "T2-1",
        "Type 2 Diabetes",
        "C0011860",
        "treatment",
        "Metformin is usually the first medicine for type 2 diabetes. It lowers high blood sugar.",
    ),
    _qa(
        "T2-2",
        "Type 2 Diabetes",
        "C0011860",
        "treatment",
        "Some people with type 2 diabetes need insulin when other medicines stop working.",
    ),
    _qa(
        "T2-3",
        "Type 2 Diabetes",
        "C0011860",
        "treatment",
        "Healthy eating and physical activity help control blood glucose. Metformin may be added.",
    ),
    _qa(
        "T2-4",
        "Type 2 Diabetes",
        "C0011860",
        "symptoms",
        "Symptoms include frequent urination, increased thirst and hyperglycemia.",
    ),
    _qa(
        "T1-1",
        "Type 1 Diabetes",
        "C0011854",
        "treatment",
        "People with type 1 diabetes must take insulin every day.",
    ),
]


def write_tiny_sources(directory: Path) -> tuple[Path, Path]:
    """Write the tiny KG (unified format) and corpus; return (kg dir, corpus file)."""
    kg = directory / "kg"
    kg.mkdir(parents=True, exist_ok=True)
    (kg / "nodes.tsv").write_text(
        "node_id\tname\ttype\tsources\txrefs\tsynonyms\tdegree\n"
        + "".join(f"{i}\t{n}\t{t}\ttiny\t{x}\t{s}\t0\n" for i, n, t, x, s in NODES),
        encoding="utf-8",
    )
    (kg / "edges.tsv").write_text(
        "source_id\trelation\ttarget_id\tdatasets\tattributes\tevidence_refs\tlicenses\n"
        + "".join(f"{h}\t{r}\t{t}\ttiny\t\t\tCC0\n" for h, r, t in EDGES),
        encoding="utf-8",
    )
    corpus = directory / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    return kg, corpus


def tiny_config(directory: Path, **overrides: object) -> BuildConfig:
    kg, corpus = write_tiny_sources(directory)
    base: dict[str, object] = {"kg_sources": [(kg, None)], "corpus_sources": [(corpus, None)], "name": "tiny"}
    base.update(overrides)
    return BuildConfig(**base)  # type: ignore[arg-type]
