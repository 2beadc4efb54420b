"""First answer-level numbers with a real model (run by hand, not in CI): the LLM alone vs the same LLM
with EviGraph's evidence in one compact prompt (the MIRAGE/HyKGE comparison), on a fixed sample of the
MCQ sets.

For each item: (1) the model answers from the question alone (prompts/mcq_direct.md); (2) EviGraph's
offline consult retrieves evidence for the question and its options, the key sentences of the top passages
(agent.compact_answer.key_sentences) go into one compact prompt (prompts/mcq_with_evidence.md), and the
model answers again. Accuracy with Wilson 95% intervals, the paired difference with a bootstrap interval,
and seconds per question for each condition.

    EVIGRAPH_LLM_BASE_URL=http://127.0.0.1:8089/v1 python -m evals.mcq_llm --per-set 10
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import binomtest

LETTER = re.compile(r"\b([A-E])\b")
SETS = ("medmcqa", "medqa", "mmlu-medical")


def sample(name: str, eval_dir: Path, per_set: int, seed: int) -> list[Any]:
    from evals.datasets.answers import load_mcq

    items = load_mcq(name, eval_dir)
    return random.Random(seed).sample(items, min(per_set, len(items)))


def ask_letter(model: Any, prompt: str) -> tuple[str, float, int]:
    from langchain_core.messages import HumanMessage

    started = time.perf_counter()
    reply = model.invoke([HumanMessage(prompt)])
    seconds = time.perf_counter() - started
    found = LETTER.search(str(reply.content))
    tokens = int((getattr(reply, "usage_metadata", None) or {}).get("total_tokens", 0) or 0)
    return (found.group(1) if found else ""), seconds, tokens


def wilson(k: int, n: int) -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return round(float(ci.low), 3), round(float(ci.high), 3)


def paired_bootstrap(a: list[bool], b: list[bool], seed: int = 0, reps: int = 5000) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    diff = np.array(b, dtype=float) - np.array(a, dtype=float)
    means = diff[rng.integers(0, len(diff), size=(reps, len(diff)))].mean(axis=1)
    return round(float(np.percentile(means, 2.5)), 3), round(float(np.percentile(means, 97.5)), 3)


def run(per_set: int, seed: int, out: Path) -> dict[str, Any]:
    from agent.compact_answer import key_sentences
    from agent.deps import ConsultDeps
    from agent.frontends.cli_kb import open_consultant
    from graphs.model.settings import load_settings
    from prompts import render_prompt

    settings = load_settings()
    if not settings.llm_configured:
        raise SystemExit("No LLM configured: set EVIGRAPH_LLM_BASE_URL (e.g. from `evigraph llm serve`).")
    from agent.llm import make_chat_model

    model = make_chat_model(settings)
    assert model is not None
    model = model.model_copy(update={"max_tokens": 8})
    offline = open_consultant(settings, offline=True)
    deps = ConsultDeps(kb=offline.kb)
    eval_dir = settings.shared_data_dir / "eval"
    rows: list[dict[str, Any]] = []
    for name in SETS:
        for item in sample(name, eval_dir, per_set, seed):
            options = "\n".join(f"{k}. {v}" for k, v in item.options.items())
            direct, t_direct, tok_direct = ask_letter(
                model, render_prompt("mcq_direct", question=item.question, options=options)
            )
            started = time.perf_counter()
            turn = offline.ask(f"{item.question}\n{options}", task="mcq")
            evidence = turn.answer.get("evidence_ids", [])
            records = offline.kb.store.get_evidence(evidence[:8])
            passages = [{"id": i, "text": records[i].text} for i in evidence[:8] if i in records]
            sentences = key_sentences(deps, item.question, passages, limit=6)  # type: ignore[arg-type]
            retrieval_s = time.perf_counter() - started
            text = "\n".join(f"[{eid}] {s}" for eid, s in sentences) or "(none)"
            grounded, t_grounded, tok_grounded = ask_letter(
                model,
                render_prompt("mcq_with_evidence", evidence=text, question=item.question, options=options),
            )
            rows.append(
                {
                    "set": name,
                    "id": item.id,
                    "gold": item.gold[0],
                    "direct": direct,
                    "with_evidence": grounded,
                    "direct_s": round(t_direct, 1),
                    "with_evidence_s": round(t_grounded + retrieval_s, 1),
                    "retrieval_s": round(retrieval_s, 1),
                    "tokens": [tok_direct, tok_grounded],
                }
            )
            print(json.dumps(rows[-1]), flush=True)
            save(rows, per_set, seed, out, complete=False)  # a long run that is stopped keeps its rows
    return save(rows, per_set, seed, out, complete=True)


def save(
    rows: list[dict[str, Any]],
    per_set: int,
    seed: int,
    out: Path,
    complete: bool,
    summarise_rows: Callable[[list[dict[str, Any]]], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Write the summary and rows atomically (a stopped run keeps what it has); ``summarise_rows`` defaults
    to the MCQ summary (evals/yesno_llm.py passes its own)."""
    summary = (summarise_rows or summarise)(rows)
    summary["load_average"] = [round(x, 2) for x in os.getloadavg()]
    summary["per_set"], summary["seed"], summary["complete"] = per_set, seed, complete
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps({**summary, "rows": rows}, indent=2))
    tmp.replace(out)
    return summary


def compare(part: list[dict[str, Any]], alone: str, alone_s: str) -> dict[str, Any]:
    """Accuracy alone vs with evidence (Wilson intervals), their paired difference and the median seconds,
    for rows holding ``gold``, the ``alone`` answer and ``with_evidence`` (also evals/yesno_llm.py)."""
    a = [r[alone] == r["gold"] for r in part]
    b = [r["with_evidence"] == r["gold"] for r in part]
    return {
        "n": len(part),
        "alone": {"accuracy": round(sum(a) / len(a), 3), "ci95": wilson(sum(a), len(a))},
        "with_evidence": {"accuracy": round(sum(b) / len(b), 3), "ci95": wilson(sum(b), len(b))},
        "difference_ci95": paired_bootstrap(a, b),
        "seconds_per_question": {
            "alone": statistics.median(r[alone_s] for r in part),
            "with_evidence": statistics.median(r["with_evidence_s"] for r in part),
        },
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for name in (*SETS, "all"):
        part = [r for r in rows if name in ("all", r["set"])]
        if part:
            table[name] = compare(part, "direct", "direct_s")
    return {"table": table}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-set", type=int, default=10)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent / "reports" / "mcq_llm.json"
    )
    args = parser.parse_args()
    print(json.dumps(run(args.per_set, args.seed, args.out)["table"], indent=2))


if __name__ == "__main__":
    main()
