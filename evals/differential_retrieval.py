"""Retrieval for differentials: does "what is the most likely diagnosis?" find the diagnosis's page?

Why: a differential names findings, not its subject ("My 4 year old has a barking cough and stridor at night.
What is it likely to be?"), and the fused ranking followed the findings' own pages — the question index
matched "What are the treatments for Cough?" — so the croup page never reached the clinician
(tools/fusion.py ``DIFFERENTIAL_QUESTION_INDEX``). No retrieval set of ours asks differentials, so this one is
built from MedQA-USMLE (``../shared/data/eval/medqa_usmle_test.jsonl``, MIT): the items whose question
reads as a differential (graphs/model/labels.py ``asks_for_a_differential``) and whose correct option names a
condition with a page in the KB — gold = the evidence units of every KB document whose title names that
option, on word boundaries (MedQuAD titles: "What is (are) Graves' Disease ?"). Success@K = a gold unit among
the top K of the agent's offline round (evals/baselines/evigraph.py), with the question index scoring
differentials and without; items alternate between two halves, so a change that helps only one half shows.

Usage: python -m evals.differential_retrieval [--kb-root DIR] [--out evals/reports/differential_retrieval.md]
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any

import tools.fusion as fusion
from evals.baselines.base import EvidencePool
from evals.baselines.evigraph import EviGraphConfig, EviGraphRetriever
from evals.kb_cache import REPO
from graphs.kb import KnowledgeBase
from graphs.model.labels import asks_for_a_differential
from graphs.model.settings import Settings, load_settings

KS = (1, 5, 10)


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def differential_items(kb: KnowledgeBase, settings: Settings) -> tuple[int, list[dict[str, Any]]]:
    """(differential items in MedQA, those whose correct diagnosis has KB pages — with their gold units)."""
    pool = EvidencePool(kb)
    documents = kb.store.get_documents(sorted({r.document_id for r in pool.records.values()}))
    units_by_title: dict[str, list[str]] = {}
    for evidence_id, record in pool.records.items():
        title = _words(documents[record.document_id].title) if record.document_id in documents else ""
        units_by_title.setdefault(title, []).append(evidence_id)
    path = settings.shared_data_dir / "eval" / "medqa_usmle_test.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    asked = [row for row in rows if asks_for_a_differential(row["question"])]
    items = []
    for row in asked:
        name = _words(row.get("options", {}).get(row.get("answer_idx"), ""))
        if len(name) < 4:
            continue
        pattern = re.compile(r"(?<![a-z0-9])" + re.escape(name) + r"(?![a-z0-9])")
        gold = {e for title, ids in units_by_title.items() if pattern.search(title) for e in ids}
        if gold:
            items.append({"id": row["id"], "question": row["question"], "answer": name, "gold": gold})
    return len(asked), items


def score(kb: KnowledgeBase, items: list[dict[str, Any]]) -> dict[str, Any]:
    """Success@K over the items and success@10 per half (even / odd positions)."""
    retriever = EviGraphRetriever(kb, "evigraph", "", EviGraphConfig())
    hits = {k: 0 for k in KS}
    halves = [0, 0]
    for n, item in enumerate(items):
        slots = [set(entry.split("\t")) for entry in retriever.retrieve(item["question"], max(KS))]
        for k in KS:
            hits[k] += any(slot & item["gold"] for slot in slots[:k])
        halves[n % 2] += any(slot & item["gold"] for slot in slots[:10])
    return {"hits": hits, "halves": halves}


LIST_EXPERIMENT = """## Tried and not shipped: a list of "conditions to consider" (2026-11-27, ninth session)

For a differential left insufficient, commit f830005 listed the conditions whose pages the closest passages
are, each with the case's findings its passages name ("Croup — its passages name cough, hoarse voice [1]"),
under "Conditions the closest passages describe (to consider — not a diagnosis)". On lay cases it read well
(croup, infectious mononucleosis and peripheral arterial disease each came first). On these MedQA-USMLE
differentials, asked offline as clinical questions on the default KB, it showed a list on 191 of the 197
items; the correct diagnosis was listed first on **3 of the 33** whose diagnosis has a page, and anywhere in
the list (3.3 conditions on average) on 5 of 33. On the other 164 items every listed condition was wrong.
A clinician's case reads like these vignettes, not like a lay question, so a list that is wrong nine times
in ten would anchor more than it helps: it was reverted, and a differential keeps the insufficient verdict
with its closest passages (their citations name each page: "What is (are) Croup ?")."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kb-root", type=Path, default=None, help="default: the default KB")
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports" / "differential_retrieval.md")
    args = parser.parse_args(argv)
    settings = load_settings()
    kb = KnowledgeBase.open(args.kb_root or settings.kb_root)
    asked, items = differential_items(kb, settings)
    runs = {}
    for on in (True, False):
        fusion.DIFFERENTIAL_QUESTION_INDEX = on
        runs[on] = score(kb, items)
    fusion.DIFFERENTIAL_QUESTION_INDEX = False
    n, halves = len(items), (len(items) + 1) // 2
    lines = [
        "# Retrieval for differentials (MedQA-USMLE diagnosis items, default KB)",
        "",
        f"Command: `python -m evals.differential_retrieval`. KB `{kb.version}`. Load average at the end: "
        f"{os.getloadavg()[0]:.1f}. {asked} MedQA-USMLE test items read as differentials; {n} have a KB "
        "page for the correct diagnosis (gold: that page's evidence units). The agent's offline round "
        "(evals/baselines/evigraph.py), success@K = a gold unit among the top K.",
        "",
        "| question index on differentials | success@1 | success@5 | success@10 | success@10, half A / B |",
        "| --- | --- | --- | --- | --- |",
    ]
    for on, label in ((True, "on (before 2026-11-27)"), (False, "**off (shipped)**")):
        hits, split = runs[on]["hits"], runs[on]["halves"]
        lines.append(
            f"| {label} | {hits[1]}/{n} | {hits[5]}/{n} | {hits[10]}/{n} | "
            f"{split[0]}/{halves} / {split[1]}/{n - halves} |"
        )
    lines += [
        "",
        "Small, and not held out: the switch was chosen on these items (both halves gained), and most MedQA "
        "diagnoses have no page in a consumer-health KB. Questions that are not differentials rank as "
        "before; "
        "on the retrieval dev sets (2026-11-27, recall@10 / success@1): medquad-consumer 0.737 / 0.667 → "
        "0.740 / 0.667 (2 of its 72 questions read as differentials), bioasq-dev 0.851 / 0.970 and pubmedqa "
        "0.870 / 0.970 unchanged. Rerun on 2026-11-27 (ninth session) with the ranking of that day (the "
        "search encoder and the matcher changed since): the rows above; the switch stays off.",
    ]
    lines += ["", LIST_EXPERIMENT]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    kb.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
