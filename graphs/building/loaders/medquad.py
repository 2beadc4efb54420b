"""Loader for MedQuAD-shaped JSONL: one QA pair per line (focus, focus_cuis, qtype, question, answer, url).

Each answered pair becomes one document whose text is the answer; its label is the mapped question type
and its focus (with UMLS CUIs and synonyms) becomes the keyword entity of all its evidence units.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from graphs.building.loaders.base import (
    CorpusLoader,
    LoadReport,
    SourceDocument,
    first_json_keys,
    non_string_fields,
    read_jsonl,
    register_corpus_loader,
)
from graphs.model.labels import label_for_qtype

REQUIRED = ("id", "focus", "qtype", "question", "answer")
TEXT_FIELDS = (*REQUIRED, "source", "url", "focus_category", "focus_semantic_group")
LICENSE = "CC BY 4.0 (MedQuAD, Ben Abacha & Demner-Fushman 2019)"


RESOURCE_LIST = "These resources address the diagnosis or management of"


@dataclass(frozen=True)
class Mislabelled:
    """A MedQuAD document whose answers are about another subject than its focus: left out of the KB.

    Matched on the document id, the URL and the focus together, so only the defect as published is
    dropped (a corrected release, or a user's file reusing an id, loads as usual)."""

    doc_id: str
    url: str
    focus: str
    reason: str


MISLABELLED = (
    Mislabelled(
        "NINDS_0000187",
        "http://www.ninds.nih.gov/disorders/lyme/lyme.htm",
        "Machado-Joseph Disease",
        "a MedQuAD labelling error: the NINDS Lyme disease page (every answer is about Lyme disease) is "
        "labelled Machado-Joseph Disease; left out so that Lyme text is never cited as about that disease",
    ),
)
"""Found in the newcomer trial of 2026-11-27: "How is Machado-Joseph disease treated?" showed "Lyme disease is
treated with antibiotics under the supervision of a physician" first, counted as about Machado-Joseph
disease. A scan of all 16,418 pairs (a URL page name found in the answer while the focus's words are in
neither; data/README.md, Caveats) found no other such document: the other hits were abbreviations
(ADHD, AVM, OPCA) and renamed pages (brachial plexus birth injuries)."""


def mislabelling(obj: dict[str, object]) -> str | None:
    """Why the pair is left out, when its document is a known :data:`MISLABELLED` one."""
    doc_id = str(obj.get("doc_id") or str(obj.get("id", "")).rsplit("-", 1)[0])
    for known in MISLABELLED:
        if (doc_id, obj.get("url"), obj.get("focus")) == (known.doc_id, known.url, known.focus):
            return known.reason
    return None


def _label(qtype: str, answer: str) -> str:
    """GHR's 1,085 "treatment" answers are lists of links ("These resources address …"), not treatment
    facts; labelling them ``resources`` keeps them out of answers to "how is X treated?"."""
    return "resources" if answer.lstrip().startswith(RESOURCE_LIST) else label_for_qtype(qtype)


@register_corpus_loader
class MedQuADLoader(CorpusLoader):
    format = "medquad"
    description = "JSONL with id, focus, focus_cuis, qtype, question, answer, url, source"

    @classmethod
    def detect(cls, path: Path) -> bool:
        return path.is_file() and {"focus", "qtype", "answer"} <= first_json_keys(path)

    def load(self, path: Path, report: LoadReport) -> Iterator[SourceDocument]:
        for n, obj in read_jsonl(path, report):
            wrong = non_string_fields(obj, TEXT_FIELDS)
            if wrong:
                report.skip(path, n, f"field(s) must be text (a JSON string): {', '.join(wrong)}")
                continue
            missing = [k for k in REQUIRED if not isinstance(obj.get(k), str) or not obj.get(k, "").strip()]
            if missing:
                report.skip(path, n, f"missing or empty field(s): {', '.join(missing)}")
                continue
            wrong_subject = mislabelling(obj)
            if wrong_subject:
                report.skip(path, n, wrong_subject)
                continue
            report.rows_ok += 1
            cuis = tuple(c for c in obj.get("focus_cuis") or [] if isinstance(c, str))
            yield SourceDocument(
                id=f"medquad:{obj['id']}",
                title=" ".join(obj["question"].split()),
                text=obj["answer"],
                source=f"MedQuAD/{obj.get('source') or 'unknown'}",
                label=_label(obj["qtype"], obj["answer"]),
                url=obj.get("url") or "",
                license=LICENSE,
                focus=" ".join(obj["focus"].split()),
                focus_cuis=cuis,
                focus_synonyms=tuple(s for s in obj.get("focus_synonyms") or [] if isinstance(s, str)),
                focus_type=obj.get("focus_category") or obj.get("focus_semantic_group") or "",
            )
