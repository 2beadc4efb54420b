"""Evidence labels (the hypergraph's hyper-relation types) and the mapping from MedQuAD question types.

EbmKG (seed 000 §A.1) labels evidence by what it says about its keyword entity: symptoms, causes,
diagnosis, treatment, prognosis, prevention (+ drug labels). MedQuAD's question types map onto these; the
ones with no EbmKG counterpart keep their own name, so no evidence is forced under a wrong label.
"pregnancy" is the aspect of a drug label's pregnancy, lactation and nursing-mothers sections
(graphs/building/loaders/label_sections.py), so "is it safe during pregnancy?" finds them.
"""

from __future__ import annotations

import re

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
    "symptoms": ("symptom*", "sign", "present", "feel", "manifest*", "look like", "complain*"),
    "causes": ("caus*", "why", "gene", "mutation", "genetic*", "trigger", "etiolog*", "because"),
    "diagnosis": (
        "diagnos*",
        "test",
        "exam",
        "examination",
        "screen",
        "detect*",
        "confirm",
        "workup",
        "imaging",
        "biops*",
    ),
    "treatment": (
        "treat*",
        "therap*",
        "drug",
        "medication",
        "medicine",
        "manag*",
        "cure",
        "dose",
        "dosage",
        "first-line",
        "prescri*",
        "surg*",
        "help with",
        "helps with",
        "good for",
        "remed*",
        "what can i take",
        "take for",
        "relie*",
        "get rid of",
    ),
    "prognosis": ("prognos*", "outlook", "survival", "life expectancy", "long-term", "recover*", "stage"),
    "prevention": ("prevent*", "avoid", "reduce the risk", "vaccin*", "prophyla*", "protect*"),
    "inheritance": ("inherit*", "hereditary", "run in famil*", "pass on", "passed down", "carrier"),
    "risk factors": ("risk", "susceptib*", "who gets", "more likely"),
    "epidemiology": ("how common", "how many", "prevalen*", "inciden*", "frequen*"),
    "complications": ("complication", "lead to", "long-term effect"),
    "side effects": ("side effect", "side-effect", "adverse", "toxicit*", "unwanted effect", "safe to take"),
    "contraindications": ("contraindicat*", "should not take", "should not be used"),
    "research": ("research", "clinical trial*", "being studied"),
    "mechanism": ("mechanism*", "mode of action", "works by", "pharmacodynamic*", "molecular target*"),
    "interactions": (
        "interact*",
        "taken together",
        "take together",
        "together with",
        "combined with",
        "co-administ*",
        "concomitant*",
        "at the same time as",
    ),
    "pregnancy": (
        "pregnan*",
        "breastfeed*",
        "breast-feed*",
        "lactation",
        "lactating",
        "nursing mother*",
        "during pregnancy",
    ),
    "overview": ("what is", "what are", "explain", "overview", "mean"),
}
"""Cue words that say which label a *question* asks about (offline sufficiency and ranking use them).

A cue matches at the start of a word. One ending in ``*`` is a stem and may go on ("diagnos*" → diagnosis,
diagnosed); any other may only take an inflection (-s, -es, -d, -ed, -ing), so "test" finds "tests" but not
"testicular", and "gene" finds "genes" but not "generalized"."""


PHRASE_CUES: dict[str, str] = {
    "mechanism": r"how (?:does|do|did) (?:\S+ ){1,4}work\b",
    "treatment": r"(?:should (?:i|he|she|we|they|you)|(?:i|he|she|we|they|you) should) (?:be )?"
    r"(?:take|taking|start|be on)\b|(?:anything|something|what) (?:i|he|she|we|they|you) (?:can|could) take\b"
    r"|slow (?:it|this|that|them|things) down\b",
    "interactions": r"(?:take|taking|use|using|start|starting|give|giving) (?:\S+ ){1,3}(?:while|when) "
    r"(?:on|taking|using)\b",
}
"""Cues that hold the subject inside a phrase ("how does metformin work?", "which blood thinner should she
take?", "can I take ibuprofen while on warfarin?"), which a cue word cannot say: regular expressions,
matched at a word start like the cue words of the same label."""


def _cue_pattern(cues: tuple[str, ...], phrase: str | None = None) -> re.Pattern[str]:
    parts = [re.escape(c[:-1]) if c.endswith("*") else re.escape(c) + r"(?:s|es|d|ed|ing)?\b" for c in cues]
    return re.compile(r"\b(?:" + "|".join([*parts, *([phrase] if phrase else [])]) + ")")


_CUE_PATTERNS: dict[str, re.Pattern[str]] = {
    label: _cue_pattern(cues, PHRASE_CUES.get(label)) for label, cues in LABEL_KEYWORDS.items()
}

DIFFERENTIAL = re.compile(
    r"\b(?:differential(?=\s+diagnos[ie]s|\s*[?.]|\s+(?:for|here|includes?|is|would)\b|$)"
    r"|what (?:could|might|may) (?:it|this|these|that) be"
    r"|what (?:is|are|would) (?:it|this|these|that) (?:most )?likely(?: to be)?\b"
    r"|what (?:could|might|may) (?:be )?caus(?:e|ing) (?:this|these|her|his|their|the symptoms)"
    r"|(?:most )?likely (?:diagnosis|cause)|possible diagnos[ie]s|what (?:is|could be) wrong"
    r"|what (?:should|would|do|does|might|could|must) (?:i|we|you|one|they) suspect"
    r"|(?:what|which) (?:conditions?|diseases?|diagnos[ie]s) (?:should|would|could|might|must) "
    r"(?:i|we|you|one) (?:suspect|consider|think of|rule out))"
)
"""A question asking which condition explains a presentation (a vignette's "what could cause this?"): it asks
for a diagnosis, not the causes (genes) of a named disease — the heart-failure vignette was answered with
"Genes and causes the KG links to hypertension". "Differential" alone is a diagnosis only when a diagnosis
follows or nothing does ("the differential for chest pain", "what's the differential?"), not "differential
amino acid group usage" or "differential expression"."""


RELATIONS_FOR_LABEL: dict[str, tuple[str, ...]] = {
    "treatment": ("treats", "indicated_for", "palliates"),
    "symptoms": ("has_phenotype", "has_symptom", "results_in"),
    "causes": ("associated_gene", "has_material_basis_in", "transmitted_by"),
    "inheritance": ("has_inheritance_pattern",),
    "complications": ("results_in",),
    "contraindications": ("not_indicated_for",),
    "mechanism": ("binds_gene",),
}
"""Typed KG relations that state facts of the kind a label asks for (unified KG relation names, see
``relation_types.tsv``): a treatment question is answered by treats/indicated_for/palliates edges of its
focus, a symptoms question by has_phenotype/has_symptom. Labels absent here (diagnosis, side effects…)
have no typed relation in the KG, so the direct answer lists no KG facts for them rather than loose ones."""


def mentions_label(text: str, label: str) -> bool:
    """Whether ``text`` carries one of ``label``'s cue words (same word-start rules as questions)."""
    pattern = _CUE_PATTERNS.get(label)
    return bool(pattern and pattern.search(text.lower()))


def relations_for(labels: list[str]) -> list[str]:
    """The KG relation types that answer any of ``labels``, in label order, without repeats."""
    return list(dict.fromkeys(rel for label in labels for rel in RELATIONS_FOR_LABEL.get(label, ())))


def label_for_qtype(qtype: str) -> str:
    """EbmKG label for a MedQuAD question type; unmapped types keep their own (normalised) name."""
    key = " ".join(qtype.lower().split())
    return QTYPE_TO_LABEL.get(key, key or "overview")


DESCRIBES_A_DIAGNOSIS = re.compile(
    r"\b(?:newly|recently|just|already|previously|once|first)\s+diagnos\w*"
    r"|\bdiagnosed\s+(?:with|as|at)\b|\bwith a (?:new |recent )?diagnosis of\b"
)
"""A diagnosis the question reports about the patient ("a patient with newly diagnosed gout", "diagnosed
with lupus at 30"), which is not a question about diagnosis: a decision audit about allopurinol in a gout
flare was read as asking how gout is diagnosed, and told a diagnosis passage was missing."""


def asks_for_a_differential(question: str) -> bool:
    """Whether the question asks which condition explains what it describes ("What is it likely to be?"):
    its named findings (cough, stridor) are then not its subject, and what the KG lists *for them* (cough
    medicines) answers another question than the one asked — a child's barking cough and stridor was shown
    benzonatate and dextromethorphan under "the asked relation"."""
    return bool(DIFFERENTIAL.search(question.lower()))


HARM_OF_A_TREATMENT = re.compile(
    r"\b(?:bleeding|haemorrhage|hemorrhage) risks?\b|\brisks? of (?:bleeding|haemorrhage|hemorrhage)\b"
)
"""A harm a treatment may do ("what bleeding risks to expect" on a blood thinner): a side effect, not who is
at risk of the disease — the atrial-fibrillation question was read as "risk factors" and shown "Who is at
risk for Atrial Fibrillation?" passages."""


LOWERING_A_RISK = re.compile(
    r"\b(?:lower|reduc|cut|decreas|minimi[sz]|lessen)\w* (?:\S+ ){0,2}(?:risks?|chances?)\b(?: of| for)?"
)
"""A risk the question wants lowered ("how he can lower his risk of stroke"): prevention and treatment (the
drug that lowers it), not who is at risk — the atrial-fibrillation case asking how to lower the stroke risk
was read as "risk factors" and shown "Who is at risk" passages, not the anticoagulants that halve it."""


LEFT_UNTREATED = re.compile(
    r"\b(?:if|when|what if)\b[^?.]{0,40}?\b(?:is|are|was|goes|go|isn't|aren't|not|never)\s+(?:\w+\s+)?"
    r"(?:left\s+)?(?:not\s+)?(?:un)?treated\b(?<!\bis treated)(?<!\bare treated)(?<!\bwas treated)"
    r"|\b(?:left|goes|go)\s+untreated\b|\buntreated\b|\bwithout (?:any )?treatment\b"
)
"""What happens without treatment ("What happens if high blood pressure is not treated?", "… left
untreated"): the complications and outlook, not the treatment — it led with "ACE inhibitors block this
process …"."""


DRUG_CLASS = re.compile(
    r"\b(?:class(?:es)?|types?|kinds?|famil(?:y|ies)|groups?)\s+of\s+"
    r"(?:drugs?|medications?|medicines?|agents?|antibiotics?|compounds?)\b"
)
"""A drug's class ("What classes of drugs does retapamulin belong to?"): what the drug is, not a treatment —
read as treatment, it headed the answer with "Conditions the KG lists Retapamulin for: impetigo"."""


REPORTED_FINDINGS = re.compile(
    r"(?<!which )(?<!what )\b(?:(?:rapid|blood|urine|stool|laboratory|lab|skin|genetic|pregnancy|physical"
    r"|pelvic|neurologic|neurological|abdominal|cardiac|eye|rectal) )?"
    r"(?:tests?|testing|exam|examination|screen|screening|imaging|biopsy|biopsies)"
    r"\s+(?:is|was|were|are|came back|shows?|showed|reveals?|revealed"
    r"|demonstrates?"
    r"|demonstrated|finds|found|confirms?|confirmed|results?)\b"
    r"|\bon (?:physical )?exam(?:ination)?\b"
    r"|\b(?:presents|presented|presenting) (?:to|with|for)\b|\bcomplain(?:s|ed|ing) of\b"
)
"""What a case reports ("Rapid strep test is positive", "physical examination shows", "presents with",
"complains of"), which is not what it asks: a strep-throat case asking for treatment was read as asking for
diagnosis too, and a third of MedQA-USMLE stems carried a diagnosis or symptoms aspect from their findings.
"Which test confirms …?" stays a diagnosis question."""


def labels_asked(question: str) -> list[str]:
    """Labels a question asks about, by cue words, in a stable order (may be empty). A differential
    ("what could cause this?") asks for a diagnosis: it is read as diagnosis, not causes. A diagnosis the
    question only reports ("newly diagnosed gout") is not asked (:data:`DESCRIBES_A_DIAGNOSIS`), nor are the
    findings a case reports (:data:`REPORTED_FINDINGS`), a treatment's bleeding risk is a side effect
    (:data:`HARM_OF_A_TREATMENT`), a risk to lower is prevention and treatment (:data:`LOWERING_A_RISK`),
    and a drug's class is what it is (:data:`DRUG_CLASS`)."""
    q = DESCRIBES_A_DIAGNOSIS.sub(" ", question.lower())
    q = REPORTED_FINDINGS.sub(" ", q)
    q = HARM_OF_A_TREATMENT.sub(" side effects ", q)
    q = LOWERING_A_RISK.sub(" prevent treatment ", q)
    q = DRUG_CLASS.sub(" what is ", q)
    q = LEFT_UNTREATED.sub(" complications outlook ", q)
    labels = [label for label, pattern in _CUE_PATTERNS.items() if pattern.search(q)]
    if asks_for_a_differential(q):
        labels = ["diagnosis", *(label for label in labels if label not in ("diagnosis", "causes"))]
    return labels


def without_cue_words(text: str) -> str:
    """``text`` with every label cue word blanked out: what is left of "hereditary hemochromatosis" once its
    "hereditary" (an inheritance cue) is gone names a disease; nothing is left of "side effects"."""
    rest = text.lower()
    for pattern in _CUE_PATTERNS.values():  # a cue matches a word's start ("treat*"): blank the whole word
        rest = _CUE_WORD_REST.sub(" ", pattern.sub("\x00", rest))
    return rest


_CUE_WORD_REST = re.compile(r"\x00[\w'-]*")


def specific_labels_asked(question: str) -> list[str]:
    """:func:`labels_asked` without "overview" when something more specific is asked: "What is the
    first-line medicine for …?" asks for treatment, and its "what is" is only the way the question starts."""
    labels = labels_asked(question)
    return [label for label in labels if label != "overview"] or labels
