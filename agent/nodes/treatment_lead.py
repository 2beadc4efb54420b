"""A treatment question's answer leads with a sentence that names a treatment: a drug the KG lists for the
subject, or a class of medicine.

Why: the reader scores a sentence for being on the question, not for naming what was asked, and on
treatment questions it prefers the page's topic sentence. "What is the recommended treatment for latent
tuberculosis?" was answered first with "Treatment of latent TB infection is essential for controlling and
eliminating TB in the United States." (reader 0.83) while "The medications used to treat latent TB infection
include: isoniazid (INH), rifampin (RIF), rifapentine (RPT)" (0.74) came fifth, below the budget. The KG
already lists the drugs it knows for the subject (the "Drugs the KG lists for …" line); a sentence of the
retrieved evidence naming one of them names a treatment, and the graph's edge says so independently of the
passage. This is where the graph earns its place at sentence level (issue 18).

Scope, kept narrow on purpose: only when the question asks for treatment *of a condition* — its subject is a
disease, and no drug is. When a drug is the subject the asked thing is a condition: "Dasatinib and
Blinatumomab are used for treatment of which disease?" must not lead with "A chemotherapy-free induction …"
(a first version did, on bioasq-dev-full, and "Netarsudil is a novel ROCK/NET inhibitor …" displaced the
sentence naming ocular hypertension); there the named-answer vote weighs the KG's list
(agent/nodes/answer_candidates.py). A drug counts when the KG lists it as treating the subject
(treats / indicated_for / palliates).
The lead only reorders: the sentence must already be one the reader would show (``key_sentences.lead_first``
checks the reader's floor), so a weak sentence is never promoted.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent.nodes.asked_detail import kg_candidates
from agent.nodes.focus import Focus
from agent.nodes.key_sentences import ANAPHOR
from agent.state import KGFactRec
from graphs.building.hypergraph import DISEASE_TYPES
from graphs.kb import KnowledgeBase
from graphs.text.drug_names import DRUG_TYPES
from graphs.text.medicine_classes import TREATMENT_CLASS
from graphs.text.ner import normalise_term

OTHER_CONDITION_TYPES = frozenset({"Disease"})
TREATMENT_RELATIONS = frozenset({"treats", "indicated_for", "palliates"})

NOT_GIVEN = re.compile(r"\b(?:not|never|no|avoid(?:ed|s)?)\b", re.IGNORECASE)
"""A sentence naming a treatment that is *not* given does not lead: "In most cases, health care providers do
not prescribe corticosteroids for long-term use." would have led "How is Crohn's disease treated?". Nor does
one that opens on a reference back (``key_sentences.ANAPHOR``): "Others require oral medications or insulin"
was said of people with type 2 diabetes, under a type 1 question."""


def treatment_lead(
    kb: KnowledgeBase, question: str, focus: Focus, facts: list[KGFactRec]
) -> Callable[[str], bool] | None:
    """Whether a sentence names a drug the KG lists as treating the question's subject, or a class of
    medicine (:data:`TREATMENT_CLASS`); ``None`` when the question does not ask for treatment."""
    types = {e.get("type", "") for e in focus.entities}
    if "treatment" not in focus.asked or types & DRUG_TYPES or not types & set(DISEASE_TYPES):
        return None
    asked = normalise_term(question)
    drugs = {
        f["entity_id"]
        for f in facts
        if f.get("entity_type") in DRUG_TYPES
        and TREATMENT_RELATIONS.intersection(f.get("relations") or [f.get("relation", "")])
    }

    def names_a_treatment(text: str) -> bool:
        if ANAPHOR.match(text) or NOT_GIVEN.search(text):
            return False
        if drugs and any(drugs.intersection(m.entity_ids) for m in kb.matcher.find_many([text])[0]):
            return True
        if not TREATMENT_CLASS.search(text):
            return False
        # A form of the subject ("bacterial pneumonia" under a pneumonia question) is not another condition.
        others = kg_candidates(kb, asked, focus.ids, [text], OTHER_CONDITION_TYPES)
        return not [name for name in others if not focus.named_in(name)]

    return names_a_treatment
