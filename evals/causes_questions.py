""" "What causes X?" for the MedQuAD topics that have a "Who is at risk" page and no "What causes" page.

Why: 124 topics of the default KB (mostly cancers) are like that. Their overview pages say "cause" only of
what the disease does ("This may cause infection, anemia, and easy bleeding."), and the reader reads
"cause" and the subject, not which way round: "What causes chronic lymphocytic leukemia?" was answered
with that sentence. For every such topic: whether the first key sentence says what the disease causes
instead (agent/nodes/sentence_order.py ``says_other_effect``, by the topic's own words), whether it is
quoted from the topic's risk-factor page, whether any shown sentence is, and the verdict. No gold answer
here: the risk-factor page is what the KB holds on how the disease comes about, and a clinician reads the
first line as the answer.

Usage: python -m evals.causes_questions [--kb-root DIR] [--out evals/reports/causes_questions.md]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from agent.nodes.sentence_order import says_other_effect
from agent.sessions import thread_config
from evals.offline import offline_consultant
from graphs.model.settings import load_settings
from tools.candidate_terms import is_generic

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "data" / "corpus" / "medquad_answered.jsonl.gz"
CAUSE_TYPES = frozenset({"causes", "genetic changes"})


def risk_only_topics(corpus: Path = CORPUS) -> list[str]:
    """MedQuAD focus names with a "susceptibility" question and no causes or genetic-changes question."""
    qtypes: dict[str, set[str]] = defaultdict(set)
    with gzip.open(corpus, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            qtypes[row["focus"]].add(row["qtype"])
    return sorted(f for f, q in qtypes.items() if "susceptibility" in q and not q & CAUSE_TYPES)


def topic_words(topic: str) -> re.Pattern[str]:
    """The topic's distinctive words (≥ 4 letters, not category words) at a word start: "Oral Cavity and
    Oropharyngeal Cancer" is meant by "oral cavity cancer" too."""
    words = [w for w in re.findall(r"[A-Za-z0-9]+", topic) if len(w) >= 4 and not is_generic(w)]
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words or [topic]) + ")", re.IGNORECASE)


def run(kb_root: Path, topics: list[str]) -> list[dict[str, Any]]:
    """One new offline consult per topic: "What causes <topic>?"."""
    rows = []
    with offline_consultant(kb_root) as consultant:
        for topic in topics:
            result = consultant.ask(f"What causes {topic}?")
            state: Any = consultant.graph.get_state(thread_config(result.consult_id)).values  # type: ignore[arg-type]
            label = {ev["id"]: ev.get("label", "") for ev in state.get("evidence", [])}
            shown = result.answer.get("direct", {}).get("sentences", [])
            subject = topic_words(topic)
            rows.append(
                {
                    "topic": topic,
                    "status": result.answer.get("status"),
                    "first": shown[0]["text"] if shown else "",
                    "first_other_effect": bool(shown) and says_other_effect(shown[0]["text"], subject),
                    "first_risk": bool(shown) and label.get(shown[0]["evidence_id"]) == "risk factors",
                    "any_risk": any(label.get(s["evidence_id"]) == "risk factors" for s in shown),
                }
            )
    return rows


def report(rows: list[dict[str, Any]], kb_root: Path) -> str:
    n = len(rows)

    def count(key: str, answered_only: bool = False) -> str:
        k = sum(1 for r in rows if r[key] and (not answered_only or r["status"] == "answered"))
        return f"{k}/{n}"

    answered = sum(1 for r in rows if r["status"] == "answered")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        '# "What causes X?" where the KB has a risk-factor page and no cause page',
        "",
        f"`python -m evals.causes_questions` on `{kb_root}`; {n} MedQuAD topics "
        f"(evals/causes_questions.py says how they are chosen); load average at the end {load}.",
        "",
        "| measure | count |",
        "| --- | --- |",
        f"| answered | {answered}/{n} |",
        f"| first key sentence says what the disease (or something else) causes "
        f"| {count('first_other_effect')} |",
        f"| first key sentence from the topic's risk-factor page | {count('first_risk')} |",
        f"| some shown sentence from a risk-factor page | {count('any_risk')} |",
        "",
        "| topic | verdict | first key sentence |",
        "| --- | --- | --- |",
    ]
    lines += [f"| {r['topic']} | {r['status']} | {r['first'][:110].replace('|', '/')} |" for r in rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kb-root", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports" / "causes_questions.md")
    args = parser.parse_args()
    kb_root = args.kb_root or load_settings().kb_root
    text = report(run(kb_root, risk_only_topics()), kb_root)
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
