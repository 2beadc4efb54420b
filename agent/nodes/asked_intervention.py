"""The treatment or exposure a short yes/no question asks about: a confidently linked drug, or a concept the
question names in more than one word ("Should a woman with a history of breast cancer take hormone
replacement therapy?" asks about hormone replacement therapy).

Two readers: the asked-detail check (agent/nodes/detail_check.py ``missing_intervention``: the shown evidence
must name it) and the direct answer (agent/nodes/direct_answer.py: the KG's facts are shown only when they
name it — the HRT question, insufficient, still listed "Drugs the KG lists for breast cancer: Tamoxifen …"
under "What the knowledge graph lists for the asked relation").
"""

from __future__ import annotations

import re

from agent.nodes.answer_candidates import YES_NO
from agent.nodes.asked_term import turn_entities
from agent.nodes.focus import is_tentative
from agent.state import ConsultState, EntityRec, KGFactRec
from graphs.text.drug_names import DRUG_TYPES
from tools.candidate_terms import is_generic

INFORMATION_REQUEST = re.compile(r"^\s*do you have (?:any )?information\b", re.IGNORECASE)
"""MedQuAD's overview template ("Do you have information about Healthy Aging"): a request, not a yes/no."""


def names_an_intervention(entity: EntityRec) -> bool:
    """A confident link to a drug, or to a concept the question names in more than one word: "shot" linked
    to "Childhood Immunization" in "Can I still get the shingles shot?" — one loose word is no name to hold
    the evidence to."""
    surface = entity.get("surface", "")
    kind = entity.get("type")
    wordy = kind == "Concept" and len(surface.split()) > 1
    return (kind in DRUG_TYPES or wordy) and not is_tentative(entity) and not is_generic(surface)


def asked_interventions(state: ConsultState, question: str) -> list[EntityRec]:
    """The linked treatments a yes/no ``question`` asks about (none for another kind of question, or for
    MedQuAD's "Do you have information about …")."""
    if not question or not YES_NO.search(question) or INFORMATION_REQUEST.search(question):
        return []
    return [e for e in turn_entities(state) if names_an_intervention(e)]


def names_the_asked_intervention(state: ConsultState, question: str, facts: list[KGFactRec]) -> bool:
    """Whether ``facts`` may be shown for ``question``: it asks about no linked treatment, or they name
    one."""
    asked = asked_interventions(state, question)
    if not asked:
        return True
    # A drug can be one KG node under two ids (DrugBank and a label's): its name says it is the same drug.
    keys = {e["id"] for e in asked} | {e.get("name", "").lower() for e in asked}
    return any(f.get("entity_id") in keys or f.get("entity_name", "").lower() in keys for f in facts)
