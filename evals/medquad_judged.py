"""medquad-consumer success@1 with pooled, blind relevance judgments (TREC-style pooling).

Why: the 72 medquad-consumer questions carry hand-picked gold passages (evals/data/medquad_consumer.jsonl),
written once, before most of the systems existed. Many first-ranked passages that miss that gold answer the
question anyway ("My sugar just dropped to 60 … what should I eat?" → "three or four glucose tablets …";
the gold is the page's "check your blood glucose" passage). Success@1 against incomplete gold under-counts
every system, and most the systems that find other pages. The standard repair is pooling: the first-ranked
passage of *every* compared system is judged, blind to which system ranked it, and the passages judged to
answer join the gold. Both numbers are reported; the original gold stays the primary one.

How: ``python -m evals.medquad_judged --kb-root KB`` runs the systems, writes the first-ranked passages
that are not already gold to ``evals/data/medquad_consumer_pool.jsonl`` (shuffled, no system names), and,
when ``evals/data/medquad_consumer_judgments.jsonl`` judges them, writes the report
``evals/reports/medquad_judged.md``. A judgment is ``{"pair": …, "verdict": "yes" | "partial" | "no",
"why": …}``; only "yes" (the passage alone answers the question's main ask) joins the gold. Pairs without a
judgment are counted as not answering and listed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
from pathlib import Path

from evals.adapters import TWIN_SEPARATOR
from evals.baselines.base import EvidencePool
from evals.baselines.registry import make_system
from evals.datasets.registry import get_dataset
from evals.scoring import first_ids, resolve_gold, run_system
from graphs.kb import KnowledgeBase

REPO = Path(__file__).resolve().parent.parent
POOL = REPO / "evals" / "data" / "medquad_consumer_pool.jsonl"
JUDGMENTS = REPO / "evals" / "data" / "medquad_consumer_judgments.jsonl"
REPORT = REPO / "evals" / "reports" / "medquad_judged.md"
SYSTEMS = (
    "bm25",
    "vector",
    "search-vector",
    "kgrag",
    "evigraph",
    "evigraph-base-encoder",
    "evigraph-no-graph",
)


def pair_id(question_id: str, evidence_id: str) -> str:
    return "p-" + hashlib.sha1(f"{question_id}|{evidence_id}".encode()).hexdigest()[:10]


def read_jsonl(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb-root", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=REPORT)
    args = parser.parse_args(argv)
    dataset = get_dataset("medquad-consumer").load(None)
    kb = KnowledgeBase.open(args.kb_root)
    pool = EvidencePool(kb)
    golds = {q.id: g for q in dataset.questions if (g := resolve_gold(dataset, pool, q)) is not None}
    questions = [q for q in dataset.questions if q.id in golds]
    top: dict[str, dict[str, list[str]]] = {}
    for name in SYSTEMS:
        run = run_system(make_system(name, kb, pool), questions, 1, 0.0)
        top[name] = {q.id: run.ranked.get(q.id, [])[:1] for q in questions}
    known = {r["pair"] for r in read_jsonl(POOL)}
    texts = {q.id: q.question for q in questions}
    new: list[dict[str, str]] = []
    for name in SYSTEMS:
        for qid, slot in top[name].items():
            ids = slot[0].split(TWIN_SEPARATOR) if slot else []
            kept = first_ids(slot)[0] if slot else ""
            if not kept or golds[qid].passages & set(ids):
                continue
            pid = pair_id(qid, kept)
            if pid in known:
                continue
            known.add(pid)
            rec = kb.store.get_evidence([kept])[kept]
            doc = kb.store.get_documents([rec.document_id]).get(rec.document_id)
            new.append(
                {
                    "pair": pid,
                    "question_id": qid,
                    "question": texts[qid],
                    "evidence_id": kept,
                    "title": doc.title if doc else "",
                    "text": rec.text,
                }
            )
    random.Random(0).shuffle(new)
    with POOL.open("a", encoding="utf-8") as f:
        for row in new:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    judged = {r["pair"]: r["verdict"] for r in read_jsonl(JUDGMENTS)}
    pooled = {r["pair"]: r for r in read_jsonl(POOL)}
    rows, unjudged = [], set()
    for name in SYSTEMS:
        hits = judged_hits = 0
        for qid, slot in top[name].items():
            ids = set(slot[0].split(TWIN_SEPARATOR)) if slot else set()
            if golds[qid].passages & ids:
                hits += 1
                judged_hits += 1
                continue
            pid = pair_id(qid, first_ids(slot)[0]) if slot else ""
            if pid and pid not in judged:
                unjudged.add(pid)
            judged_hits += judged.get(pid) == "yes"
        n = len(questions)
        rows.append(f"| {name} | {hits}/{n} = {hits / n:.3f} | {judged_hits}/{n} = {judged_hits / n:.3f} |")
    verdicts = [judged[p] for p in pooled if p in judged]
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        "# medquad-consumer success@1 with pooled blind judgments",
        "",
        f"Command: `python -m evals.medquad_judged --kb-root {args.kb_root}` (evals/medquad_judged.py says "
        f"why and how). KB `{kb.version}`; {len(questions)} questions; load average at the end {load}.",
        "",
        f"Pool: the first-ranked passage of each of {len(SYSTEMS)} systems, where it is not already gold — "
        f"{len(pooled)} question–passage pairs in evals/data/medquad_consumer_pool.jsonl, judged blind to "
        f"the system (evals/data/medquad_consumer_judgments.jsonl; see its card in evals/data/README.md): "
        f"{verdicts.count('yes')} yes, {verdicts.count('partial')} partial, {verdicts.count('no')} no. Only "
        "'yes' joins the gold. The original hand gold stays the primary measure.",
        "",
        "| system | success@1, hand gold | success@1, hand gold + pooled 'yes' |",
        "| --- | --- | --- |",
        *rows,
    ]
    if unjudged:
        lines += ["", f"Unjudged pairs (counted as not answering): {len(unjudged)}, e.g. {min(unjudged)}"]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    kb.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
