"""What a consumer-style question shows first: are the offline key sentences from a page that answers?

Why: the BioASQ answer eval (evals/answer_eval.py) measures the key sentences by exact answers, which
consumer questions do not have. A patient's or clinician's question ("How is hepatitis C passed from one
person to another?") is answered well when the first key sentence comes from a passage that answers it. On
the 72 questions of ``evals/data/medquad_consumer.jsonl`` (hand gold: the documents that answer, and for
59 of them the opening words of the sentence that answers), on the default KB, offline:

* **first from gold** — the first key sentence is from a gold document; **judged** also counts a passage
  judged "yes" in the blind pooled judgments (``medquad_consumer_judgments.jsonl``, evals/medquad_judged.py);
* **any from gold** — some key sentence is;
* **answering sentence shown** — the hand-quoted answering sentence is among the key sentences.

Each question runs once as a new consult; the reading is then redone for each variant in the same run:
sentences read alone (before 2026-11-28) and sentences opening on a reference back read with the sentence
before them (``agent.nodes.reading.READ_WITH_ANTECEDENT``). The key sentences are taken whatever the verdict
(what an LLM prompt gets, and what an "answered" turn shows).

Usage: python -m evals.consumer_key_sentences [--out evals/reports/consumer_key_sentences.md]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from agent.consult import Consultant
from agent.nodes import reading
from agent.sessions import thread_config
from evals.answer_eval import turn_key_sentences
from evals.datasets.medquad_consumer import load_medquad_consumer
from evals.datasets.schema import RetrievalQuestion
from evals.medquad_judged import JUDGMENTS, pair_id, read_jsonl
from graphs.model.settings import Settings, load_settings

REPO = Path(__file__).resolve().parent.parent
HINT_CHARS = 40
"""The first characters of a hand-quoted answering sentence that must appear in the key sentences."""
VARIANTS = {"sentences read alone": False, "reference back read with the sentence before (shipped)": True}


@dataclass
class Tally:
    """Counts over the questions for one reading variant (see the module doc for each)."""

    first_gold: int = 0
    first_judged: int = 0
    any_gold: int = 0
    hint: int = 0
    words: int = 0


def judged_yes() -> set[str]:
    """Pair ids (evals/medquad_judged.py ``pair_id``) the blind pooled judgments read as answering."""
    return {row["pair"] for row in read_jsonl(JUDGMENTS) if row["verdict"] == "yes"}


def tally(kb: Any, questions: list[RetrievalQuestion], states: list[Any], yes: set[str]) -> Tally:
    out = Tally()
    for q, state in zip(questions, states, strict=True):
        _, key = turn_key_sentences(kb, state, q.question)
        document = {ev["id"]: ev.get("document_id", "") for ev in state.get("evidence", [])}
        in_gold = [document.get(k.evidence_id) in q.gold_documents for k in key]
        text = " ".join(k.text for k in key)
        out.first_gold += bool(in_gold and in_gold[0])
        out.first_judged += bool(key and (in_gold[0] or pair_id(q.id, key[0].evidence_id) in yes))
        out.any_gold += any(in_gold)
        out.hint += any(h[:HINT_CHARS] in text for h in q.passage_hints.values())
        out.words += len(text.split())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports" / "consumer_key_sentences.md")
    args = parser.parse_args()
    settings = load_settings()
    questions = load_medquad_consumer("medquad-consumer").questions
    with tempfile.TemporaryDirectory() as tmp:
        consultant = Consultant(
            Settings(kb_dir=settings.kb_root, data_dir=Path(tmp), llm_enabled=False),
            checkpointer=InMemorySaver(),
            use_llm=False,
        )
        kb = consultant.kb
        states, answered = [], 0
        for q in questions:
            result = consultant.ask(q.question)
            answered += result.answer.get("status") == "answered"
            states.append(consultant.graph.get_state(thread_config(result.consult_id)).values)  # type: ignore[arg-type]
        yes = judged_yes()
        results = {}
        for name, flag in VARIANTS.items():
            reading.READ_WITH_ANTECEDENT = flag
            reading.forget()
            results[name] = tally(kb, questions, states, yes)
        reading.READ_WITH_ANTECEDENT = True
        reading.forget()
        version = kb.version
    n, hinted = len(questions), sum(1 for q in questions if q.passage_hints)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        "# Key sentences on consumer-style questions (medquad-consumer, default KB, offline)",
        "",
        "`python -m evals.consumer_key_sentences` (its docstring says what each column is). "
        f"KB `{version}`; {n} questions ({hinted} with a hand-quoted answering sentence); "
        f"{answered} answered as shipped; load average at the end {load}. "
        "Key sentences whatever the verdict.",
        "",
        "| reading | first from gold | first from gold or judged | any from gold | answering sentence shown "
        "| mean words |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, t in results.items():
        lines.append(
            f"| {name} | {t.first_gold}/{n} | {t.first_judged}/{n} | {t.any_gold}/{n} | {t.hint}/{hinted} "
            f"| {t.words / n:.0f} |"
        )
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
