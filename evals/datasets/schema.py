"""The shapes every evaluation dataset is loaded into.

Why one retrieval shape for all tasks: every system returns ranked *evidence ids* of one KB, and every
dataset says which KB documents are gold. Two granularities are scored:

* **passage** — the unit a reader cites. For snippet pools (BioASQ, PubMedQA) each KB document *is* one
  gold snippet / abstract paragraph, so the passage unit is the KB document. For MedQuAD the unit is the
  evidence paragraph; ``passage_hints`` names the paragraph of a gold document that answers (a substring of
  it), and a gold document without a hint counts all of its paragraphs.
* **document** — the source a clinician would open: the PubMed article (PMID) of a snippet, or the
  MedQuAD QA pair. Seed 002's recall@K / precision@K are at this level ("a document counts once any of its
  chunks is retrieved").
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

PassageUnit = Literal["document", "evidence"]
"""A passage-level unit in a dataset's KB: a whole KB document (snippet pools) or one evidence unit."""


class RetrievalQuestion(BaseModel):
    """One question with its gold, expressed in KB document ids (``doc:…``, ``medquad:…``)."""

    model_config = ConfigDict(frozen=True)

    id: str
    question: str
    gold_documents: tuple[str, ...] = Field(description="KB document ids whose text answers the question.")
    passage_hints: dict[str, str] = Field(
        default_factory=dict, description="KB document id → substring of the answering paragraph."
    )
    meta: dict[str, Any] = Field(default_factory=dict)


class RetrievalDataset(BaseModel):
    """Questions plus how KB documents map to scored units."""

    name: str
    description: str
    questions: list[RetrievalQuestion]
    passage_unit: PassageUnit
    group_of: dict[str, str] = Field(
        default_factory=dict,
        description="KB document id → document-level group (e.g. its PMID); absent = the document itself.",
    )

    def group(self, document_id: str) -> str:
        return self.group_of.get(document_id, document_id)


class McqItem(BaseModel):
    """A multiple-choice question (MedQA-USMLE, MedMCQA, MMLU): options by letter, gold letters."""

    model_config = ConfigDict(frozen=True)

    id: str
    question: str
    options: dict[str, str]
    gold: tuple[str, ...] = Field(description="Correct option letters (one for these sets; PCR allows more).")
    source: str


class LongFormItem(BaseModel):
    """An open question with a reference answer (ExpertQA, MedicationQA)."""

    model_config = ConfigDict(frozen=True)

    id: str
    question: str
    reference: str
    source: str
    meta: dict[str, Any] = Field(default_factory=dict)
