"""Real-model smoke check of the LLM path (run by hand, never in default CI): questions through every LLM
step with the configured endpoint — normally the local Qwen2.5-Coder-1.5B (`evigraph llm serve`).

Per question it records wall seconds, LLM calls, tokens, the steps that fell back offline (and why), the
verdict method, the answer mode/status and whether the answer is on point (a keyword proxy: does the
answer name what a clinician would expect, e.g. metformin for type 2 diabetes first-line — checked by
hand in the report). Works with older agent code too (only ``Consultant``/``Settings`` are used), so the
same script measures "before" (``PYTHONPATH=<main checkout>``) and "after".

    EVIGRAPH_LLM_BASE_URL=http://127.0.0.1:8089/v1 python -m evals.llm_smoke --n 3 --label after
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

QUESTIONS: list[tuple[str, list[str]]] = [
    ("What is the first-line drug treatment for type 2 diabetes?", ["metformin"]),
    ("What are the symptoms of hypothyroidism?", ["fatigue", "cold", "weight", "constipation"]),
    ("How is gout treated?", ["colchicine", "nsaid", "allopurinol", "corticosteroid"]),
    ("What causes iron deficiency anemia?", ["blood loss", "bleeding", "diet", "absorption"]),
    ("What are the symptoms of asthma?", ["wheez", "cough", "breath"]),
    ("How is high blood pressure treated?", ["diuretic", "ace inhibitor", "lifestyle", "medication"]),
    ("What is the treatment for migraine?", ["triptan", "pain relie", "nsaid", "ibuprofen"]),
    ("What are the complications of diabetes?", ["kidney", "eye", "nerve", "heart"]),
    ("How is pneumonia treated?", ["antibiotic"]),
    ("What are the risk factors for osteoporosis?", ["age", "menopause", "calcium", "smoking"]),
]


def run(n: int, label: str, out: Path) -> dict[str, Any]:
    from agent.frontends.cli_kb import open_consultant
    from graphs.model.settings import load_settings

    settings = load_settings()
    if not settings.llm_configured:
        raise SystemExit("No LLM configured: set EVIGRAPH_LLM_BASE_URL (e.g. from `evigraph llm serve`).")
    consultant = open_consultant(settings)
    rows: list[dict[str, Any]] = []
    for question, keywords in QUESTIONS[:n]:
        started = time.perf_counter()
        result = consultant.ask(question)
        seconds = time.perf_counter() - started
        answer = result.answer
        text = str(answer.get("text", ""))
        verdict = answer.get("verdict", {})
        fallbacks = {s["step"]: s["fallback"][:160] for s in result.trace if s.get("fallback")}
        llm_steps = sorted(
            {s["step"] for s in result.trace if s["step"] in ("hypothesis", "sufficiency", "plan", "answer")}
        )
        rows.append(
            {
                "question": question,
                "seconds": round(seconds, 1),
                "llm_calls": result.llm_calls,
                "llm_tokens": result.llm_tokens,
                "rounds": max((s.get("round", 0) for s in result.trace), default=0),
                "steps": llm_steps,
                "fallbacks": fallbacks,
                "verdict": f"{verdict.get('method')} {verdict.get('completeness')}",
                "mode": answer.get("mode"),
                "status": answer.get("status"),
                "keyword_hit": any(k in text.lower() for k in keywords) and answer.get("mode") == "llm",
                "answer": text[:400],
            }
        )
        print(json.dumps(rows[-1])[:600], flush=True)
        save(rows, label, settings.llm_base_url, out)  # a long real-model run that is stopped keeps its rows
    return save(rows, label, settings.llm_base_url, out)


def save(rows: list[dict[str, Any]], label: str, endpoint: str | None, out: Path) -> dict[str, Any]:
    summary = {
        "label": label,
        "endpoint": endpoint,
        "structured": os.environ.get("EVIGRAPH_LLM_STRUCTURED", "(default)"),
        "load_average": os.getloadavg(),
        "questions": len(rows),
        "median_seconds": statistics.median(r["seconds"] for r in rows),
        "total_seconds": round(sum(r["seconds"] for r in rows), 1),
        "mean_calls": statistics.mean(r["llm_calls"] for r in rows),
        "mean_tokens": statistics.mean(r["llm_tokens"] for r in rows),
        "steps_with_fallback": sum(len(r["fallbacks"]) for r in rows),
        "llm_answers": sum(r["mode"] == "llm" for r in rows),
        "keyword_hits": sum(bool(r["keyword_hit"]) for r in rows),
        "rows": rows,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(summary, indent=2))
    tmp.replace(out)
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=3, help="How many of the 10 questions (in order).")
    parser.add_argument("--label", default="after")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(__file__).resolve().parent / "reports" / f"llm_smoke_{args.label}.json"
    summary = run(args.n, args.label, out)
    keys = ("label", "questions", "median_seconds", "total_seconds", "mean_calls", "mean_tokens")
    print(json.dumps({k: summary[k] for k in keys}))


if __name__ == "__main__":
    main()
