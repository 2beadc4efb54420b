"""The compact answer prompt: the top evidence *sentences* with their ids, not whole passages.

Why: the full answer prompt was ~2,400 tokens (12 passages + chains) — about 90 s of prompt processing for
a 1.5B model on a busy CPU — and a weak model copied five sentences of a symptoms passage for a treatment
question. Giving it the few sentences most similar to the question (each tagged with its passage id)
makes the prompt ~4× shorter and puts the answer-bearing sentence first.

The sentences are the ones the offline direct answer shows (``agent.nodes.key_sentences``: about the
question's focus, aspect-aware, MMR-diverse). A question without a focus entity (an exam vignette, a
question the KB cannot link) falls back to a plain selector here: sentence split + cosine to the question,
at most two per passage.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from agent.deps import ConsultDeps
from agent.nodes.focus import question_focus
from agent.nodes.key_sentences import select_key_sentences
from agent.nodes.retrieval import search_question
from agent.nodes.sentence_text import readable
from agent.state import ChainRec, ConsultState, EvidenceRec
from graphs.model.labels import specific_labels_asked
from prompts import render_prompt

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])")
MAX_SENTENCES = 8
PROMPT_WORDS = 200
"""Words of key sentences in the answer prompt: more than the offline block's 60, a model can weigh them."""
MAX_SENTENCE_CHARS = 320
PASSAGES_CONSIDERED = 8


def split_sentences(text: str) -> list[str]:
    """Sentences of a passage (a plain rule: end punctuation followed by a capital or digit)."""
    flat = " ".join(text.split())
    return [s.strip() for s in SENTENCE_END.split(flat) if len(s.strip()) >= 20]


def key_sentences(
    deps: ConsultDeps, question: str, evidence: list[EvidenceRec], limit: int = MAX_SENTENCES
) -> list[tuple[str, str]]:
    """``(evidence id, sentence)`` pairs: the sentences of the top passages most similar to the question,
    at most two per passage so one long passage cannot fill the prompt."""
    pairs = [(e["id"], s) for e in evidence[:PASSAGES_CONSIDERED] for s in split_sentences(e["text"])]
    if not pairs:
        return []
    vecs = deps.kb.embed([question, *[s for _, s in pairs]])
    sims = vecs[1:] @ vecs[0]
    order = np.argsort(-sims, kind="stable")
    chosen: list[tuple[str, str]] = []
    per_passage: dict[str, int] = {}
    for i in order:
        eid, sentence = pairs[int(i)]
        if per_passage.get(eid, 0) >= 2:
            continue
        per_passage[eid] = per_passage.get(eid, 0) + 1
        chosen.append((eid, sentence[:MAX_SENTENCE_CHARS]))
        if len(chosen) >= limit:
            break
    return chosen


def answer_sentences(deps: ConsultDeps, state: ConsultState) -> list[tuple[str, str]]:
    """The key sentences of the direct answer, or the plain selector's when the question has no focus."""
    evidence = state.get("evidence", [])
    question = search_question(state)  # a follow-up ("how is it treated?") with the subject it continues
    focus = question_focus(deps.kb, state)
    picked = select_key_sentences(deps.kb, question, focus, evidence, MAX_SENTENCES, PROMPT_WORDS)
    if picked:
        return [(k.evidence_id, readable(k.text)[:MAX_SENTENCE_CHARS]) for k in picked]
    return key_sentences(deps, question, evidence)


SUFFICIENT_LINE = "The evidence check found sentences above that answer this question: answer from them."
INSUFFICIENT_LINE = (
    "The evidence check found that the sentences above do not fully answer this question: start with "
    '"Insufficient evidence:", say what is missing, then what the sentences do establish.'
)


def verdict_line(state: ConsultState) -> str:
    """The verdict in words a small model follows. Why not "completeness 8/10": a real 1.5B model read the
    old "if the sentences do not answer, write Insufficient evidence" rule as an invitation and declined
    10/10 questions, hypothyroidism symptoms included, although the check had found answering passages."""
    return SUFFICIENT_LINE if state.get("verdict", {}).get("sufficient") else INSUFFICIENT_LINE


def compact_answer_prompt(
    deps: ConsultDeps,
    state: ConsultState,
    condition: str,
    question: str,
    task_rules: str,
    chains: list[ChainRec] | None = None,
) -> str:
    """The answer prompt built from key sentences and ``chains`` (default: the consult's top three)."""
    sentences = answer_sentences(deps, state)
    chains = state.get("chains", [])[:3] if chains is None else chains
    fields: dict[str, Any] = {
        "condition": condition,
        "question": question,
        "sentences": "\n".join(f"[{eid}] {text}" for eid, text in sentences) or "(none)",
        "chains": "\n".join(f"[{c['id']}] {c['text']}" for c in chains) or "(none)",
        "asked": ", ".join(specific_labels_asked(state.get("question", ""))) or "what the question names",
        "verdict": verdict_line(state),
        "max_words": 150,
        "task_rules": task_rules,
    }
    return render_prompt("answer_compact", **fields)
