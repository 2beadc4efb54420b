"""For a differential that the evidence does not answer: the conditions the closest passages describe, each
with the case's findings its passages name — a list to consider, never a diagnosis.

Why: "A 3-year-old has a barking cough, hoarse voice and noisy breathing at night after a cold. What could
it be?" retrieved the croup page first, and the answer said only "Insufficient evidence … best: 'It causes
difficulty breathing, a barking cough, and a hoarse voice.'" — the clinician had to read the passages to
learn that they were about croup. A differential asks which condition fits; what retrieval found is a set
of condition pages, and which of the case's findings each of them names is a fact about the evidence that
can be shown and cited. The verdict is unchanged (still insufficient: no model here is calibrated to say
which condition it is), and the block says so in its heading.

How: the first :data:`READ_PASSAGES` ranked passages are grouped by their page's subject (the evidence
unit's keyword entity) when that subject is a disease and not itself one of the case's findings (a "Cough"
page is about the finding). A condition is listed when its passages name at least one finding (the
question's affirmed entities: by the KB's mention index or by name), in the order retrieval ranked its first
passage, at most :data:`MAX_CONDITIONS`. Measured on MedQA-USMLE differentials whose diagnosis has a page
(evals/differential_retrieval.py, evals/reports/differential_retrieval.md).
"""

from __future__ import annotations

import re
from collections import OrderedDict

from agent.nodes.focus import Focus
from agent.state import ConditionRec, EntityRec, EvidenceRec
from graphs.kb import KnowledgeBase

READ_PASSAGES = 10
MAX_CONDITIONS = 4
CONDITION_TYPES = frozenset({"Disease"})
"""Page subjects listed as conditions; a symptom's own page ("Fatigue") is not a condition to consider."""
HEADING = "Conditions the closest passages describe (to consider — not a diagnosis)"


def conditions_described(kb: KnowledgeBase, focus: Focus, evidence: list[EvidenceRec]) -> list[ConditionRec]:
    """The conditions whose pages the best-ranked passages are, with the findings they name (module doc)."""
    read = evidence[:READ_PASSAGES]
    if not focus.entities or not read:
        return []
    subjects = kb.store.get_entities(sorted({e.get("keyword_entity", "") for e in read} - {""}))
    mentioned = kb.store.evidence_entities([e["id"] for e in read])
    by_name = {
        f["id"]: re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b", re.IGNORECASE)
        for f in focus.entities
        if (names := focus.names.get(f["id"]))
    }
    listed: OrderedDict[str, ConditionRec] = OrderedDict()
    for passage in read:
        subject = subjects.get(passage.get("keyword_entity", ""))
        if subject is None or subject.type not in CONDITION_TYPES or subject.id in focus.ids:
            continue
        found = [
            finding_name(f)
            for f in focus.entities
            if f["id"] in mentioned.get(passage["id"], [])
            or (f["id"] in by_name and by_name[f["id"]].search(passage.get("text", "")))
        ]
        if not found:
            continue
        if subject.id not in listed and len(listed) == MAX_CONDITIONS:
            continue
        condition = listed.setdefault(
            subject.id, {"entity_id": subject.id, "name": subject.name, "findings": [], "evidence_ids": []}
        )
        condition["findings"] = list(dict.fromkeys([*condition["findings"], *found]))
        if len(condition["evidence_ids"]) < 2:
            condition["evidence_ids"].append(passage["id"])
    return list(listed.values())


def finding_name(entity: EntityRec) -> str:
    """The finding as the question wrote it ("hoarse voice"), else the KG's name, in lower case."""
    return str(entity.get("surface") or entity.get("name") or "").strip().lower()


def condition_lines(conditions: list[ConditionRec]) -> list[str]:
    """ "- **Croup** — its passages name cough, hoarse voice [E:…]", one line per condition."""
    return [
        f"- **{c['name'][:1].upper() + c['name'][1:]}** — its passages name {', '.join(c['findings'])} "
        + "".join(f"[{i}]" for i in c["evidence_ids"])
        for c in conditions
    ]
