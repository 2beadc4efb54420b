"""Offline exam questions: score each option on the evidence; name one only when the evidence separates it.

Why a gate and not the top score: on the held-out MCQ sets the highest-scoring option of an evidence
heuristic is right about as often as a guess (1 in 4). Showing such a pick as "best supported" is the worst
defect this product can have, so an option is named only when its lead over the runner-up reaches
:data:`MARGIN`, a threshold chosen on a calibration split and checked on a held-out split
(``python -m evals.mcq_offline``, report in ``evals/reports/mcq_offline.md``). Otherwise the answer says
plainly that the evidence does not decide, and shows the per-option evidence briefly.

Signals, each cheap and each from the real KB (:func:`option_features`):
- ``kg``: a typed KG relation of the kind the question asks for (a drug → treats / indicated_for /
  palliates; a symptom → has_phenotype / has_symptom; a cause → associated_gene …) between an entity named
  in the option and one named in the stem (e.g. allopurinol -treats-> gout);
- ``ir``: option–evidence support on the stem's focus: of the KB passages retrieved for the option, how
  close the best three are to the stem (mean cosine) — passages about the option that are also about the
  question (after the Aristo "IR solver");
- ``dense``: how close the option's text is to the stem's top passages (the old heuristic).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from agent.deps import ConsultDeps
from agent.nodes.mcq_parse import parse_mcq
from graphs.kb import KnowledgeBase
from graphs.model.labels import specific_labels_asked

WEIGHTS = {"kg": 1.0, "ir": 10.0, "dense": 0.0}
"""Linear weights of the signals (``ir``/``dense`` are cosines, so 10 × a 0.01 cosine gap = 0.1)."""
MARGIN = float("inf")
"""Lead over the runner-up needed to name an option; ``inf`` = never name one offline (see module doc)."""
HELD_OUT_NOTE = (
    "on 450 held-out exam questions the top-scoring option was right 29 % of the time, chance being 25 %"
)
"""What the calibration found, shown beside every offline MCQ answer (evals/reports/mcq_offline.md)."""

_NEGATED_STEM = re.compile(r"\b(?:not|except|false|incorrect|least|untrue|never)\b|\bwrong\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z])")
ASKED_RELATIONS: dict[str, tuple[str, ...]] = {
    "treatment": ("treats", "indicated_for", "palliates"),
    "symptoms": ("has_phenotype", "has_symptom"),
    "causes": ("associated_gene", "has_material_basis_in", "results_in", "transmitted_by"),
    "inheritance": ("has_inheritance_pattern", "associated_gene"),
}
"""Evidence label asked (graphs.model.labels cues on the stem's question) → KG relation types answering it."""
IR_PASSAGES = 3
OPTION_PASSAGES = 20


@dataclass
class OptionScore:
    letter: str
    text: str
    kg: float = 0.0
    ir: float = 0.0
    dense: float = 0.0
    score: float = 0.0
    kg_facts: list[str] = field(default_factory=list)
    """KG relations joining the option to the stem, as "head -relation-> tail (source)"."""
    passage_id: str = ""
    """The option's passage closest to the stem; cited only when it is in the consult's evidence."""


@dataclass
class McqJudgement:
    stem: str
    options: list[OptionScore]
    chosen: str | None
    margin: float
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def negated_stem(stem: str) -> bool:
    """Whether the question asks for the odd one out ("Which is NOT …", "all EXCEPT …"): the evidence
    supports the wrong options, so it cannot pick the right one; such questions are never answered offline.
    Only the stem's last sentence (the question itself) is read, because a vignette's "does not smoke"
    negates a finding, not the question."""
    return bool(_NEGATED_STEM.search(question_sentence(stem)))


def question_sentence(stem: str) -> str:
    """The stem's last sentence: in an exam question, the question itself after the vignette."""
    sentences = [s for s in _SENTENCE_END.split(stem.strip()) if s.strip()]
    return sentences[-1] if sentences else ""


def _entity_ids(kb: KnowledgeBase, text: str) -> set[str]:
    return {i for m in kb.matcher.find(text) if not m.negated for i in m.entity_ids}


def asked_relations(stem: str) -> set[str]:
    """The KG relation types that answer what the stem's question asks (a drug → treats…; a symptom →
    has_phenotype…). Empty when the KG has no relation for it (e.g. a diagnostic test)."""
    labels = specific_labels_asked(question_sentence(stem))
    return {rel for label in labels for rel in ASKED_RELATIONS.get(label, ())}


def _kg_facts(kb: KnowledgeBase, stem_ids: set[str], option_ids: set[str], relations: set[str]) -> list[str]:
    """Typed relations of ``relations`` joining an option entity to a stem entity, as readable facts."""
    ids = sorted(option_ids - stem_ids)
    if not ids or not stem_ids or not relations:
        return []
    rels = [
        r
        for r in kb.store.neighbors(ids, "both", relation_types=sorted(relations))
        if (r.head in stem_ids) != (r.tail in stem_ids)
    ]
    if not rels:
        return []
    names = kb.store.get_entities(sorted({r.head for r in rels} | {r.tail for r in rels}))

    def name(i: str) -> str:
        return names[i].name if i in names else i

    return sorted(
        {
            f"{name(r.head)} -{r.relation}-> {name(r.tail)}" + (f" ({r.source})" if r.source else "")
            for r in rels
        }
    )


def kg_signals(kb: KnowledgeBase, stem: str, scores: list[OptionScore]) -> None:
    """Set each option's ``kg`` signal and facts: a KG relation of the asked type to a stem entity."""
    relations = asked_relations(stem)
    stem_ids = _entity_ids(kb, stem)
    for s in scores:
        s.kg_facts = _kg_facts(kb, stem_ids, _entity_ids(kb, s.text), relations)
        s.kg = float(len(s.kg_facts) > 0)


def option_features(kb: KnowledgeBase, stem: str, options: dict[str, str]) -> list[OptionScore]:
    """The raw signals of every option (no weighting, no gate): shared by the answer and the calibration.

    Retrieval here is the judge's own (the stem's top passages; each option's top passages), not the
    consult's ranked evidence, so that the calibration scores exactly what the product shows. A long
    vignette joined with an option embeds as the vignette alone (the model reads 256 word pieces), so the
    option and the stem are embedded apart and met in the passages.
    """
    scores = [OptionScore(letter, text) for letter, text in options.items()]
    kg_signals(kb, stem, scores)
    stem_vec = kb.embed([stem])[0]  # apart from the short options, which would be padded to the stem's length
    opt_vecs = kb.embed([s.text for s in scores])
    stem_top = kb.vectors.get_vectors("evidence", [i for i, _ in kb.vectors.search("evidence", stem_vec, 10)])
    if stem_top:
        sims = np.sort(opt_vecs @ np.stack(list(stem_top.values())).T, axis=1)[:, ::-1][:, :3].mean(axis=1)
        for s, sim in zip(scores, sims.tolist(), strict=True):
            s.dense = float(sim)
    for s, row in zip(scores, kb.vectors.search_many("evidence", opt_vecs, OPTION_PASSAGES), strict=True):
        found = kb.vectors.get_vectors("evidence", [i for i, _ in row])
        if not found:
            continue
        ids = list(found)
        on_stem = np.stack([found[i] for i in ids]) @ stem_vec  # the option's passages, scored on the stem
        order = np.argsort(-on_stem)
        s.ir = float(on_stem[order[:IR_PASSAGES]].mean())
        s.passage_id = ids[int(order[0])]
    return scores


def combine(scores: list[OptionScore], weights: dict[str, float]) -> None:
    """Each option's score: the weighted signals, ``ir``/``dense`` taken relative to the options' mean so
    that only what separates the options counts."""
    for key in ("ir", "dense"):
        mean = float(np.mean([getattr(s, key) for s in scores]))
        for s in scores:
            s.score += weights[key] * (getattr(s, key) - mean)
    for s in scores:
        s.score = round(s.score + weights["kg"] * s.kg, 6)


def decide(stem: str, scores: list[OptionScore], margin: float) -> tuple[str | None, float, str]:
    """(chosen letter or None, the leader's margin over the runner-up, why)."""
    ranked = sorted(scores, key=lambda s: -s.score)
    lead = ranked[0].score - ranked[1].score if len(ranked) > 1 else 0.0
    if negated_stem(stem):
        return None, lead, "the question asks which option is NOT so; supporting evidence cannot pick it"
    if math.isinf(margin):
        return None, lead, "the calibration found no margin at which the offline pick beats chance"
    if lead <= 0 or lead < margin:
        return None, lead, f"no option leads the runner-up by the calibrated margin ({margin:.2f})"
    return ranked[0].letter, lead, f"leads the runner-up by {lead:.2f} (calibrated margin {margin:.2f})"


NO_OPTIONS = "no lettered options were found"
NO_STEM = "the options have no question (stem) before them"


def judge_options(deps: ConsultDeps, question: str) -> McqJudgement:
    """The offline verdict on an exam question's options (none named when there are fewer than two, or no
    question before them: the answer then says what to fix)."""
    parsed = parse_mcq(question)
    if len(parsed.options) < 2:
        return McqJudgement(parsed.stem, [], None, 0.0, NO_OPTIONS)
    if not parsed.has_stem:
        empty = [OptionScore(k, v) for k, v in parsed.options.items()]
        return McqJudgement("", empty, None, 0.0, NO_STEM)
    scores = option_features(deps.kb, parsed.stem, parsed.options)
    combine(scores, WEIGHTS)
    chosen, lead, why = decide(parsed.stem, scores, MARGIN)
    return McqJudgement(parsed.stem, scores, chosen, round(lead, 6), why)


UNDECIDED = "undecided"
"""Status of an exam question whose options the answer does not choose between: "answered" beside "the
evidence does not decide" read as if an option had been settled."""


def mcq_status(status: str, question: str, option: str | None) -> str:
    """An exam question with options but no named option is ``undecided``, whatever the stem's sufficiency
    said: the question asked was which option, and the answer does not say. Without two options (answered
    as an open question) or with a named option the status stands."""
    if option is not None:
        return status
    parsed = parse_mcq(question)
    return UNDECIDED if len(parsed.options) >= 2 and parsed.has_stem else status


def mcq_lines(judgement: McqJudgement | None, evidence_ids: set[str]) -> list[str]:
    """The MCQ block of the offline answer: a named option only when the gate passed, else a plain "the
    evidence does not decide", then one short line of evidence per option."""
    if judgement is None:
        return []
    if judgement.reason == NO_OPTIONS:
        return [
            "**No options found:** this was asked as an exam question, but no lettered options were found. "
            'Write them after the question as "A) … B) … C) …" (one a line or on one line); the evidence '
            "below answers it as an open question.",
            "",
        ]
    if judgement.reason == NO_STEM:
        return [
            "**No question to answer:** the options have no question (stem) before them. Ask again with "
            'the question text first, then the options (e.g. "Which drug lowers uric acid? A) … B) …").',
            "",
        ]
    if judgement.chosen is not None:
        text = next(s.text for s in judgement.options if s.letter == judgement.chosen)
        head = (
            f"**Option {judgement.chosen}** ({text}) is the one the evidence separates: {judgement.reason}."
        )
    else:
        head = (
            f"**The evidence does not decide between the options** (offline mode: {judgement.reason}; "
            f"{HELD_OUT_NOTE}, so no option is named)."
        )
    lines = [head, "", "Evidence per option:"]
    for s in judgement.options:
        kg = "no KG fact of the asked kind"
        if s.kg_facts:
            kg = f"KG: {s.kg_facts[0]}" + (f" (+{len(s.kg_facts) - 1} more)" if len(s.kg_facts) > 1 else "")
        cite = f" [{s.passage_id}]" if s.passage_id in evidence_ids else ""
        lines.append(f"- {s.letter}) {s.text[:80]} — {kg}; passage support {s.ir:.2f}{cite}")
    return [*lines, ""]
