"""``check_claims``: a colleague's reply checked claim by claim (supported, contradicted, no evidence found).

Why a node of its own: a reply check that shows "what the evidence says about aspirin" above an "answered"
status reassured a reader about a reply the evidence contradicts (issue 22). Here the reply is split into
atomic claims (``graphs.text.claims``); each claim, as the yes/no question of its positive form, gets its
own retrieval (the ``evidence_rank`` tool, seeded with the turn's passages) and the trained claim checker
(``graphs.vectors.claim_checker``) reads it against short windows of the best passages. A claim is called
supported or contradicted only when the strongest window's probability reaches the threshold calibrated
for precision (``data/claims/claims.json``); otherwise "no evidence found". A negated claim ("X is *not*
effective") is checked as its positive form and the verdict flipped.

The node does nothing for other tasks. Offline and with an LLM alike the verdicts lead the answer.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from agent.context import ConsultContext
from agent.deps import ConsultDeps
from agent.nodes.claim_kg import KGVerdict, claim_subject, kg_verdict, named_conditions, named_disease
from agent.nodes.claim_restatement import restated, written_as
from agent.nodes.claim_terms import unmentioned_terms
from agent.nodes.common import emit, step
from agent.nodes.direct_answer import one_hop_chain
from agent.nodes.focus import Focus, sentences
from agent.nodes.other_condition import about_other_condition
from agent.nodes.rank import ranked_records
from agent.state import ChainRec, ClaimVerdictRec, ConsultState, EvidenceRec, ReplyCheckRec
from graphs.text.claims import Claim, split_reply
from graphs.vectors.claim_checker import (
    CONTRADICTED,
    NOT_ENOUGH,
    SUPPORTED,
    ClaimChecker,
    ClaimThresholds,
    get_claim_checker,
)
from graphs.vectors.reader import ReaderUnavailable
from tools.evidence_rank import EvidenceRankRequest, evidence_rank
from tools.ranking import content_words

MAX_CLAIMS = 8
"""Claims checked per reply; the rest are counted and named as not checked (a 50-claim paste stays fast)."""
PASSAGES_PER_CLAIM = 4
WINDOW_SENTENCES = 2
"""Sentences per window read against the claim: BioASQ snippets, the checker's training evidence, are one
or two sentences; a whole fact sheet dilutes the one sentence that decides."""
WINDOWS_PER_PASSAGE = 3
SHORT_PASSAGE_WORDS = 90
"""A passage this short is read whole, as one window."""
SEED_PASSAGES = 10
"""The turn's own best passages, offered to each claim's ranking as candidates."""
SUPPORTED_WORD, CONTRADICTED_WORD, NONE_WORD = "supported", "contradicted", "no evidence found"
RESTATED = "restatement"
"""``decided_by`` of a verdict a passage gives in the claim's own words (agent/nodes/claim_restatement.py)."""
DISAGREE = "kg and passage disagree"
"""``decided_by`` of a claim left undecided because the KG and a restating passage say opposite things."""


def windows(text: str) -> list[str]:
    """The passage as the checker reads it: whole when short, else its first windows of two sentences."""
    if len(text.split()) <= SHORT_PASSAGE_WORDS:
        return [text]
    spans = sentences(text)
    out: list[str] = []
    for start in range(0, len(spans), WINDOW_SENTENCES):
        chunk = spans[start : start + WINDOW_SENTENCES]
        out.append(text[chunk[0][0] : chunk[-1][1]])
        if len(out) == WINDOWS_PER_PASSAGE:
            break
    return out


def _passages_for(deps: ConsultDeps, claim: Claim, seeds: list[str]) -> list[EvidenceRec]:
    request = EvidenceRankRequest(question=claim.question, candidate_ids=seeds, top_k=PASSAGES_PER_CLAIM)
    return ranked_records(deps, list(evidence_rank(deps.kb, request).evidence))


def closest_window(claim: Claim, texts: list[str], probs: Any, off_subject: list[bool]) -> int | None:
    """The window to quote under an undecided claim: the checker's strongest reading among windows that
    share a content word with the claim itself (when the checker reads it as bearing on the claim), else
    among all; never one about a sibling of the claim's condition (``off_subject``), and ``None`` when only
    those are left.

    Why: "NSAIDs do not help" (checked as "Do NSAIDs help in gout?") was quoted against "This chemical is
    believed to play a role in the inflammation of gout" while a retrieved window named NSAIDs — the
    checker's argmax carries no verdict here, so a quote on the claim's own subject serves the reader. And
    "hepatitis A usually becomes a chronic infection" was quoted against "Most hepatitis C infections
    become chronic" (agent/nodes/other_condition.py), and "the flu is treated with antibiotics" against
    "Bacterial pneumonia is treated with medicines called antibiotics" (the caller marks a window that
    neither names the claim's condition nor comes from a page titled with it as off the subject)."""
    words = {w.lower() for w in content_words(claim.text) if len(w) >= 4}
    strength = probs[:, SUPPORTED:].max(axis=1)
    allowed = [i for i in range(len(texts)) if not off_subject[i]]
    if not allowed:
        return None
    sharing = [i for i in allowed if words & {w.lower() for w in content_words(texts[i])}]
    overall = max(allowed, key=lambda i: float(strength[i]))
    if sharing:
        best = max(sharing, key=lambda i: float(strength[i]))
        if probs[best, NOT_ENOUGH] < strength[best]:  # the checker reads it as bearing on the claim
            return best
    return overall


def off_claim_subject(subject: Focus, texts: list[str], titles: list[str], sibling: list[bool]) -> list[bool]:
    """For each window, whether it is off the claim's subject: about a sibling condition (``sibling``), or,
    when the claim names a condition, neither naming it nor from a page whose title names it ("Bacterial
    pneumonia is treated with medicines called antibiotics" under "the flu is treated with antibiotics")."""
    if not subject.entities:
        return sibling
    return [
        off or not (subject.named_in(text) or subject.named_in(title))
        for off, text, title in zip(sibling, texts, titles, strict=True)
    ]


def judge(support: float, contradiction: float, limits: ClaimThresholds) -> int | None:
    """The called class of the positive claim, or ``None``: the stronger direction, if it reaches its
    calibrated threshold."""
    if contradiction >= limits.contradicted and contradiction >= support:
        return CONTRADICTED
    if support >= limits.supported and support >= contradiction:
        return SUPPORTED
    return None


def verdict_word(called: int | None, negated: bool) -> str:
    """The verdict on the claim as stated: the positive form's called class, reversed when the claim denies
    it ("not effective" is contradicted by "effective")."""
    if called is None:
        return NONE_WORD
    if negated:
        called = SUPPORTED if called == CONTRADICTED else CONTRADICTED
    return SUPPORTED_WORD if called == SUPPORTED else CONTRADICTED_WORD


def decide_by_kg(deps: ConsultDeps, claim: Claim, record: ClaimVerdictRec) -> list[ChainRec]:
    """When the checker gave no verdict, the KG's (agent/nodes/claim_kg.py), cited as one-hop chains."""
    # The question, not the text: it names the subject a pronoun stood for ("It is X-linked" → "Is cystic
    # fibrosis X-linked?") and has no negation cue of its own (the claim's is handled by ``negated``).
    found = kg_verdict(deps.kb, claim.question, claim.negated)
    if found is None:
        return []
    record["verdict"] = found.verdict
    record["decided_by"] = "knowledge graph"
    return cite_kg(found, record)


def cite_kg(found: KGVerdict, record: ClaimVerdictRec) -> list[ChainRec]:
    """The KG facts of a verdict as one-hop chains, written into ``record`` (chain ids, fact texts)."""
    chains = [one_hop_chain(fact) for fact in found.facts]
    record["chain_ids"] = [c["id"] for c in chains]
    record["kg_facts"] = [f"{fact.text} ({fact.source.replace('|', ', ')})" for fact in found.facts]
    return chains


def overruled_by_kg(deps: ConsultDeps, claim: Claim, record: ClaimVerdictRec) -> list[ChainRec]:
    """A restatement the curated KG contradicts is no verdict: both are shown, and the clinician decides.

    Why: "metformin is used to treat type 2 diabetes" was *contradicted* by the words of "No medication,
    including metformin, is approved … to treat insulin resistance or prediabetes or to prevent type 2
    diabetes", while PharmacotherapyDB and LabeledIn list metformin for type 2 diabetes. The restatement rule
    reads words, the KG edge a curated relation; when they disagree neither is a verdict."""
    found = kg_verdict(deps.kb, claim.question, claim.negated)
    if found is None or found.verdict == record["verdict"]:
        return []
    record["restated_verdict"] = record["verdict"]
    record["verdict"] = NONE_WORD
    record["decided_by"] = DISAGREE
    return cite_kg(found, record)


def in_reply_context(deps: ConsultDeps, claims: list[Claim]) -> list[tuple[Claim, bool]]:
    """Each claim, a claim that names no disease checked as about the last disease an earlier claim named.

    Why: a reply says its subject once — "croup is caused by bacteria, so antibiotics are the first-line
    treatment and steroids do not help" — and its later claims, split apart, lost it: "Do steroids help?"
    was read against a psoriasis passage. The claim as shown stays the colleague's words; the question the
    checker and the retrieval read becomes "Do steroids help in croup?", and the line says so.
    """
    out: list[tuple[Claim, bool]] = []
    condition: str | None = None
    for claim in claims:
        named = named_disease(deps.kb, claim.question)
        condition = named or condition
        if named is not None or condition is None:
            out.append((claim, False))
        else:
            question = claim.question.rstrip().rstrip("?").rstrip()
            out.append((claim.model_copy(update={"question": f"{question} in {condition}?"}), True))
    return out


def check_claim(
    deps: ConsultDeps,
    checker: ClaimChecker,
    claim: Claim,
    seeds: list[str],
    turn_evidence: list[EvidenceRec] | None = None,
) -> tuple[ClaimVerdictRec, list[EvidenceRec]]:
    """One claim's verdict, with the (at most two) passages that decide it, and those passages. An
    undecided claim also records its named things that neither its passages nor ``turn_evidence`` name."""
    passages = _passages_for(deps, claim, seeds)
    owners: list[int] = []
    texts: list[str] = []
    for n, passage in enumerate(passages):
        for window in windows(passage["text"]):
            owners.append(n)
            texts.append(window)
    probs = checker.class_probabilities(claim.question, texts)
    record: ClaimVerdictRec = {
        "text": claim.text,
        "question": claim.question,
        "negated": claim.negated,
        "hedged": claim.hedged,
        "verdict": NONE_WORD,
        "evidence_ids": [],
        "passages_read": len(passages),
    }
    if not texts:
        return record, []
    support, contradiction = float(probs[:, SUPPORTED].max()), float(probs[:, CONTRADICTED].max())
    record["support"] = round(support, 3)
    record["contradiction"] = round(contradiction, 3)
    limits = checker.thresholds
    called = judge(support, contradiction, limits)
    if called is None:
        said = restated(
            claim.question,
            [p["text"] for p in passages],
            claim.hedged,
            [p.get("title", "") for p in passages],
            named_conditions(deps.kb, claim.question),
            lambda text: ((m.surface, frozenset(m.entity_ids)) for m in deps.kb.matcher.find(text)),
        )
        if said is not None:  # a passage says the claim in its own words, affirmed or negated
            record["verdict"] = verdict_word(SUPPORTED if said.affirms else CONTRADICTED, claim.negated)
            record["decided_by"] = RESTATED
            record["evidence_ids"] = [passages[said.passage]["id"]]
            record["quotes"] = [said.sentence]
            if said.opposite is not None:  # the claim's word as the reply wrote it, not as the question
                record["opposite"] = [written_as(said.opposite[0], claim.text), said.opposite[1]]
            return record, [passages[said.passage]]
        unchecked = unmentioned_terms(deps.kb, claim.text, [*passages, *(turn_evidence or [])])
        if unchecked:
            record["unmentioned"] = unchecked
        subject = claim_subject(deps.kb, claim.text)
        titles = [passages[owner].get("title", "") for owner in owners]
        off_subject = off_claim_subject(
            subject, texts, titles, about_other_condition(deps.kb, subject, texts)
        )
        best = closest_window(claim, texts, probs, off_subject)
        if best is None or probs[best, NOT_ENOUGH] >= probs[best, SUPPORTED:].max():
            # The checker's own reading: not even this window bears on the claim ("ibuprofen for fever"
            # quoted a Crimean-Congo fever passage). An unrelated quote under a claim only misleads.
            return record, []
        record["closest"] = {"evidence_id": passages[owners[best]]["id"], "quote": texts[best]}
        return record, [passages[owners[best]]]  # cited in the line, so it joins the turn's evidence
    limit = limits.supported if called == SUPPORTED else limits.contradicted
    deciding: list[int] = []
    for i in (int(i) for i in probs[:, called].argsort()[::-1]):
        if probs[i, called] >= limit and owners[i] not in {owners[j] for j in deciding}:
            deciding.append(i)
        if len(deciding) == 2:
            break
    record["verdict"] = verdict_word(called, claim.negated)
    record["probability"] = round(float(probs[deciding[0]].max()), 3)
    record["evidence_ids"] = [passages[owners[i]]["id"] for i in deciding]
    record["quotes"] = [texts[i] for i in deciding]
    return record, [passages[owners[i]] for i in deciding]


def check_reply(
    deps: ConsultDeps, reply: str, turn_evidence: list[EvidenceRec]
) -> tuple[ReplyCheckRec, list[EvidenceRec], list[ChainRec]]:
    """The reply's verdict table, and the passages and KG chains it cites (to join the turn's evidence and
    chains, so every citation is of something retrieved)."""
    parts = split_reply(reply, max_claims=MAX_CLAIMS)
    table: ReplyCheckRec = {
        "claims": [],
        "left_out": parts.left_out,
        "not_checkable": parts.not_checkable[:5],
        "problem": parts.problem or "",
        "method": "claim checker",
    }
    if parts.problem in ("no_claim", "question", "not_english") or not parts.claims:
        return table, [], []
    try:
        checker = get_claim_checker()
    except ReaderUnavailable as exc:
        table["method"] = "unavailable"
        table["problem"] = f"the claim checker is unavailable ({exc})"
        return table, [], []
    limits = checker.thresholds
    table["thresholds"] = {"supported": limits.supported, "contradicted": limits.contradicted}
    seeds = [e["id"] for e in turn_evidence[:SEED_PASSAGES]]
    cited: dict[str, EvidenceRec] = {}
    chains: dict[str, ChainRec] = {}
    for claim, carried in in_reply_context(deps, parts.claims):
        record, passages = check_claim(deps, checker, claim, seeds, turn_evidence)
        record["context_carried"] = carried
        if record["verdict"] == NONE_WORD:
            chains.update((c["id"], c) for c in decide_by_kg(deps, claim, record))
            if record["verdict"] != NONE_WORD:  # the KG decided it: what the passages lack says nothing
                record.pop("unmentioned", None)
        elif record.get("decided_by") == RESTATED:
            chains.update((c["id"], c) for c in overruled_by_kg(deps, claim, record))
        table["claims"].append(record)
        for passage in passages:
            cited.setdefault(passage["id"], passage)
    return table, list(cited.values()), list(chains.values())


def verdict_counts(table: ReplyCheckRec) -> dict[str, int]:
    counts = {SUPPORTED_WORD: 0, CONTRADICTED_WORD: 0, NONE_WORD: 0}
    for claim in table.get("claims", []):
        counts[claim.get("verdict", NONE_WORD)] += 1
    return counts


def reply_status(table: ReplyCheckRec) -> str:
    """A reply check's status is its verdicts: contradicted if any claim is, supported if every claim is,
    otherwise unverified (never a bare "answered")."""
    counts = verdict_counts(table)
    if counts[CONTRADICTED_WORD]:
        return "contradicted"
    if table.get("claims") and counts[SUPPORTED_WORD] == len(table["claims"]):
        return "supported"
    return "unverified"


def make_check_claims(deps: ConsultDeps):  # type: ignore[no-untyped-def]
    def check_claims(state: ConsultState, runtime: Runtime[ConsultContext]) -> dict[str, Any]:
        if state.get("task") != "check_reply":
            return {}
        started = time.perf_counter()
        evidence = state.get("evidence", [])
        table, cited, chains = check_reply(deps, state["question"], evidence)
        known = {e["id"] for e in evidence}
        counts = verdict_counts(table)
        summary = ", ".join(f"{n} {word}" for word, n in counts.items())
        emit(runtime, "check_claims", summary=summary)
        return {
            "reply_check": table,
            "evidence": [*evidence, *(e for e in cited if e["id"] not in known)],
            "chains": chains,
            "trace": [
                step(
                    state,
                    "check_claims",
                    f"{len(table['claims'])} claims: {summary}",
                    seconds=round(time.perf_counter() - started, 3),
                )
            ],
        }

    return check_claims


REPLY_CHECK_HEADING = "### The reply, claim by claim"
QUOTE_CHARS = 260
PROBLEM_LINES = {
    "no_claim": "**No checkable claim was found in the reply** (nothing states a clinical fact). Paste the "
    'colleague\'s statement itself, e.g. "Colleague says: metformin is first-line for type 2 diabetes".',
    "question": "**The reply is a question, not a claim**, so there is nothing to check. Ask it as a "
    "question (task `clinical`) to get an answer from the evidence.",
    "not_english": "**The reply does not look like English**, and EviGraph's evidence and claim checker are "
    "English: its claims were not checked. Restate them in English to have them checked.",
}
_MARKS = {
    SUPPORTED_WORD: "✓ **Supported**",
    CONTRADICTED_WORD: "✗ **Contradicted**",
    NONE_WORD: "? **No verdict**",
}
KG_NOTE = (
    "_A verdict above comes from a curated knowledge-graph edge (an inheritance pattern, a drug's listed "
    "indication or non-indication, or how a disease spreads or what causes it), cited as its chain; the "
    "graph does not rank drugs (\u201cfirst-line\u201d is never decided by it)._"
)
RESTATED_NOTE = (
    "_A verdict above without a checker probability comes from a passage sentence that holds every word "
    "of the claim (an entity may be named by another of its KG names, a common paraphrase by its other "
    "form): supported when it says them plainly, contradicted when a negation (\u201cnot\u201d, "
    "\u201cno\u201d, \u201ccannot\u201d) covers them or when it says one of them the other way round "
    "(\u201crecessive\u201d for \u201cdominant\u201d, \u201crarely\u201d for \u201cusually\u201d, a "
    "comparison reversed) (right on 127 of 128 labelled calibration claims, 13 of 13 held out). Read the "
    "quote: the rule reads words, not meaning._"
)
NEVER_CALLED_NOTE = (
    "_**The claim checker decides no claim:** on labelled calibration claims it did not reach the "
    "precision a verdict needs (≥ 0.9), so it gives none. Each undecided claim shows the passage that bears "
    "on it most — read it before relying on the reply._"
)


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= QUOTE_CHARS else flat[:QUOTE_CHARS].rsplit(" ", 1)[0] + "…"


def reply_check_lines(table: ReplyCheckRec) -> list[str]:
    """The verdict table as Markdown lines: one numbered line per claim, its deciding quotes cited."""
    problem = table.get("problem", "")
    claims = table.get("claims", [])
    if not claims:
        note = PROBLEM_LINES.get(problem) or f"**The reply was not checked claim by claim**: {problem}."
        return [REPLY_CHECK_HEADING, note, ""]
    lines = [REPLY_CHECK_HEADING]
    for n, claim in enumerate(claims, 1):
        verdict = claim.get("verdict", NONE_WORD)
        line = f"{n}. {_MARKS[verdict]} — \u201c{claim['text']}\u201d"
        if claim.get("decided_by") == "knowledge graph":
            facts = zip(claim.get("kg_facts", []), claim.get("chain_ids", []), strict=False)
            line += " — by the knowledge graph: " + "; ".join(f"{fact} [{cid}]" for fact, cid in facts)
        elif claim.get("decided_by") == RESTATED:
            quotes = zip(claim.get("quotes", []), claim.get("evidence_ids", []), strict=False)
            said = "the passage says it in the claim's own words"
            if opposite := claim.get("opposite"):
                theirs, ours = (f"\u201c{w}\u201d" for w in opposite)
                said = f"the passage says it with {ours} where the claim says {theirs}"
            line += f" — {said}: " + "; ".join(f"\u201c{_quote(q)}\u201d [{i}]" for q, i in quotes)
        elif claim.get("decided_by") == DISAGREE:
            facts = zip(claim.get("kg_facts", []), claim.get("chain_ids", []), strict=False)
            quotes = zip(claim.get("quotes", []), claim.get("evidence_ids", []), strict=False)
            line += (
                ": the evidence disagrees — the knowledge graph lists "
                + "; ".join(f"{fact} [{cid}]" for fact, cid in facts)
                + f", while a passage's words read as {claim.get('restated_verdict', '').lower()}: "
                + "; ".join(f"\u201c{_quote(q)}\u201d [{i}]" for q, i in quotes)
            )
        elif verdict == NONE_WORD:
            closest = claim.get("closest")
            line += (
                ": no retrieved passage decides it at the calibrated precision"
                if closest
                else ": the claim checker read no retrieved passage as deciding it"
            )
            if closest:
                quote, cited = _quote(closest["quote"]), closest["evidence_id"]
                line += f" (closest, not a verdict: \u201c{quote}\u201d [{cited}])"
            if unchecked := claim.get("unmentioned"):
                named = ", ".join(f"\u201c{term}\u201d" for term in unchecked)
                line += f"; no retrieved passage mentions {named}"
        else:
            quotes = zip(claim.get("quotes", []), claim.get("evidence_ids", []), strict=False)
            line += " — " + "; ".join(f"\u201c{_quote(q)}\u201d [{i}]" for q, i in quotes)
            line += f" (checker probability {claim.get('probability', 0):.2f})"
        notes = []
        if claim.get("negated"):
            notes.append(
                f"checked as \u201c{claim['question']}\u201d and the answer reversed, as the claim denies it"
            )
        elif claim.get("context_carried"):
            notes.append(f"checked as \u201c{claim['question']}\u201d, the disease an earlier claim names")
        if claim.get("hedged"):
            notes.append("the claim is hedged")
        if notes:
            line += f" _({'; '.join(notes)})_"
        lines.append(line)
    lines.append("")  # the notes below are paragraphs, not part of the last numbered item
    if table.get("left_out"):
        left = table["left_out"]
        lines.append(
            f"_{left} more claim{'s were' if left != 1 else ' was'} not checked: only the first "
            f"{len(claims)} are. Ask about the rest in a follow-up._"
        )
    limits = table.get("thresholds", {})
    if limits and min(limits.values()) > 1.0:
        if any(c.get("verdict", NONE_WORD) == NONE_WORD for c in claims):  # else it explains nothing shown
            lines.append(NEVER_CALLED_NOTE)
        if any(c.get("decided_by") == "knowledge graph" for c in claims):
            lines += ["", KG_NOTE]
        if any(c.get("decided_by") == RESTATED for c in claims):
            lines += ["", RESTATED_NOTE]
        return [*lines, ""]
    lines.append(
        "_A verdict is given only where the claim checker reaches its calibrated threshold; "
        "\u201cno evidence found\u201d means the knowledge base did not decide the claim, not that it is "
        "false._"
    )
    return [*lines, ""]
