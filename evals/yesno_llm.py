"""The local LLM with and without EviGraph's evidence on yes/no questions (issue 18, item 4; run by hand).

MIRAGE (Xiong et al. 2024) found retrieval helps most on BioASQ yes/no and PubMedQA, so this is where the
local model should gain from evidence if anywhere. For each question: (1) the model answers from the
question alone (prompts/yesno_direct.md); (2) an offline consult on the question's evaluation KB (the
bioasq-dev / bioasq-test snippet pools, the pubmedqa abstract pool: the gold evidence is in the pool but
must be found) picks the sentences the product's answer prompt gets (``agent.compact_answer
.answer_sentences``: the evidence reader's key sentences), and the model answers again
(prompts/yesno_with_evidence.md). Accuracy with Wilson 95 % intervals, the paired difference with a
bootstrap interval, seconds per question.

    EVIGRAPH_LLM_BASE_URL=http://127.0.0.1:8089/v1 python -m evals.yesno_llm --per-set 40

Questions: every BioASQ yes/no question of bioasq-dev and bioasq-test (45; none is in the reader's training
data, data/reader/CARD.md) and a seeded sample of the 100 PubMedQA PQA-L test questions of ``pubmedqa``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from evals.kb_cache import DEFAULT_CACHE_DIR, open_task_kb
from evals.mcq_llm import compare, save

REPO = Path(__file__).resolve().parent.parent
WORD = re.compile(r"\b(yes|no|maybe)\b", re.IGNORECASE)
BIOASQ = {"bioasq-dev": "bioasq_dev.jsonl", "bioasq-test": "bioasq_test.jsonl"}


def parse_answer(text: str) -> str:
    """The first yes / no / maybe in the model's reply ("" when it gave none)."""
    found = WORD.search(text)
    return found.group(1).lower() if found else ""


def questions(shared: Path, per_set: int, seed: int) -> list[dict[str, str]]:
    """``{set, kb, id, question, gold}`` rows: BioASQ yes/no (dev + test) and a PubMedQA sample."""
    golden = {
        row["id"]: row
        for row in map(json.loads, (shared / "eval" / "bioasq_taskb_golden_7b_10b.jsonl").open())
    }
    rows: list[dict[str, str]] = []
    for kb_name, file in BIOASQ.items():
        for line in (REPO / "evals" / "data" / file).open():
            q = json.loads(line)
            if q["type"] == "yesno":
                gold = str(golden[q["id"]]["exact_answer"]).strip().lower()
                rows.append(
                    {
                        "set": "bioasq-yesno",
                        "kb": kb_name,
                        "id": q["id"],
                        "question": q["question"],
                        "gold": gold,
                    }
                )
    pubmed = [json.loads(line) for line in (REPO / "evals" / "data" / "pubmedqa_dev.jsonl").open()]
    for q in random.Random(seed).sample(pubmed, min(per_set, len(pubmed))):
        rows.append(
            {
                "set": "pubmedqa",
                "kb": "pubmedqa",
                "id": q["id"],
                "question": q["question"],
                "gold": q["final_decision"],
            }
        )
    return rows


def ask(model: Any, prompt: str) -> tuple[str, float]:
    from langchain_core.messages import HumanMessage

    started = time.perf_counter()
    reply = model.invoke([HumanMessage(prompt)])
    return parse_answer(str(reply.content)), time.perf_counter() - started


def run(per_set: int, seed: int, out: Path, cache_dir: Path) -> dict[str, Any]:
    from langgraph.checkpoint.memory import InMemorySaver

    from agent.compact_answer import answer_sentences
    from agent.consult import Consultant
    from agent.deps import ConsultDeps
    from agent.llm import make_chat_model
    from agent.sessions import thread_config
    from evals.datasets.registry import get_dataset
    from graphs.model.settings import Settings, load_settings
    from prompts import render_prompt

    settings = load_settings()
    if not settings.llm_configured:
        raise SystemExit("No LLM configured: set EVIGRAPH_LLM_BASE_URL (e.g. from `evigraph llm serve`).")
    model = make_chat_model(settings)
    assert model is not None
    model = model.model_copy(update={"max_tokens": 4})
    rows: list[dict[str, Any]] = []
    items = questions(settings.shared_data_dir, per_set, seed)
    with tempfile.TemporaryDirectory() as tmp:
        for kb_name in dict.fromkeys(q["kb"] for q in items):
            recipe = get_dataset(kb_name).recipe
            assert recipe is not None
            task = open_task_kb(recipe(settings), cache_dir, settings.embedding_backend)
            offline = Consultant(
                Settings(data_dir=Path(tmp) / kb_name, llm_enabled=False),
                kb=task.kb,
                checkpointer=InMemorySaver(),
                use_llm=False,
            )
            deps = ConsultDeps(task.kb, None)
            for q in (q for q in items if q["kb"] == kb_name):
                alone, t_alone = ask(model, render_prompt("yesno_direct", question=q["question"]))
                started = time.perf_counter()
                result = offline.ask(q["question"])
                state: Any = offline.graph.get_state(thread_config(result.consult_id)).values  # type: ignore[arg-type]
                sentences = answer_sentences(deps, state)
                retrieval_s = time.perf_counter() - started
                evidence = "\n".join(f"[{eid}] {text}" for eid, text in sentences) or "(none)"
                grounded, t_grounded = ask(
                    model, render_prompt("yesno_with_evidence", evidence=evidence, question=q["question"])
                )
                rows.append(
                    {
                        **{k: q[k] for k in ("set", "id", "gold")},
                        "alone": alone,
                        "with_evidence": grounded,
                        "offline_status": result.answer.get("status"),
                        "alone_s": round(t_alone, 1),
                        "with_evidence_s": round(t_grounded + retrieval_s, 1),
                        "evidence_words": len(evidence.split()),
                    }
                )
                print(json.dumps(rows[-1]), flush=True)
                save(rows, per_set, seed, out, False, summarise)  # a stopped run keeps its rows
            task.kb.close()
    return save(rows, per_set, seed, out, True, summarise)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for name in ("bioasq-yesno", "pubmedqa", "all"):
        part = [r for r in rows if name in ("all", r["set"])]
        if part:
            majority = max(sum(r["gold"] == g for r in part) for g in ("yes", "no", "maybe")) / len(part)
            table[name] = {**compare(part, "alone", "alone_s"), "majority_class": round(majority, 3)}
    return {"table": table}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-set", type=int, default=40, help="PubMedQA questions (BioASQ: all 45 yes/no)")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "reports" / "yesno_llm.json")
    args = parser.parse_args()
    print(json.dumps(run(args.per_set, args.seed, args.out, args.cache_dir)["table"], indent=2))


if __name__ == "__main__":
    main()
