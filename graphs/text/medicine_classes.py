"""Medicines named in words, and questions that rule them out.

Why a module of its own: the treatment lead (agent/nodes/treatment_lead.py) looks for a sentence naming a
class of medicine, and the key sentences (agent/nodes/key_sentences.py) leave such sentences out when the
question asks for a way without medicines; both read the same words.
"""

from __future__ import annotations

import re

TREATMENT_CLASS = re.compile(
    r"\b(?:antibiotics?|antibacterials?|antivirals?|antiretrovirals?|antifungals?|antihistamines?|"
    r"antidepressants?|anticonvulsants?|antiepileptics?|antipsychotics?|anticoagulants?|antiplatelets?|"
    r"blood[- ]thinn(?:ers?|ing medicines?)|inhibitors?|blockers?|diuretics?|statins?|"
    r"corticosteroids?|steroids?|bronchodilators?|insulin(?! resistance| levels?| production| sensitivity)|"
    r"chemotherapy|immunotherapy|radiation therapy|radiotherapy|nsaids?|analgesics?|opioids?|dmards?|"
    r"biologics?|bisphosphonates?|chelators?|vasodilators?|hormone (?:replacement )?therapy|antacids?|"
    r"laxatives?|scabicides?|pediculicides?|iron (?:therapy|supplements?)|sequestrants?|fibrates?)\b",
    re.IGNORECASE,
)
"""A class of medicine named in words: the KG has no class nodes, and consumer pages name classes, not
drugs ("Bacterial pneumonia is treated with medicines called antibiotics.", "ACE inhibitors work to improve
heart failure in many ways"), which the reader scored below "The goals of treatment are to cure the infection
and prevent complications." A class names no subject, so a sentence naming one leads only when it names no
other condition: "For example, if you have a bleeding ulcer, your doctor may prescribe antibiotics and other
medicines to treat the ulcer." would have led "What is the treatment for iron deficiency anemia?"."""

WITHOUT_MEDICINES = re.compile(
    r"\b(?:without|other than|apart from|besides|instead of|except|rather than)\s+(?:\w+\s+){0,2}?"
    r"(?:drugs?|medications?|medicines?|pills?|tablets?|prescriptions?)\b"
    r"|\b(?:non-?drug|non-?pharmacologic\w*|drug-free|medication-free|naturally|natural (?:ways?|remed\w+))\b"
    r"|\b(?:treatments?|therap\w+|options?|something|anything|ways?|remed\w+)\s+(?:\w+\s+){0,3}?(?:that|which)\s+"
    r"(?:isn't|is not|aren't|are not|doesn't use|does not use)\s+(?:\w+\s+){0,2}?"
    r"(?:pills?|drugs?|medications?|medicines?)\b",
    re.IGNORECASE,
)
"""A question asking for a way without medicines ("What is the best way to lower cholesterol without
drugs?", "Is there a treatment that isn't sleeping pills?", "How can I lower my blood pressure
naturally?"): the first was answered "Statins work well at lowering LDL cholesterol." second."""


MEDICINE_WORD = re.compile(
    r"^(?:[\w-]+\s+){0,3}?(?:medicines?|medications?|drugs?|pills?|sleep aids?|tablets?)\b", re.IGNORECASE
)
"""A sentence about medicines in general, named in its first words ("Many prescription medicines are used to
treat insomnia.", "Medicines can help control high blood cholesterol"): under a question that rules medicines
out, as unwanted as a named class. Not one that names them beside something else ("There are two main ways
to lower your cholesterol: Therapeutic Lifestyle Changes and medicines.")."""


def rules_out_medicines(question: str) -> bool:
    """Whether ``question`` asks for a way that does not use medicines (:data:`WITHOUT_MEDICINES`)."""
    return bool(WITHOUT_MEDICINES.search(question))
