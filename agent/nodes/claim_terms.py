"""The named things of an undecided claim that no retrieved passage names: what the evidence never checked.

Why: "Colleague says: for a patient with atrial fibrillation and CHA2DS2-VASc of 3, aspirin alone is adequate
stroke prevention." had no verdict, and the evidence lines under it began "Some individuals with AF may have
a lower risk of stroke and may be treated with aspirin, either alone or …". Nothing on the screen said that
no retrieved passage mentions the CHA2DS2-VASc score the claim turns on — a reader could take the aspirin
sentence as covering this patient. An undecided claim now says which of its named things (KG diseases,
drugs and genes the claim mentions; codes, scores and gene-like tokens that carry a digit) appear in none
of the passages retrieved for it or for the turn.
"""

from __future__ import annotations

import re

from agent.nodes.answer_candidates import in_question
from agent.state import EvidenceRec
from graphs.kb import KnowledgeBase
from tools.candidate_terms import is_generic

CODE_LIKE = re.compile(r"(?<![\w-])[A-Za-z][\w-]*\d[\w-]*(?![\w-])")
"""A token that starts with a letter and carries a digit: CHA2DS2-VASc, HbA1c, BRCA1, COVID-19, IL-6."""
NAMED_TYPES = frozenset({"Disease", "Drug", "Compound", "Gene", "Protein"})
"""KG types that name a thing a claim can turn on; not anatomy or symptoms ("by mouth" is a route)."""
MAX_TERMS = 3
MIN_SURFACE = 3


def _squeezed(text: str) -> str:
    """Lower case, letters and digits only: "CHA2DS2-VASc" and "CHA2DS2VASc" are the same score."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def unmentioned_terms(kb: KnowledgeBase, claim_text: str, evidence: list[EvidenceRec]) -> list[str]:
    """The claim's named things (at most ``MAX_TERMS``, in the claim's order) that no passage of
    ``evidence`` names — by any of the entity's KG names (the passage's stored mentions) or by the claim's
    own spelling. Category words ("patient", "disease") never count; empty when ``evidence`` is empty."""
    if not evidence:
        return []
    texts = [e.get("text", "") for e in evidence]
    lowered = " ".join(texts).lower()
    squeezed = _squeezed(" ".join(texts))
    mentioned = {i for ids in kb.store.evidence_entities([e["id"] for e in evidence]).values() for i in ids}
    found: dict[str, int] = {}
    claim_mentions = kb.matcher.find(claim_text)
    types = {
        i: e.type
        for i, e in kb.store.get_entities(sorted({i for m in claim_mentions for i in m.entity_ids})).items()
    }
    for m in claim_mentions:
        surface = m.surface.strip()
        if (
            len(surface) < MIN_SURFACE
            or is_generic(surface)
            or mentioned.intersection(m.entity_ids)
            or not any(types.get(i) in NAMED_TYPES for i in m.entity_ids)
        ):
            continue
        if not in_question(surface.lower(), lowered):  # the whole-word test, for any text
            found.setdefault(surface, m.start)
    for code in CODE_LIKE.finditer(claim_text):
        token = code.group(0)
        if _squeezed(token) not in squeezed and not any(token in s or s in token for s in found):
            found.setdefault(token, code.start())
    return [term for term, _ in sorted(found.items(), key=lambda kv: kv[1])][:MAX_TERMS]
