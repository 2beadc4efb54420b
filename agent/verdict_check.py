"""The rule-based check as a second opinion on an LLM's "insufficient" verdict.

Why: a weak model (Qwen2.5-Coder-1.5B on llama.cpp) rated every verdict 7/10 "insufficient" in a real
10-question run (evals/reports/llm_smoke_after.json) and listed as missing the question's own entities, the
prompt's example labels and relations ("treatment, symptoms, causes, treats") and drugs from its own
hypothesis ("Orphenadrine, Warfarin" for migraine) — although the calibrated rule found passages that answer
the question. Every consult then ran three rounds and still answered "Insufficient evidence".

The measurable rule (:func:`agent.nodes.sufficiency_rule.rule_verdict`, precision of "answered" 42/42 held
out) is the second opinion. When it finds the evidence sufficient, only a gap that is a gap *in answering this
question* keeps the LLM's "insufficient":

* an entity the **question itself names** (all its words are in the question) that the evidence does not
  cover — not a hypothesis guess, not a sub-type the question never asked about ("allergic asthma");
* an **asked aspect** (label) no answering passage carries — a label the question did not ask for is not a
  gap, and a relation type is answered by the aspect the rule already checked.

The reverse case — an LLM "sufficient" over off-topic evidence — is overruled by ``unrelated_evidence`` in
the sufficiency node.
"""

from __future__ import annotations

import re

from agent.state import Verdict

_WORD = re.compile(r"[a-z0-9]+")
_FILLER = frozenset(
    [
        "a",
        "an",
        "and",
        "the",
        "of",
        "for",
        "in",
        "on",
        "to",
        "with",
        "by",
        "or",
        "is",
        "are",
        "what",
        "which",
        "how",
        "information",
        "about",
        "evidence",
    ]
)


def _words(text: str) -> set[str]:
    """Lower-case words with a plural "s" dropped, so "treatments" and "treatment" agree."""
    out = set()
    for w in _WORD.findall(text.lower()):
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out - _FILLER


def _covered(name: str, covered_names: list[str], evidence_text: str) -> bool:
    """True when ``name`` is a question entity the rule found covered, or all its words occur in the
    top evidence (the model named it as missing although a passage mentions it)."""
    key = name.strip().lower()
    if not key:
        return True
    if any(key == c.lower() or key in c.lower() or c.lower() in key for c in covered_names if c):
        return True
    words = _words(key)
    return not words or words <= _words(evidence_text)


def _asked_by_question(name: str, question: str) -> bool:
    """Whether the question itself names ``name`` (every content word of it occurs in the question)."""
    words = _words(name)
    return bool(words) and words <= _words(question)


def uncovered_gaps(
    llm: Verdict,
    question: str,
    covered_names: list[str],
    evidence_text: str,
    open_labels: list[str],
) -> list[str]:
    """The gaps the LLM named that matter for this question: entities the question names and the evidence
    does not cover, and asked labels (``open_labels``: asked, carried by no answering passage) it named."""
    entity_gaps = [
        n
        for n in llm.get("missing_entities", [])
        if _asked_by_question(n, question) and not _covered(n, covered_names, evidence_text)
    ]
    open_words = {label: _words(label) for label in open_labels}
    named = [*llm.get("missing_labels", []), *llm.get("missing_entities", [])]
    label_gaps = [n for n in named if any(_words(n) & words for words in open_words.values())]
    return list(dict.fromkeys(entity_gaps + label_gaps))


def second_opinion(
    llm: Verdict,
    rule: Verdict,
    question: str,
    covered_names: list[str],
    evidence_text: str,
    open_labels: list[str],
) -> Verdict:
    """``llm`` unchanged, or overruled to sufficient when the rule says sufficient and no gap the LLM named
    matters for this question (see the module doc; the reason is recorded in the verdict)."""
    if llm.get("sufficient") or not rule.get("sufficient"):
        return llm
    if uncovered_gaps(llm, question, covered_names, evidence_text, open_labels):
        return llm
    named = [
        *llm.get("missing_entities", []),
        *llm.get("missing_labels", []),
        *llm.get("missing_relations", []),
    ]
    reason = (
        f"overruled: the LLM rated {llm.get('completeness')}/10 but the rule check finds passages that "
        f"answer the question ({rule.get('completeness')}/10)"
        + (f"; what it named as missing ({', '.join(named[:5])}) is covered or not asked" if named else "")
    )
    return {
        **llm,
        "sufficient": True,
        "completeness": max(float(llm.get("completeness", 0)), float(rule.get("completeness", 0))),
        "missing_entities": [],
        "missing_labels": [],
        "missing_relations": [],
        "reasons": [*llm.get("reasons", [])[:4], reason],
        "method": "llm, overruled by the rule check",
    }
