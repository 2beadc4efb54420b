"""Loader for MedQuAD-shaped JSONL: one QA pair per line (focus, focus_cuis, qtype, question, answer, url).

Each answered pair becomes one document whose text is the answer; its label is the mapped question type
and its focus (with UMLS CUIs and synonyms) becomes the keyword entity of all its evidence units.
"""

from __future__ import annotations

from collections.abc import Iterator
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
