"""Evidence labels (the hypergraph's hyper-relation types) and the mapping from MedQuAD question types.

EbmKG (seed 000 §A.1) labels evidence by what it says about its keyword entity: symptoms, causes,
diagnosis, treatment, prognosis, prevention (+ drug labels). MedQuAD's question types map onto these; the
ones with no EbmKG counterpart keep their own name, so no evidence is forced under a wrong label.
"""

from __future__ import annotations

QTYPE_TO_LABEL: dict[str, str] = {
    "symptoms": "symptoms",
    "causes": "causes",
    "genetic changes": "causes",
    "exams and tests": "diagnosis",
    "treatment": "treatment",
    "outlook": "prognosis",
    "stages": "prognosis",
    "prevention": "prevention",
    "inheritance": "inheritance",
    "susceptibility": "risk factors",
    "frequency": "epidemiology",
    "information": "overview",
}

LABEL_KEYWORDS: dict[str, tuple[str, ...]] = {
    "symptoms": ("symptom", "sign", "present", "feel", "manifest", "look like", "complain"),
    "causes": ("cause", "why", "gene", "mutation", "genetic", "trigger", "etiology", "because"),
    "diagnosis": ("diagnos", "test", "exam", "screen", "detect", "confirm", "workup", "imaging", "biopsy"),
    "treatment": (
        "treat",
        "therapy",
        "drug",
        "medication",
        "medicine",
        "manage",
        "cure",
        "dose",
        "first-line",
        "prescri",
        "surgery",
        "help with",
    ),
    "prognosis": ("prognosis", "outlook", "survival", "life expectancy", "long-term", "recover", "stage"),
    "prevention": ("prevent", "avoid", "reduce the risk", "vaccin", "prophyla"),
    "inheritance": ("inherit", "hereditary", "run in famil", "pass on", "passed down", "carrier"),
    "risk factors": ("risk", "susceptib", "who gets", "more likely"),
    "epidemiology": ("how common", "how many", "prevalence", "incidence", "frequency"),
    "complications": ("complication", "lead to", "long-term effect"),
    "overview": ("what is", "what are", "explain", "overview", "mean"),
}
"""Cue words that say which label a *question* asks about (offline sufficiency and ranking use them)."""


def label_for_qtype(qtype: str) -> str:
    """EbmKG label for a MedQuAD question type; unmapped types keep their own (normalised) name."""
    key = " ".join(qtype.lower().split())
    return QTYPE_TO_LABEL.get(key, key or "overview")


def labels_asked(question: str) -> list[str]:
    """Labels a question asks about, by cue words, in a stable order (may be empty)."""
    q = question.lower()
    return [label for label, cues in LABEL_KEYWORDS.items() if any(c in q for c in cues)]


def specific_labels_asked(question: str) -> list[str]:
    """:func:`labels_asked` without "overview" when something more specific is asked: "What is the
    first-line medicine for …?" asks for treatment, and its "what is" is only the way the question starts."""
    labels = labels_asked(question)
    return [label for label in labels if label != "overview"] or labels
