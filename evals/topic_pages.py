""" "What is X?" for every MedQuAD topic of the default KB: does evidence_rank put a page about X first?

Why: the dense question index (graphs/vectors/question_index.py) left out every document whose title is not
written with a question mark, and the fusion scored those documents as the worst question match (0.3 of
the fused score, tools/fusion.py). MedlinePlus's health topics are titled "Do you have information about
Cancer Chemotherapy": that question, word for word, ranked its own page 229th, and "What is Cancer
Chemotherapy?" ended "insufficient" on CancerGov treatment pages. This eval asks, for each topic with an
"information" page in the KB, "What is <topic>?" of the retrieval tool alone (no agent, no reader) and
counts how often the first-ranked passage, and any of the first ten, is from a document about that topic
(same MedQuAD focus), by the source of the topic's page.

Usage: python -m evals.topic_pages [--kb-root DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
from collections import Counter
from pathlib import Path

from graphs.kb import KnowledgeBase
from graphs.model.settings import load_settings
from graphs.stores.embedded import DB_FILE
from tools.evidence_rank import EvidenceRankRequest, evidence_rank

REPO = Path(__file__).resolve().parent.parent
REPORT = REPO / "evals" / "reports" / "topic_pages.md"
TOP_K = 10


def topics(kb: KnowledgeBase) -> list[tuple[str, str]]:
    """(focus, source) of every MedQuAD topic with an "information" document, one row per topic and
    source; the focus is MedQuAD's name for the topic."""
    conn = sqlite3.connect(f"file:{kb.build_dir / DB_FILE}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT DISTINCT d.focus, d.source FROM documents d JOIN evidence e ON e.document_id = d.id "
            "WHERE d.source LIKE 'MedQuAD/%' AND e.label = 'overview' AND d.focus != '' "
            "AND (d.title LIKE 'What is (are)%' OR d.title LIKE 'Do you have information about%') "
            "ORDER BY d.focus, d.source"
        ).fetchall()
    finally:
        conn.close()
    return [(str(f), str(s)) for f, s in rows]


def focus_of(kb: KnowledgeBase, document_ids: list[str]) -> list[str]:
    documents = kb.store.get_documents(sorted(set(document_ids)))
    return [documents[d].focus.lower() if d in documents else "" for d in document_ids]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb-root", type=Path, default=None, help="default: the default KB")
    parser.add_argument("--out", type=Path, default=REPORT)
    args = parser.parse_args(argv)
    root = args.kb_root or load_settings().kb_root
    kb = KnowledgeBase.open(root)
    first: Counter[str] = Counter()
    in_top: Counter[str] = Counter()
    total: Counter[str] = Counter()
    misses: list[str] = []
    try:
        for focus, source in topics(kb):
            result = evidence_rank(kb, EvidenceRankRequest(question=f"What is {focus}?", top_k=TOP_K))
            found = focus_of(kb, [e.document_id for e in result.evidence])
            name = source.split("/", 1)[1]
            total[name] += 1
            first[name] += bool(found) and found[0] == focus.lower()
            in_top[name] += focus.lower() in found
            if not found or found[0] != focus.lower():
                misses.append(f"{focus} ({name})")
        version = kb.version
    finally:
        kb.close()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = [
        f"| {name} | {total[name]} | {first[name]} = {first[name] / total[name]:.3f} | "
        f"{in_top[name]} = {in_top[name] / total[name]:.3f} |"
        for name in sorted(total)
    ]
    n, f, t = sum(total.values()), sum(first.values()), sum(in_top.values())
    lines = [
        '# "What is X?": a page about X first (retrieval tool alone, default KB)',
        "",
        f"`python -m evals.topic_pages` (its docstring says why). KB `{version}`; load average at the end "
        f"{load}.",
        "",
        "| source of the topic's page | topics | a page about the topic first | one in the first 10 |",
        "| --- | --- | --- | --- |",
        *rows,
        f"| all | {n} | {f} = {f / n:.3f} | {t} = {t / n:.3f} |",
        "",
        f"Not first ({len(misses)}; a page about a broader or sibling topic is often first): "
        + "; ".join(misses[:40])
        + (" …" if len(misses) > 40 else ""),
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines[:-2]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
