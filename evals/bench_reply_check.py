"""Offline turn time of a reply check with five claims, against a plain question in the same run.

Why: a reply check retrieves and reads evidence once per claim, so its turn grows with the reply; issue 22
sets ≤ 1.5 s for a five-claim reply offline on a quiet machine. The ratio to a one-question clinical turn
(same process, same KB, same run) says what the claim check adds, whatever the machine's speed.

One warm ``Consultant`` (no LLM) on the default KB; after one uncounted warm-up, six five-claim replies and
six plain questions, each asked once as a NEW consult (a repeat would be served by per-text caches). Reported:
seconds per reply, the medians and their ratio, the load average before and after.

Usage: python -m evals.bench_reply_check --kb-root DIR [--out evals/reports/…md]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver

from agent.consult import Consultant
from evals.bench_common import publish
from graphs.model.settings import Settings

TARGET_S = 1.5
WARM_UP = "Colleague says: aspirin reduces the risk of stroke. Warfarin is an anticoagulant."
REPLIES = (
    "Colleague says: metformin is first-line for type 2 diabetes. Sulfonylureas cause weight loss. "
    "Insulin is never needed in type 2 diabetes. Exercise improves blood sugar control. "
    "HbA1c can be used to diagnose diabetes.",
    "The registrar wrote: gout is caused by uric acid crystals in the joint. Allopurinol should be started "
    "during an acute attack. Colchicine can treat a gout attack. Alcohol does not affect gout. "
    "Gout is more common in women.",
    "Colleague says: Lyme disease is spread by ticks. It cannot be cured with antibiotics. A bull's-eye rash "
    "is common. Lyme disease is caused by a virus. Untreated infection can spread to joints.",
    "The GP says hypothyroidism is treated with levothyroxine. Hypothyroidism causes weight loss. "
    "Thyroid blood tests diagnose it. It is more common in men. Iodine deficiency can cause it.",
    "Colleague says: shingles is caused by the chickenpox virus. The shingles vaccine treats postherpetic "
    "neuralgia. Shingles is contagious to people who never had chickenpox. Older adults are at higher risk. "
    "Antiviral drugs can shorten an attack.",
    "My colleague thinks that peptic ulcers are caused by spicy food. H. pylori infection causes most "
    "ulcers. NSAIDs do not cause ulcers. Antibiotics can cure H. pylori ulcers. Smoking slows ulcer healing.",
)
QUESTIONS = (
    "What are the treatments for gout?",
    "How is Lyme disease diagnosed?",
    "What causes hypothyroidism?",
    "Who is at risk for shingles?",
    "What are the symptoms of peptic ulcer?",
    "How is type 2 diabetes treated?",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kb-root", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        consultant = Consultant(
            Settings(kb_dir=args.kb_root, data_dir=Path(tmp), llm_enabled=False),
            checkpointer=InMemorySaver(),
            use_llm=False,
        )
        consultant.ask(WARM_UP, task="check_reply")  # warm-up: models, indexes (not counted)
        load_before = os.getloadavg()[0]
        checks: list[tuple[str, float, int]] = []
        for text in REPLIES:  # each asked once: a repeat would be served by per-text caches
            started = time.perf_counter()
            result = consultant.ask(text, task="check_reply")
            claims = len(result.answer.get("reply_check", {}).get("claims", []))
            checks.append((text, time.perf_counter() - started, claims))
        plain: list[float] = []
        for question in QUESTIONS:
            started = time.perf_counter()
            consultant.ask(question, task="clinical")
            plain.append(time.perf_counter() - started)
        load_after = os.getloadavg()[0]
    check_median, plain_median = statistics.median(t for _, t, _ in checks), statistics.median(plain)
    lines = [
        "# Reply check turn time (offline, warm)",
        "",
        f"`python -m evals.bench_reply_check`; load average {load_before:.2f} before, {load_after:.2f} "
        f"after; target ≤ {TARGET_S} s for a five-claim reply. Each reply and question asked once, as a new "
        "consult.",
        "",
        "| reply | claims checked | seconds |",
        "| --- | ---: | ---: |",
        *(f"| {text[:70]}… | {claims} | {seconds:.2f} |" for text, seconds, claims in checks),
        "",
        f"Median five-claim reply check **{check_median:.2f} s** (max {max(t for _, t, _ in checks):.2f} s); "
        f"median plain clinical question {plain_median:.2f} s (×{check_median / plain_median:.1f}).",
    ]
    publish("\n".join(lines) + "\n", args.out)


if __name__ == "__main__":
    main()
