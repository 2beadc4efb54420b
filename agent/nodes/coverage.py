"""What the knowledge base does not cover, said in one line instead of a similarity score.

Why (issue 21): the default KB holds consumer-health pages (MedQuAD) and no drug labels — MedlinePlus drug
pages are left out for copyright — so every question about a drug's doses, side effects, interactions or use
ends "insufficient", and the answer used to say only "similarity 0.00". When the question's subject is a
drug and the KB holds no evidence of a drug label's kinds, the insufficient answer now says that this KB
does not cover drug questions and how to add a source that does. Measured on the 690 MedicationQA consumer
questions (evals/coverage_eval.py, evals/reports/coverage_medicationqa.md).
"""

from __future__ import annotations

from agent.nodes.focus import Focus
from graphs.kb import KnowledgeBase

DRUG_LABEL_KINDS = ("side effects", "contraindications", "interactions", "dosage", "pregnancy", "drug label")
"""Evidence labels a drug-label or monograph source brings (a KB with any of them covers drug questions)."""
DRUG_TYPES = frozenset({"Compound", "Drug"})
DRUG_ASPECTS = frozenset({"side effects", "contraindications", "interactions"})
"""Aspects only a drug label answers, even when a disease is named too ("ibuprofen side effects in gout")."""

_drug_label_counts: dict[str, int] = {}


def drug_label_evidence(kb: KnowledgeBase) -> int | None:
    """How many evidence units of a drug label's kinds the KB holds (``None`` when the store cannot say)."""
    if kb.version in _drug_label_counts:
        return _drug_label_counts[kb.version]
    counts = getattr(kb.store, "grouped_counts", None)
    if counts is None:
        return None
    by_label = counts("SELECT label, COUNT(*) FROM evidence GROUP BY label")
    total = sum(n for label, n in by_label.items() if label in DRUG_LABEL_KINDS)
    _drug_label_counts[kb.version] = total
    return total


def not_covered(kb: KnowledgeBase, focus: Focus) -> str | None:
    """The coverage note for an insufficient answer about ``focus``, or ``None`` when none applies."""
    drugs = [e["name"] for e in focus.entities if e.get("type") in DRUG_TYPES]
    about_a_drug = not any(e.get("type") == "Disease" for e in focus.entities)  # "how is gout treated
    # with colchicine?" asks about gout, which the KB covers; "side effects of colchicine?" does not
    if not drugs or not (about_a_drug or set(focus.asked) & DRUG_ASPECTS) or drug_label_evidence(kb) != 0:
        return None
    return (
        f"this knowledge base holds no drug labels or drug monographs, so the doses, side effects, "
        f"interactions and use of {drugs[0]} are not covered (the default KB leaves drug pages out for "
        "copyright). Add a drug-label source as EviGraph JSONL documents with `evigraph kb add FILE` "
        '(README, "kb add"), or ask a pharmacist or the drug\'s label.'
    )
