"""The claim checker's calibration claims and the reply-check benchmark, both disjoint from its training.

Why two sets: the thresholds that decide "supported" / "contradicted" are chosen on the calibration claims
for precision, and the precision a clinician can expect is then measured on claims nothing was fitted to.
Neither shares a question with the checker's training pairs (:mod:`evals.claim_data`), which exclude every
BioASQ evaluation question and the whole official PubMedQA test split.

* **calibration**: the yes/no questions of ``bioasq_dev.jsonl``, and the official PubMedQA PQA-L test
  questions that are not in ``pubmedqa_dev.jsonl`` whose id hashes into the first half; consumer-page
  sentences (:func:`consumer_claims`) and 36 hand-written paraphrases (:data:`PARAPHRASE_CLAIMS`), checked
  against the default KB;
* **benchmark** (held out): the yes/no questions of ``bioasq_test.jsonl``, the 100 ``pubmedqa_dev`` questions
  and the other half of the remaining PubMedQA test questions, plus the 30 hand-written clinical claims of
  ``reply_claims.jsonl`` (checked against the default KB; the others against the literature profile).

A question becomes a colleague's claim through :func:`graphs.text.claims.statement_from_question`; a question
it cannot rewrite confidently is left out and counted. Expected verdicts: yes → supported, no →
contradicted, maybe → no evidence found (a call either way on a "maybe" is a wrong call).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evals.reader_data import EVAL_DATA, _rows
from graphs.model.settings import Settings
from graphs.text.claims import statement_from_question

EXPECTED = {"yes": "supported", "no": "contradicted", "maybe": "no evidence found"}
REPLY_CLAIMS = EVAL_DATA / "reply_claims.jsonl"
PARAPHRASE_CLAIMS = EVAL_DATA / "reply_claims_calibration.jsonl"
"""36 hand-written colleague replies that paraphrase a consumer page (calibration only): the consumer
calibration claims are the pages' own sentences, easier than any colleague's wording, so the restatement's
paraphrase rules are developed and calibrated here and measured on the held-out 30 of ``REPLY_CLAIMS``.
Their pages are of foci the claim checker never trained on, and none of the benchmark claims' foci."""
SAYINGS = ("Colleague says: ", "My colleague thinks that ", "The registrar wrote: ", "The GP says ")


def _half(key: str) -> int:
    return hashlib.sha256(f"claims-split:{key}".encode()).digest()[0] % 2


def _as_reply(
    item_id: str, question: str, answer: str, source: str, skipped: list[str]
) -> dict[str, Any] | None:
    statement = statement_from_question(question)
    if statement is None:
        skipped.append(item_id)
        return None
    saying = SAYINGS[int(hashlib.sha256(item_id.encode()).hexdigest(), 16) % len(SAYINGS)]
    reply = f"{saying}{statement[0].lower() if saying != SAYINGS[0] else statement[0]}{statement[1:]}."
    return {
        "id": item_id,
        "source": source,
        "question": question,
        "claim": statement,
        "reply": reply,
        "expected": EXPECTED[answer.lower()],
        "kb": "literature",
    }


def literature_claims(settings: Settings, part: str, skipped: list[str]) -> Iterator[dict[str, Any]]:
    """``part`` = "calibration" or "benchmark": BioASQ yes/no and PubMedQA decisions as colleague claims."""
    bioasq_file = "bioasq_dev.jsonl" if part == "calibration" else "bioasq_test.jsonl"
    golden = {
        row["id"]: row
        for row in _rows(settings.shared_data_dir / "eval" / "bioasq_taskb_golden_7b_10b.jsonl")
    }
    for row in _rows(EVAL_DATA / bioasq_file):
        if row.get("type") != "yesno":
            continue
        answer = str(golden.get(row["id"], row).get("exact_answer", "")).strip().lower()
        if answer in EXPECTED:
            item = _as_reply(f"bioasq-{row['id']}", row["question"], answer, "bioasq", skipped)
            if item:
                yield item
    held_out = {str(row["id"]) for row in _rows(EVAL_DATA / "pubmedqa_dev.jsonl")}
    for row in _rows(settings.shared_data_dir / "eval" / "pubmedqa_pqal.jsonl"):
        pmid = str(row["pubid"])
        if row.get("official_split") != "test":
            continue
        in_benchmark = pmid in held_out or _half(pmid) == 1
        if in_benchmark != (part == "benchmark"):
            continue
        item = _as_reply(f"pubmedqa-{pmid}", row["question"], str(row["final_decision"]), "pubmedqa", skipped)
        if item:
            yield item


def hand_written_claims(path: Path = REPLY_CLAIMS, source: str = "hand-written") -> Iterator[dict[str, Any]]:
    """Hand-written clinical replies checked against the default KB: the 30 of the benchmark
    (``reply_claims.jsonl``), or the 36 paraphrases of the calibration (:data:`PARAPHRASE_CLAIMS`)."""
    for row in _rows(path):
        yield {
            "id": row["id"],
            "source": source,
            "question": "",
            "claim": row["claim"],
            "reply": row["reply"],
            "expected": row["expected"],
            "kb": "default",
        }


CONSUMER_CALIBRATION_FOCI = 160
CORE_EXCLUDED_SOURCES = ("GARD", "GHR")
"""The default (core) KB leaves these collections out, so their pages cannot decide a claim there."""


def consumer_claims(settings: Settings) -> Iterator[dict[str, Any]]:
    """Calibration claims in the default KB's own register: a sentence of a consumer page (supported) or
    the same sentence with one word swapped for its opposite (contradicted), alternating, one per focus —
    from foci the checker never trained on and no evaluation set or hand-written claim uses. Why: the
    literature claims alone would set thresholds for PubMed abstracts, and a reply check on the default KB
    reads consumer pages. Caveat: a page's own sentence is an easier claim than a colleague's paraphrase,
    so the held-out hand-written claims are the measure that counts."""
    from agent.nodes.focus import sentences
    from evals.claim_data import (
        _NOT_A_FACT,
        _checked_as,
        _reply_claim_foci,
        _swapped,
        training_foci,
    )
    from evals.reader_data import exclusions

    excluded = exclusions(settings)
    banned = excluded.medquad_foci | _reply_claim_foci(settings) | training_foci(settings)
    rows = sorted(
        (
            row
            for row in _rows(settings.shared_data_dir / "corpus" / "medquad_answered.jsonl")
            if row["source"] not in CORE_EXCLUDED_SOURCES and row["focus"].lower() not in banned
        ),
        key=lambda row: hashlib.sha256(f"consumer-cal:{row['id']}".encode()).hexdigest(),
    )
    seen: set[str] = set()
    for row in rows:
        focus = row["focus"].lower()
        if focus in seen or len(seen) >= CONSUMER_CALIBRATION_FOCI:
            continue
        text = row["answer"]
        for start, end in sentences(text):
            sentence = text[start:end].strip(" -")
            if not 8 <= len(sentence.split()) <= 30 or sentence.endswith("?") or _NOT_A_FACT.search(sentence):
                continue
            if not _names_focus(sentence, focus):  # a claim about the page's subject, not "You may have …"
                continue
            mutated = _swapped(sentence)
            if mutated is None or _checked_as(sentence, True) is None or _checked_as(mutated, False) is None:
                continue
            stated = len(seen) % 2 == 0
            claim = (sentence if stated else mutated).rstrip(".")
            seen.add(focus)
            yield {
                "id": f"medquad-{row['id']}",
                "source": "consumer",
                "question": "",
                "claim": claim,
                "reply": f"Colleague says: {claim}.",
                "expected": "supported" if stated else "contradicted",
                "kb": "default",
            }
            break


def _names_focus(sentence: str, focus: str) -> bool:
    words = [w for w in focus.replace("(", " ").replace(")", " ").split() if len(w) >= 4]
    return bool(words) and any(w in sentence.lower() for w in words)


def claim_set(settings: Settings, part: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The items of ``part`` and the ids left out because their question could not be made a claim."""
    skipped: list[str] = []
    items = list(literature_claims(settings, part, skipped))
    if part == "benchmark":
        items += hand_written_claims()
    else:
        items += consumer_claims(settings)
        items += hand_written_claims(PARAPHRASE_CLAIMS, "paraphrase")
    return items, skipped


def write(path: Path, items: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
