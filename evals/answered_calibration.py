"""Fit and calibrate the "answered" model (agent/nodes/answered.py) on labelled questions; report held out.

Why: whether a clinician is told "answered" is the product's most consequential decision; it must be learnt
from labels and its precision measured on questions it never saw (issue 18). Labelled sets, each split
into a calibration and a held-out part that never mix:

* **MedQuAD-style and out-of-KB** — ``evals/data/sufficiency.jsonl`` (379 questions, its own calibration /
  held-out split) on the default KB: consumer-worded and template MedQuAD questions (answerable), BioASQ,
  MedicationQA dose / side-effect / interaction and non-medical questions (not answerable from it);
* **BioASQ-style** — bioasq-dev (calibration) and bioasq-test (held out), each on its own snippet-pool KB;
  "answered correctly" = the direct answer as it would be shown (named answer + key sentences) holds a
  gold exact answer or a sentence of a gold snippet;
* **BioASQ near-misses** — the factoid and list questions of the same two sets, each on a copy of its pool
  without the gold snippets and without any snippet naming an exact answer
  (evals/datasets/near_miss_pools.py): the KB knows the subject, not the detail asked; same label (so an
  "answered" there is right only if the answer still names a gold exact answer). Counted with the pool
  questions for the BioASQ precision target, and reported on their own.

Steps: (1) every question runs as a new offline consult with the rule deciding alone (no model yet), and the
model's features are recorded (``agent.nodes.sufficiency.answered_inputs``, the agent's own code);
(2) a standardised, L2-regularised logistic regression (scipy) is fitted on the calibration rows;
(3) the threshold is the lowest whose calibration precision of "answered" is ≥ ``TARGET_P`` on the
default-KB rows and on the BioASQ rows each, with ≥ ``TARGET_OOK`` of out-of-KB questions left insufficient;
(4) ``data/reader/answered.json`` is written; (5) ``--verify`` reruns the held-out questions with the model
in the loop (it changes which rounds run, so the shipped behaviour is measured, not the offline replay).

Usage: python -m evals.answered_calibration [--reuse] [--verify] [--out evals/reports/answered_calibration.md]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from langgraph.checkpoint.memory import InMemorySaver
from scipy.optimize import minimize

from agent.consult import Consultant
from agent.deps import ConsultDeps
from agent.nodes import answered
from agent.nodes.detail_check import shown_answer_misses_detail
from agent.nodes.direct_answer import compose_direct_answer
from agent.nodes.focus import question_focus
from agent.nodes.sufficiency import answered_inputs
from agent.nodes.sufficiency_rule import focus_and_answering, rule_verdict
from agent.sessions import thread_config
from evals.answer_eval import plain
from evals.answered_report import POOL_KINDS, TARGET_OOK, TARGET_P, answers, render, stats
from evals.datasets.near_miss_pools import named_questions, near_miss_recipe
from evals.datasets.registry import get_dataset
from evals.datasets.snippet_pools import read_jsonl
from evals.datasets.sufficiency import OUT as SUFFICIENCY
from evals.kb_cache import DEFAULT_CACHE_DIR, KBRecipe, open_task_kb
from evals.metrics.answers import exact_hit
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings, load_settings

REPO = Path(__file__).resolve().parent.parent
REPORTS = REPO / "evals" / "reports"
ROWS = REPORTS / "answered_features.jsonl"
BIOASQ_SETS = {
    "bioasq-dev": ("bioasq_dev.jsonl", "calibration"),
    "bioasq-test": ("bioasq_test.jsonl", "held_out"),
}
L2 = 1.0
GRID = tuple(round(0.30 + 0.01 * i, 2) for i in range(70))


def golden(settings: Settings) -> dict[str, dict[str, Any]]:
    path = settings.shared_data_dir / "eval" / "bioasq_taskb_golden_7b_10b.jsonl"
    return {
        row["id"]: row
        for row in map(json.loads, filter(str.strip, path.read_text(encoding="utf-8").split("\n")))
    }


def shown_answer(kb: KnowledgeBase, state: dict[str, Any]) -> tuple[str, list[str]]:
    """The direct answer's text if the verdict were "answered" (``compose_direct_answer``, as the agent
    builds it: named answer, KG facts, key sentences) and its key sentences."""
    direct, _ = compose_direct_answer(kb, state, question_focus(kb, state), sufficient=True)  # type: ignore[arg-type]
    picked = [s["text"] for s in direct.get("sentences", [])]
    return plain(direct.get("lines", [])), picked


def consult_rows(
    consultant: Consultant,
    questions: Iterator[dict[str, Any]],
    label: Callable[[dict[str, Any], dict[str, Any]], bool],
) -> list[dict[str, Any]]:
    deps = ConsultDeps(consultant.kb, None)
    rows = []
    for q in questions:
        result = consultant.ask(q["question"])
        state: Any = consultant.graph.get_state(thread_config(result.consult_id)).values  # type: ignore[arg-type]
        found = focus_and_answering(deps, state)
        rule = rule_verdict(deps, state, found)
        inputs = answered_inputs(deps, state, found, rule)
        assert inputs is not None, "the evidence reader is unavailable: restore data/reader"
        rows.append(
            {
                **q,
                **inputs[0],
                "detail_missed": shown_answer_misses_detail(deps.kb, state, found[0]) is not None,
                "answerable": label(q, state),
                "status": result.answer.get("status"),
                "seconds": result.seconds,
            }
        )
    return rows


def collect(settings: Settings, kb_dir: Path, split: str | None = None) -> list[dict[str, Any]]:
    """Every labelled question (of ``split``, or all) as a new offline consult, with the model's features."""
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        default = Consultant(
            Settings(kb_dir=kb_dir, data_dir=Path(tmp), llm_enabled=False),
            checkpointer=InMemorySaver(),
            use_llm=False,
        )
        questions: Iterator[dict[str, Any]] = (
            q
            for q in map(json.loads, filter(str.strip, SUFFICIENCY.read_text(encoding="utf-8").splitlines()))
            if split in (None, q["split"])
        )
        rows += consult_rows(default, questions, lambda q, _s: bool(q["answerable"]))
        gold = golden(settings)
        for name, (file, part) in BIOASQ_SETS.items():
            if split not in (None, part):
                continue
            spec = get_dataset(name)
            assert spec.recipe is not None
            data = REPO / "evals" / "data" / file
            pools = (
                (spec.recipe(settings), "bioasq-pool", read_jsonl(data)),
                (
                    near_miss_recipe(settings, f"{name}-near-miss", pool_corpus(data), data, gold),
                    "bioasq-near-miss",
                    named_questions(data),
                ),
            )
            for recipe, kind, asked in pools:
                rows += pool_rows(settings, recipe, kind, part, asked, gold, Path(tmp))
    return rows


def pool_corpus(questions: Path) -> Path:
    """bioasq_dev.jsonl → bioasq_dev_corpus.jsonl: the snippet pool its questions are asked over."""
    return questions.with_name(questions.stem + "_corpus.jsonl")


def pool_rows(
    settings: Settings,
    recipe: KBRecipe,
    kind: str,
    part: str,
    questions: list[dict[str, Any]],
    gold: dict[str, dict[str, Any]],
    data_dir: Path,
) -> list[dict[str, Any]]:
    """BioASQ questions as new offline consults on one pool KB; "answered correctly" = the direct answer as
    shown holds a gold exact answer or a sentence of a gold snippet."""
    task = open_task_kb(recipe, DEFAULT_CACHE_DIR, settings.embedding_backend)
    consultant = Consultant(
        Settings(kb_dir=task.root, data_dir=data_dir, llm_enabled=False),
        kb=task.kb,
        checkpointer=InMemorySaver(),
        use_llm=False,
    )

    def correct(q: dict[str, Any], state: dict[str, Any]) -> bool:
        text, picked = shown_answer(task.kb, state)
        g = gold[q["id"]]
        snippets = [" ".join(s["text"].lower().split()) for s in g["snippets"]]
        in_gold = any(" ".join(p.lower().split()) in s for p in picked for s in snippets)
        exact = g["type"] in ("factoid", "list") and exact_hit(text, g.get("exact_answer"))
        return bool(exact or in_gold)

    asked = ({"id": q["id"], "question": q["question"], "kind": kind, "split": part} for q in questions)
    try:
        return consult_rows(consultant, asked, correct)
    finally:
        task.kb.close()


def fit(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Standardised L2 logistic regression (L-BFGS) on ``rows``; returns the model's JSON fields."""
    names = list(answered.FEATURES)
    x = np.array([[float(r[n]) for n in names] for r in rows])
    y = np.array([1.0 if r["answerable"] else 0.0 for r in rows])
    means, scales = x.mean(axis=0), x.std(axis=0)
    scales[scales == 0] = 1.0
    z = (x - means) / scales

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:-1], theta[-1]
        logits = z @ w + b
        p = 1.0 / (1.0 + np.exp(-logits))
        eps = 1e-9
        value = -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps)) + L2 * (w @ w) / (2 * len(y))
        grad_logit = (p - y) / len(y)
        return float(value), np.append(z.T @ grad_logit + L2 * w / len(y), grad_logit.sum())

    theta = minimize(loss, np.zeros(len(names) + 1), jac=True, method="L-BFGS-B").x
    return {
        "features": names,
        "means": [round(float(v), 6) for v in means],
        "scales": [round(float(v), 6) for v in scales],
        "weights": [round(float(v), 6) for v in theta[:-1]],
        "bias": round(float(theta[-1]), 6),
    }


def probability(model: dict[str, Any], row: dict[str, Any]) -> float:
    fitted = answered.AnsweredModel.from_fields(model, threshold=0.5)
    return fitted.probability({n: float(row[n]) for n in model["features"]})


def precise(s: dict[str, Any]) -> bool:
    return s["answered"] == 0 or s["tp"] / s["answered"] >= TARGET_P


def choose(rows: list[dict[str, Any]]) -> float:
    """The lowest threshold meeting the targets on the calibration rows: precision of "answered" ≥
    ``TARGET_P`` on the default-KB questions (MedQuAD-style and out-of-KB together: there a wrong "answered"
    is an out-of-KB question) and on the BioASQ pool questions each, and ≥ ``TARGET_OOK`` of the out-of-KB
    questions left insufficient."""
    default_kb = [r for r in rows if r["kind"] not in POOL_KINDS]
    pool = [r for r in rows if r["kind"] in POOL_KINDS]
    for t in GRID:
        decide = lambda r, t=t: answers(r, t)  # noqa: E731
        ook = stats([r for r in default_kb if not r["answerable"]], decide)
        if (
            precise(stats(default_kb, decide))
            and precise(stats(pool, decide))
            and ook["ook"] >= TARGET_OOK * ook["neg"]
        ):
            return t
    return GRID[-1]


def verify(settings: Settings, kb_dir: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rerun the held-out questions with the shipped model in the loop (status = the agent's verdict)."""
    answered.use_answered_model(None)  # reload data/reader/answered.json
    return collect(settings, kb_dir, "held_out")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reuse", action="store_true", help=f"read the features from {ROWS.name}")
    parser.add_argument("--verify", action="store_true", help="rerun the held-out questions as shipped")
    parser.add_argument("--out", type=Path, default=REPORTS / "answered_calibration.md")
    parser.add_argument(
        "--kb-dir", type=Path, default=None, help="the default KB (or its stand-in in the eval cache)"
    )
    args = parser.parse_args()
    settings = load_settings()
    started = time.perf_counter()
    if args.reuse:
        rows = [json.loads(line) for line in ROWS.read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        answered.use_answered_model(None, "collecting the calibration features: the rule decides alone")
        rows = collect(settings, args.kb_dir or settings.kb_root)
        ROWS.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    cal = [r for r in rows if r["split"] == "calibration"]
    model = fit(cal)
    for r in rows:
        r["p"] = probability(model, r)
    model["threshold"] = choose(cal)
    model["fitted_on"] = (
        f"{len(cal)} calibration questions: evals/data/sufficiency.jsonl (split=calibration) on the default "
        "KB and evals/data/bioasq_dev.jsonl on its snippet-pool KB; python -m evals.answered_calibration"
    )
    answered.ANSWERED_FILE.write_text(json.dumps(model, indent=1) + "\n", encoding="utf-8")
    verified = verify(settings, args.kb_dir or settings.kb_root, rows) if args.verify else []
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    meta = f"{len(rows)} questions; {time.perf_counter() - started:.0f} s; load average at the end {load}."
    args.out.write_text(render(rows, model, verified, meta), encoding="utf-8")
    print(args.out.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
