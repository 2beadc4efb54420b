"""The hand-written reply-check benchmark (evals/data/reply_claims.jsonl) against the shipped MedQuAD corpus.

Evaluation only: 30 colleague replies, one clinical claim each, 15 supported / 15 contradicted, every one
decided by a quoted sentence of a MedQuAD answer that the default (core) KB holds.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLAIMS = REPO / "evals" / "data" / "reply_claims.jsonl"
MEDQUAD = REPO / "data" / "corpus" / "medquad_answered.jsonl.gz"
CORE_EXCLUDED = {"GARD", "GHR"}
"""Sources the default ``core`` KB leaves out (graphs/building/default_kb.py)."""
FIELDS = {"id", "reply", "claim", "expected", "why", "evidence", "written_by"}


def _claims() -> list[dict[str, object]]:
    return [json.loads(line) for line in CLAIMS.read_text(encoding="utf-8").splitlines()]


def _corpus() -> dict[str, dict[str, str]]:
    with gzip.open(MEDQUAD, "rt", encoding="utf-8") as lines:
        return {row["id"]: row for row in map(json.loads, lines)}


def test_thirty_rows_with_unique_ids_and_an_even_split() -> None:
    lines = CLAIMS.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 30 and all(line.strip() for line in lines)
    claims = _claims()
    assert all(set(c) == FIELDS for c in claims)
    assert len({c["id"] for c in claims}) == 30
    assert Counter(c["expected"] for c in claims) == {"supported": 15, "contradicted": 15}
    assert all(len(str(c["reply"])) < 300 for c in claims)


def test_every_quote_is_verbatim_in_the_core_document_it_names() -> None:
    corpus = _corpus()
    for claim in _claims():
        evidence = claim["evidence"]
        assert isinstance(evidence, list) and evidence, claim["id"]
        for item in evidence:
            row = corpus.get(item["document_id"])
            assert row is not None, (claim["id"], item["document_id"])
            assert row["source"] not in CORE_EXCLUDED, (claim["id"], item["document_id"])
            assert item["url"] == row["url"], (claim["id"], item["document_id"])
            assert item["quote"] in row["answer"], (claim["id"], item["quote"])


PARAPHRASES = REPO / "evals" / "data" / "reply_claims_calibration.jsonl"


def test_the_calibration_paraphrases_quote_core_pages_of_other_foci_than_the_benchmark() -> None:
    """The 36 paraphrased replies the restatement's paraphrase rules were written from (calibration only):
    each quote verbatim in a page the default KB holds, and no page focus shared with the 30 benchmark
    claims, so what was learnt from them is measured on other conditions."""
    corpus = _corpus()
    rows = [json.loads(line) for line in PARAPHRASES.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 36 and len({r["id"] for r in rows}) == 36
    assert Counter(r["expected"] for r in rows) == {"supported": 20, "contradicted": 16}
    for row in rows:
        for item in row["evidence"]:
            page = corpus[item["document_id"]]
            assert page["source"] not in CORE_EXCLUDED and item["quote"] in page["answer"], row["id"]
    calibration = {corpus[i["document_id"]]["focus"].lower() for r in rows for i in r["evidence"]}
    benchmark = {corpus[i["document_id"]]["focus"].lower() for r in _claims() for i in r["evidence"]}  # type: ignore[attr-defined]
    assert len(calibration) >= 20 and not calibration & benchmark, sorted(calibration & benchmark)
