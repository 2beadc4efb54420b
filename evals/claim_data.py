"""Training pairs for the claim checker (claim + evidence → supported / contradicted / not enough).

Why here: a reply check must say whether the evidence *supports* or *contradicts* a colleague's claim, and
"answers the question" (the evidence reader) cannot tell those apart. ``../shared/data`` labels exactly this
for yes/no questions: BioASQ yes/no questions with gold snippets and an exact yes/no answer, and PubMedQA
PQA-L questions with their abstracts and an expert yes/no/maybe decision. A claim is checked as the yes/no
question of its positive form (``graphs.text.claims.question_form``), so the pairs keep the question form.

Labels: ``0`` = not enough (a PubMedQA "maybe", or evidence about something else), ``1`` = supported (the
question's answer is yes), ``2`` = contradicted (no).

* **BioASQ 7b–10b yes/no** — the same questions the evidence reader may train on (every evaluation and
  calibration question, and any question sharing a text, gold snippet or gold document with one, is
  excluded: :func:`evals.reader_data.exclusions`): each gold snippet, and the first three gold snippets
  joined, labelled by the exact answer; the top BM25 snippets of other documents are "not enough".
* **PubMedQA PQA-L, the 500 outside the official test split**: the long answer (the abstract's conclusion)
  and each results paragraph, labelled by the final decision (maybe → not enough); BM25 paragraphs of other
  abstracts are "not enough".

The official PubMedQA test split (whose 100 ``pubmedqa_dev`` questions are an evaluation set) and the
BioASQ evaluation questions are never used here: they make the calibration and benchmark claims
(:mod:`evals.claim_sets`). ``data/claims/CARD.md`` states the split; ``tests/test_claim_data.py`` checks it.

Usage: ``python -m evals.claim_data --out /tmp/evigraph-claims/pairs.jsonl [--seed 13]``.
"""

from __future__ import annotations

import argparse
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evals.reader_data import (
    Exclusions,
    _cut,
    _pair,
    _rows,
    _snippet_pool,
    _training_questions,
    dev_split,
    exclusions,
    normalise_question,
    pubmedqa_pool,
    pubmedqa_training,
    write_manifest,
    write_pairs,
)
from graphs.model.settings import Settings, load_settings
from graphs.text.claims import question_form

REPO = Path(__file__).resolve().parent.parent
MANIFEST = REPO / "data" / "claims" / "training_questions.jsonl.gz"
"""The claim checker's training questions, shipped with its weights for the disjointness test."""
NOT_ENOUGH, SUPPORTED, CONTRADICTED = 0, 1, 2
LABEL_NAMES = ("not enough", "supported", "contradicted")
DECISION_LABEL = {"yes": SUPPORTED, "no": CONTRADICTED, "maybe": NOT_ENOUGH}
SNIPPETS_PER_QUESTION = 5
JOINED_SNIPPETS = 3
UNRELATED_PER_QUESTION = 3


def bioasq_yesno_pairs(
    settings: Settings, excluded: Exclusions, rng: random.Random
) -> Iterator[dict[str, Any]]:
    """Gold snippets labelled by the exact yes/no answer; BM25 snippets of other documents: not enough."""
    snippets, texts, index, row_of = _snippet_pool(settings)
    for row, gold_ids, gold_pmids in _training_questions(settings, excluded):
        answer = str(row.get("exact_answer", "")).strip().lower()
        if row.get("type") != "yesno" or answer not in ("yes", "no"):
            continue
        label = DECISION_LABEL[answer]
        gold = sorted(gold_ids & row_of.keys())
        if not gold:
            continue
        rng.shuffle(gold)
        for snippet_id in gold[:SNIPPETS_PER_QUESTION]:
            yield _pair("bioasq-yesno", row["id"], row["question"], texts[row_of[snippet_id]], label)
        if len(gold) > 1:
            joined = " ".join(texts[row_of[s]] for s in gold[:JOINED_SNIPPETS])
            yield _pair("bioasq-yesno", row["id"], row["question"], joined, label)
        unrelated = [
            i
            for i in index.top(row["question"], 30)
            if snippets[i]["id"] not in gold_ids | excluded.snippet_ids
            and str(snippets[i]["pmid"]) not in gold_pmids
        ]
        for i in unrelated[:UNRELATED_PER_QUESTION]:
            yield _pair("bioasq-yesno", row["id"], row["question"], texts[i], NOT_ENOUGH)


def pubmedqa_decision_pairs(
    settings: Settings, excluded: Exclusions, rng: random.Random
) -> Iterator[dict[str, Any]]:
    """Conclusion and results paragraphs labelled by the expert decision; other abstracts: not enough."""
    paragraphs, index = pubmedqa_pool(settings, excluded)
    for row, own in pubmedqa_training(settings, excluded):
        pmid = str(row["pubid"])
        label = DECISION_LABEL[str(row["final_decision"]).lower()]
        for text in own:
            yield _pair("pubmedqa-decision", pmid, row["question"], text, label)
        others = [j for j in index.top(row["question"], 20) if str(paragraphs[j]["pmid"]) != pmid]
        rng.shuffle(others)
        for j in others[:UNRELATED_PER_QUESTION]:
            yield _pair("pubmedqa-decision", pmid, row["question"], paragraphs[j]["text"], NOT_ENOUGH)


SWAPS = (
    ("dominant", "recessive"),
    ("increases", "decreases"),
    ("increased", "decreased"),
    ("increase", "decrease"),
    ("raises", "lowers"),
    ("higher", "lower"),
    ("more", "less"),
    ("common", "rare"),
    ("commonly", "rarely"),
    ("usually", "rarely"),
    ("men", "women"),
    ("males", "females"),
    ("children", "adults"),
    ("bacterial", "viral"),
    ("bacteria", "viruses"),
    ("benign", "malignant"),
    ("acute", "chronic"),
    ("excess", "deficiency"),
    ("overactive", "underactive"),
    ("high", "low"),
    ("early", "late"),
    ("before", "after"),
    ("mild", "severe"),
    ("gain", "loss"),
    ("left", "right"),
    ("causes", "prevents"),
    ("X-linked", "autosomal"),
)
"""Word swaps that turn a sentence a page states into one the page contradicts ("inherited in an autosomal
*dominant* pattern" against a page saying recessive). Negations are not swaps: a claim's negation is taken off
before checking (``question_form``), so "can"/"cannot" would give the same question twice."""
MUTATED_SENTENCES = 2600
MUTATIONS_PER_FOCUS = 3
_SWAP_OF = {a: b for pair in SWAPS for a, b in (pair, pair[::-1])}
_SWAP_PATTERN = re.compile(
    r"\b(" + "|".join(re.escape(w) for w in sorted(_SWAP_OF, key=len, reverse=True)) + r")\b", re.I
)
_NOT_A_FACT = re.compile(r"\b(information|click|website|resources?|see|upper|visit|contact)\b", re.I)
"""Pointers and navigation ("more detailed information", "click on the link") state no clinical fact; "upper
and lower" is a pair, not a direction."""


def _swapped(sentence: str) -> str | None:
    """The sentence with its first swappable word replaced by its opposite (case kept), or None."""
    match = _SWAP_PATTERN.search(sentence)
    if match is None:
        return None
    word = match.group(1)
    other = _SWAP_OF.get(word) or _SWAP_OF.get(word.lower()) or ""
    if word[:1].isupper():
        other = other[:1].upper() + other[1:]
    return sentence[: match.start()] + other + sentence[match.end() :]


def _checked_as(sentence: str, stated: bool) -> tuple[str, int] | None:
    """(the question the checker reads, its label) for a sentence the page states (``stated``) or
    contradicts; a negated sentence is checked as its positive form, so its label flips."""
    question, negated, _ = question_form(sentence)
    if question.startswith("Is it true that"):
        return None
    label = SUPPORTED if stated != negated else CONTRADICTED
    return question, label


def medquad_mutation_pairs(
    settings: Settings, excluded: Exclusions, rng: random.Random
) -> Iterator[dict[str, Any]]:
    """Synthetic claims from consumer pages (source ``medquad-mutation``): a sentence of a page, as the
    checker would read it, is supported by its own two-sentence window; the sentence with one word swapped
    for its opposite (:data:`SWAPS`) is contradicted by it; the sentence against a window of another page
    of the same question type is not enough. Why: BioASQ and PubMedQA never say "dominant" where a page
    says "recessive", the commonest way a colleague's claim about a disease is wrong; and the default KB is
    these consumer pages. Every focus of an evaluation set, and of the hand-written reply-check claims, is
    left out whole."""
    from agent.nodes.focus import sentences

    foci = excluded.medquad_foci | _reply_claim_foci(settings)
    rows = [
        row
        for row in _rows(settings.shared_data_dir / "corpus" / "medquad_answered.jsonl")
        if row["focus"].lower() not in foci
        and normalise_question(row["question"]) not in excluded.question_texts
        and row["answer"].strip()
    ]
    rng.shuffle(rows)
    by_qtype: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_qtype[row["qtype"]].append(i)
    used: dict[str, int] = defaultdict(int)
    made = 0
    for row in rows:
        if made >= MUTATED_SENTENCES:
            break
        if used[row["focus"].lower()] >= MUTATIONS_PER_FOCUS:
            continue
        text = row["answer"]
        spans = sentences(text)
        for k, (start, end) in enumerate(spans):
            sentence = text[start:end].strip(" -")
            if not 8 <= len(sentence.split()) <= 35 or sentence.endswith("?") or _NOT_A_FACT.search(sentence):
                continue
            mutated = _swapped(sentence)
            stated, contradicted = _checked_as(sentence, True), mutated and _checked_as(mutated, False)
            if stated is None or not contradicted:
                continue
            window_end = spans[min(k + 1, len(spans) - 1)][1]
            window = text[start:window_end]
            qid = f"{row['id']}#{k}"
            yield _pair("medquad-mutation", qid, stated[0], window, stated[1])
            yield _pair("medquad-mutation", qid, contradicted[0], window, contradicted[1])
            other = rows[rng.choice(by_qtype[row["qtype"]])]
            if other["focus"].lower() != row["focus"].lower():
                yield _pair("medquad-mutation", qid, stated[0], _cut(other["answer"], 60), NOT_ENOUGH)
            far = [j for j in range(len(spans) - 1) if abs(j - k) >= 2]
            if far:  # the same page, two sentences away or more: same subject, does not decide the claim
                j = rng.choice(far)
                yield _pair(
                    "medquad-mutation", qid, stated[0], text[spans[j][0] : spans[j + 1][1]], NOT_ENOUGH
                )
            used[row["focus"].lower()] += 1
            made += 1
            break


def training_foci(settings: Settings, seed: int = 13) -> set[str]:
    """The MedQuAD foci whose sentences the synthetic training pairs use (kept out of calibration)."""
    excluded = exclusions(settings)
    ids = {
        p["qid"].split("#")[0] for p in medquad_mutation_pairs(settings, excluded, random.Random(seed + 1))
    }
    return {
        row["focus"].lower()
        for row in _rows(settings.shared_data_dir / "corpus" / "medquad_answered.jsonl")
        if row["id"] in ids
    }


def _reply_claim_foci(settings: Settings) -> set[str]:
    """The MedQuAD foci of the documents the hand-written reply-check claims cite (evaluation only)."""
    cited = {
        e["document_id"]
        for row in _rows(REPO / "evals" / "data" / "reply_claims.jsonl")
        for e in row["evidence"]
    }
    return {
        row["focus"].lower()
        for row in _rows(settings.shared_data_dir / "corpus" / "medquad_answered.jsonl")
        if row["id"] in cited
    }


def build_pairs(settings: Settings, seed: int = 13) -> list[dict[str, Any]]:
    """Every training pair in a deterministic order, each marked train/dev by a question-level hash."""
    excluded = exclusions(settings)
    rng = random.Random(seed)
    pairs = [*bioasq_yesno_pairs(settings, excluded, rng), *pubmedqa_decision_pairs(settings, excluded, rng)]
    rng.shuffle(pairs)
    # Appended after the shuffle with their own generator: the first two sources' pairs stay exactly those
    # the first checker was trained on, so its recipe still reproduces.
    pairs.extend(medquad_mutation_pairs(settings, excluded, random.Random(seed + 1)))
    for pair in pairs:
        pair["split"] = "dev" if dev_split(f"claims:{pair['qid']}", share=0.1) else "train"
    return pairs


def training_manifest(settings: Settings, pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per training question (source, id, text; a BioASQ question's gold snippet ids, a synthetic
    claim's MedQuAD focus): what the
    disjointness test checks, shipped so it runs without ``../shared/data``."""
    seen = {(p["source"], p["qid"]): p["question"] for p in pairs}
    golden = {
        row["id"]: sorted(row.get("gold_snippet_ids", []))
        for row in _rows(settings.shared_data_dir / "eval" / "bioasq_taskb_golden_7b_10b.jsonl")
    }
    focus_of = {
        row["id"]: row["focus"]
        for row in _rows(settings.shared_data_dir / "corpus" / "medquad_answered.jsonl")
    }
    rows: list[dict[str, Any]] = []
    for (source, qid), text in sorted(seen.items()):
        row: dict[str, Any] = {"source": source, "qid": qid, "question": text}
        if source == "bioasq-yesno":
            row["gold_snippet_ids"] = golden[qid]
        elif source == "medquad-mutation":
            row["focus"] = focus_of[qid.split("#")[0]]
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/evigraph-claims/pairs.jsonl"))
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    settings = load_settings()
    pairs = build_pairs(settings, args.seed)
    write_pairs(pairs, args.out)  # its pos/neg counts are binary; the three labels are counted here
    write_manifest(training_manifest(settings, pairs), args.manifest)
    by_label = Counter(f"{p['source']}/{p['split']}/{LABEL_NAMES[p['label']]}" for p in pairs)
    for key, count in sorted(by_label.items()):
        print(f"{key}: {count}")
    print(f"wrote {len(pairs)} pairs to {args.out} and the question manifest to {args.manifest}")


if __name__ == "__main__":
    main()
