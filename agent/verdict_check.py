"""The rule-based check as a second opinion on an LLM's "insufficient" verdict.

Why: a weak model (Qwen2.5-Coder-1.5B on llama.cpp) rated every verdict 7/10 "insufficient" and listed the
question's own entities as missing although the top passages mention them — so every consult ran three
rounds and seven calls and still answered "Insufficient evidence". The measurable rule
(:func:`agent.nodes.sufficiency.rule_verdict`: entity and label coverage, relevance) is a second opinion:
an LLM "insufficient" that names only entities the evidence already covers is overruled when the rule
finds the evidence sufficient. A gap the evidence really lacks (an entity no top passage mentions), or a
named label or relation type, keeps the LLM's verdict. The reverse case — an LLM "sufficient" over
off-topic evidence — is overruled by ``unrelated_evidence`` in the sufficiency node.
"""

from __future__ import annotations

import re

from agent.state import Verdict

_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _covered(name: str, covered_names: list[str], evidence_text: str) -> bool:
    """True when ``name`` is a question entity the rule found covered, or all its words occur in the
    top evidence (the model named it as missing although a passage mentions it)."""
    key = name.strip().lower()
    if not key:
        return True
    if any(key == c.lower() or key in c.lower() or c.lower() in key for c in covered_names if c):
        return True
    words = _words(key)
    return bool(words) and words <= _words(evidence_text)


def uncovered_gaps(llm: Verdict, covered_names: list[str], evidence_text: str) -> list[str]:
    """The gaps the LLM named that the evidence does not already cover. Labels and relation types it
    names count as gaps as they are (the rule cannot check a relation, and a label gap is a reason to
    search for that label)."""
    gaps = [n for n in llm.get("missing_entities", []) if not _covered(n, covered_names, evidence_text)]
    return gaps + list(llm.get("missing_labels", [])) + list(llm.get("missing_relations", []))


def second_opinion(llm: Verdict, rule: Verdict, covered_names: list[str], evidence_text: str) -> Verdict:
    """``llm`` unchanged, or overruled to sufficient when the rule says sufficient and every gap the LLM
    named is already covered (the reason is recorded in the verdict)."""
    named = llm.get("missing_entities", [])
    if llm.get("sufficient") or not rule.get("sufficient") or not named:
        return llm
    if uncovered_gaps(llm, covered_names, evidence_text):
        return llm
    reason = (
        f"overruled: the LLM rated {llm.get('completeness')}/10 but the rule check finds the evidence "
        f"sufficient ({rule.get('completeness')}/10)"
        + f" and the top passages already cover {', '.join(named[:5])}"
    )
    return {
        **llm,
        "sufficient": True,
        "completeness": max(float(llm.get("completeness", 0)), float(rule.get("completeness", 0))),
        "missing_entities": [],
        "missing_labels": [],
        "reasons": [*llm.get("reasons", [])[:4], reason],
        "method": "llm, overruled by the rule check",
    }
