"""What the knowledge base does not cover, said in one line instead of a similarity score.

Why (issue 21): the default KB holds consumer-health pages (MedQuAD) and no drug labels — MedlinePlus drug
pages are left out for copyright — so every question about a drug's doses, side effects, interactions or use
ends "insufficient", and the answer used to say only "similarity 0.00". When the question's subject is a
drug and the KB holds no evidence of a drug label's kinds, the insufficient answer now says that this KB
does not cover drug questions and how to add a source that does. Measured on the 690 MedicationQA consumer
questions (evals/coverage_eval.py, evals/reports/coverage_medicationqa.md).

Likewise for research questions (a gene, a mechanism, a trial's result) on a KB with no research literature:
the note names the literature profile and the PubMed importer.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent.nodes.focus import Focus
from agent.state import EntityRec
from graphs.kb import KnowledgeBase
from graphs.text.claims import not_english
from graphs.text.drug_names import DRUG_TYPES

DRUG_LABEL_KINDS = ("side effects", "contraindications", "interactions", "pregnancy")
"""Evidence labels a drug-label source brings (graphs/building/loaders/label_sections.py; a KB with any of
them covers drug questions)."""
LITERATURE_SOURCE_PREFIX = "PubMed"
"""Sources of research literature: the literature profile's passages and imported PubMed/MEDLINE XML."""
RESEARCH_TYPES = frozenset({"Gene", "Protein", "Pathway", "BiologicalProcess", "MolecularFunction"})
RESEARCH_CUES = re.compile(
    r"\b(?:trials?|stud(?:y|ies)|randomi[sz]ed|meta-analys[ie]s|cohort|genes?|proteins?|mutations?|"
    r"receptors?|pathways?|molecular|targets?|biomarkers?|in vitro|in vivo|mice|mouse|rats?|enzymes?|"
    r"expression|inhibit(?:s|or|ors)?|mechanism)\b",
    re.IGNORECASE,
)
"""Words of a research question (BioASQ-style: "Which gene…", "What is the target of…", "Is X a trial…")."""
DRUG_ASPECTS = frozenset({"side effects", "contraindications", "interactions"})
"""Aspects only a drug label answers, even when a disease is named too ("ibuprofen side effects in gout")."""

_counts: dict[tuple[str, str], int] = {}


def _count(kb: KnowledgeBase, sql: str, keep: Callable[[str], bool]) -> int | None:
    """Rows of a ``SELECT key, COUNT(*) … GROUP BY key`` whose key passes ``keep``, cached per KB version
    (``None`` when the store cannot say)."""
    if (kb.version, sql) in _counts:
        return _counts[(kb.version, sql)]
    counts = getattr(kb.store, "grouped_counts", None)
    if counts is None:
        return None
    total = sum(n for key, n in counts(sql).items() if keep(key))
    _counts[(kb.version, sql)] = total
    return total


def drug_label_evidence(kb: KnowledgeBase) -> int | None:
    """How many evidence units of a drug label's kinds the KB holds (``None`` when the store cannot say)."""
    return _count(kb, "SELECT label, COUNT(*) FROM evidence GROUP BY label", DRUG_LABEL_KINDS.__contains__)


def literature_documents(kb: KnowledgeBase) -> int | None:
    """How many documents of research literature the KB holds (``None`` when the store cannot say)."""
    sql = "SELECT source, COUNT(*) FROM documents GROUP BY source"
    return _count(kb, sql, lambda source: source.startswith(LITERATURE_SOURCE_PREFIX))


def is_research_question(question: str, focus: Focus) -> bool:
    """A question about genes, molecules, mechanisms or studies rather than a condition's everyday care."""
    typed = any(e.get("type") in RESEARCH_TYPES for e in focus.entities)
    return typed or bool(RESEARCH_CUES.search(question))


NOT_ENGLISH = (
    "the question does not look like English, and this knowledge base, its entity linker and the evidence "
    "reader are English, so nothing in it could be matched to the question. Ask it in English."
)
"""Why a question in another language ends insufficient: it used to read as any other miss ("no medical
entity of the question was found"), with passages about something else below it (a Spanish gout question
showed unstable angina). Detected by graphs/text/claims.py ``not_english``; it flagged none of the 17,839
English questions of the evaluation sets and ../shared/data/eval (BioASQ, MedQA, MedMCQA, MMLU, PubMedQA,
MedicationQA, ExpertQA and ours; 2026-11-28)."""


def not_covered(kb: KnowledgeBase, focus: Focus, question: str = "") -> str | None:
    """The coverage note for an insufficient answer about ``focus``, or ``None`` when none applies."""
    if question and not_english(question):
        return NOT_ENGLISH
    drug_note = drug_not_covered(kb, focus)
    if drug_note or not is_research_question(question, focus) or literature_documents(kb) != 0:
        return drug_note
    return (
        "this knowledge base holds no research literature (only consumer-health pages), so questions about "
        "genes, mechanisms or study results are mostly not covered. Build the literature profile "
        "(`evigraph kb build --profile literature`: 24 k PubMed abstract passages) or add PubMed records "
        "with `evigraph kb add pubmed.xml`."
    )


def drug_not_covered(kb: KnowledgeBase, focus: Focus) -> str | None:
    """The drug-label note: the question is about a drug and the KB holds no drug label at all."""
    drugs = [as_asked(e) for e in focus.entities if e.get("type") in DRUG_TYPES]
    about_a_drug = not any(e.get("type") == "Disease" for e in focus.entities)  # "how is gout treated
    # with colchicine?" asks about gout, which the KB covers; "side effects of colchicine?" does not
    if not drugs or not (about_a_drug or set(focus.asked) & DRUG_ASPECTS) or drug_label_evidence(kb) != 0:
        return None
    return (
        f"this knowledge base holds no drug labels or drug monographs, so the doses, side effects, "
        f"interactions and use of {drugs[0]} are not covered (the default KB leaves drug pages out for "
        "copyright). Add drug labels — DailyMed SPL XML or openFDA drug-label JSON — with "
        '`evigraph kb add labels.json` (README, "Importing your sources"), or ask a pharmacist or the '
        "drug's label."
    )


def as_asked(entity: EntityRec) -> str:
    """The drug as the question wrote it, with the KG's name after it when that differs: "levodopa (L-DOPA)"
    — the note said only "L-DOPA" to someone who had asked about levodopa (graphs/text/drug_names.py)."""
    name, surface = entity.get("name", ""), (entity.get("surface") or "").strip()
    if not surface or surface.casefold() == name.casefold():
        return name
    return f"{surface} ({name})"
