"""Fit and calibrate the "answered" model (agent/nodes/answered.py) on labelled questions; report held out.

Why: whether a clinician is told "answered" is the product's most consequential decision; it must be learnt
from labels and its precision measured on questions it never saw (issue 18). Labelled sets, each split
into a calibration and a held-out part that never mix:

* **MedQuAD-style and out-of-KB** — ``evals/data/sufficiency.jsonl`` (379 questions, its own calibration /
  held-out split) on the default KB: consumer-worded and template MedQuAD questions (answerable), BioASQ,
  MedicationQA dose / side-effect / interaction and non-medical questions (not answerable from it);
* **BioASQ-style** — bioasq-dev (calibration) and bioasq-test (held out), each on its own snippet-pool KB;
  "answered correctly" = the direct answer as it would be shown (named answer + key sentences) holds a
  gold exact answer or a sentence of a gold snippet.

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
from agent.nodes.direct_answer import compose_direct_answer
from agent.nodes.focus import question_focus
from agent.nodes.sufficiency import answered_inputs, focus_and_answering, rule_verdict
from agent.sessions import thread_config
from evals.answer_eval import plain
from evals.datasets.registry import get_dataset
from evals.datasets.sufficiency import OUT as SUFFICIENCY
from evals.kb_cache import DEFAULT_CACHE_DIR, open_task_kb
from evals.metrics.answers import exact_hit
from evals.sufficiency_calibration import fmt_ci
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings, load_settings

REPO = Path(__file__).resolve().parent.parent
REPORTS = REPO / "evals" / "reports"
ROWS = REPORTS / "answered_features.jsonl"
BIOASQ_SETS = {
    "bioasq-dev": ("bioasq_dev.jsonl", "calibration"),
    "bioasq-test": ("bioasq_test.jsonl", "held_out"),
}
TARGET_P = 0.95
TARGET_OOK = 0.90
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
            task = open_task_kb(spec.recipe(settings), DEFAULT_CACHE_DIR, settings.embedding_backend)
            consultant = Consultant(
                Settings(kb_dir=task.root, data_dir=Path(tmp), llm_enabled=False),
                kb=task.kb,
                checkpointer=InMemorySaver(),
                use_llm=False,
            )

            def correct(q: dict[str, Any], state: dict[str, Any], kb: KnowledgeBase = task.kb) -> bool:
                text, picked = shown_answer(kb, state)
                g = gold[q["id"]]
                snippets = [" ".join(s["text"].lower().split()) for s in g["snippets"]]
                in_gold = any(" ".join(p.lower().split()) in s for p in picked for s in snippets)
                exact = g["type"] in ("factoid", "list") and exact_hit(text, g.get("exact_answer"))
                return bool(exact or in_gold)

            data = REPO / "evals" / "data" / file
            questions = (
                {"id": q["id"], "question": q["question"], "kind": "bioasq-pool", "split": part}
                for q in map(json.loads, filter(str.strip, data.read_text(encoding="utf-8").splitlines()))
            )
            rows += consult_rows(consultant, questions, correct)
            task.kb.close()
    return rows


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


def stats(rows: list[dict[str, Any]], decide: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    answered_rows = [r for r in rows if decide(r)]
    tp = sum(1 for r in answered_rows if r["answerable"])
    pos = sum(1 for r in rows if r["answerable"])
    neg = [r for r in rows if not r["answerable"]]
    return {
        "answered": len(answered_rows),
        "tp": tp,
        "pos": pos,
        "neg": len(neg),
        "ook": sum(1 for r in neg if not decide(r)),
    }


def precise(s: dict[str, Any]) -> bool:
    return s["answered"] == 0 or s["tp"] / s["answered"] >= TARGET_P


def choose(rows: list[dict[str, Any]]) -> float:
    """The lowest threshold meeting the targets on the calibration rows: precision of "answered" ≥
    ``TARGET_P`` on the default-KB questions (MedQuAD-style and out-of-KB together: there a wrong "answered"
    is an out-of-KB question) and on the BioASQ pool questions each, and ≥ ``TARGET_OOK`` of the out-of-KB
    questions left insufficient."""
    default_kb = [r for r in rows if r["kind"] != "bioasq-pool"]
    pool = [r for r in rows if r["kind"] == "bioasq-pool"]
    for t in GRID:
        decide = lambda r, t=t: r["p"] >= t  # noqa: E731
        ook = stats([r for r in default_kb if not r["answerable"]], decide)
        if (
            precise(stats(default_kb, decide))
            and precise(stats(pool, decide))
            and ook["ook"] >= TARGET_OOK * ook["neg"]
        ):
            return t
    return GRID[-1]


def table(rows: list[dict[str, Any]], decisions: dict[str, Callable[[dict[str, Any]], bool]]) -> list[str]:
    lines = [
        '| questions | decision | answered | precision of "answered" [95 % Wilson] | recall of answerable | '
        "out-of-KB left insufficient |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for group_name, group in (
        ("MedQuAD-style + out-of-KB, default KB", [r for r in rows if r["kind"] != "bioasq-pool"]),
        ("BioASQ, snippet-pool KB", [r for r in rows if r["kind"] == "bioasq-pool"]),
    ):
        for name, decide in decisions.items():
            s = stats(group, decide)
            ook = fmt_ci(s["ook"], s["neg"]) if s["neg"] else "—"
            lines.append(
                f"| {group_name} ({len(group)}) | {name} | {s['answered']} | "
                f"{fmt_ci(s['tp'], s['answered'])} | {fmt_ci(s['tp'], s['pos'])} | {ook} |"
            )
    return lines


def by_kind(rows: list[dict[str, Any]], decisions: dict[str, Callable[[dict[str, Any]], bool]]) -> list[str]:
    lines = [
        "| kind | answerable | " + " | ".join(decisions) + " |",
        "| --- | --- |" + " --- |" * len(decisions),
    ]
    for kind in sorted({r["kind"] for r in rows}):
        group = [r for r in rows if r["kind"] == kind]
        cells = [f"{sum(1 for r in group if d(r))}/{len(group)}" for d in decisions.values()]
        lines.append(f"| {kind} | {sum(1 for r in group if r['answerable'])} | " + " | ".join(cells) + " |")
    return lines


def render(
    rows: list[dict[str, Any]], model: dict[str, Any], verified: list[dict[str, Any]], meta: str
) -> str:
    t = model["threshold"]
    decisions: dict[str, Callable[[dict[str, Any]], bool]] = {
        f"model p ≥ {t}": lambda r: r["p"] >= t,
        "rule alone": lambda r: bool(r["rule"]),
    }
    cal = [r for r in rows if r["split"] == "calibration"]
    held = [r for r in rows if r["split"] == "held_out"]
    lines = [
        '# The "answered" verdict: a calibrated model over the evidence reader and the rule (issue 18)',
        "",
        f"Generated by `python -m evals.answered_calibration` (evals/answered_calibration.py). {meta}",
        "",
        f"Fitted on the calibration rows ({len(cal)}: sufficiency.jsonl calibration half on the default KB, "
        'bioasq-dev on its pool KB); threshold = the lowest whose calibration precision of "answered" is '
        f"≥ {TARGET_P} on the default-KB questions (MedQuAD-style and out-of-KB) and on the BioASQ ones "
        f"each, with ≥ {TARGET_OOK} of out-of-KB "
        f"questions left insufficient: **{t}**. Held out: {len(held)} (sufficiency.jsonl held-out half, "
        "bioasq-test), never used to fit or choose.",
        "",
        "## Held out (offline replay of the features; the rule decided the rounds)",
        "",
        *table(held, decisions),
        "",
    ]
    if verified:
        lines += [
            "## Held out, as shipped (each question rerun with the model deciding in the loop)",
            "",
            *table(verified, {"model in the loop": lambda r: r["status"] == "answered"}),
            "",
            *by_kind(verified, {"answered (shipped)": lambda r: r["status"] == "answered"}),
            "",
        ]
    lines += [
        "## Calibration half",
        "",
        *table(cal, decisions),
        "",
        "## Held out by kind (offline replay)",
        "",
        *by_kind(held, decisions),
        "",
        "## The model (data/reader/answered.json)",
        "",
        "| feature | mean | scale | weight |",
        "| --- | --- | --- | --- |",
        *(
            f"| {n} | {m} | {s} | {w} |"
            for n, m, s, w in zip(
                model["features"], model["means"], model["scales"], model["weights"], strict=True
            )
        ),
        f"| (bias) | | | {model['bias']} |",
        "",
        "Features are defined in agent/nodes/answered.py (`answered_features`); `rule` is the offline rule's "
        "own verdict, so the model can only add to what the rule's features say when the reader agrees.",
    ]
    return "\n".join(lines) + "\n"


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
