"""The labelled sufficiency set: questions the default KB can answer, and questions it cannot.

Why: the offline "answered"/"insufficient" rule decides what a clinician is told, so its thresholds are
chosen on labelled data and its precision is reported (evals/sufficiency_calibration.py). Sources, all
under ``Settings().shared_data_dir`` or this repository:

* **answerable** — the consumer-phrased MedQuAD questions (evals/data/medquad_consumer.jsonl, every focus in
  the default ``core`` KB, gold answers read by hand), plus a seeded sample of MedQuAD's own questions from
  the core sources (the KB holds their answer passages; their template wording is easy, so they are
  reported as their own kind);
* **unanswerable** — BioASQ dev questions (biomedical-research questions over PubMed snippets the default KB
  does not hold), MedicationQA questions of type side effects / dose / interaction (the default KB has no
  drug-label text, so none of these has an answer in it), and non-medical questions written for this set
  (``NON_MEDICAL``).

Each question gets a stable split (``calibration`` or ``held_out``) from a hash of its id, so thresholds
are chosen on one half and reported on the other. ``python -m evals.datasets.sufficiency`` writes
evals/data/sufficiency.jsonl.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from graphs.model.settings import Settings

DATA = Path(__file__).resolve().parent.parent / "data"
OUT = DATA / "sufficiency.jsonl"
CORE_SOURCES = ("NIDDK", "NINDS", "MPlusHealthTopics", "NIHSeniorHealth", "CancerGov", "NHLBI", "CDC")
MEDQUAD_SAMPLE = 60
MEDICATIONQA_TYPES = {"side effects": 60, "dose": 30, "interaction": 20}
SEED = 10
NON_MEDICAL = (
    "What is the capital of France?",
    "How do I reset my router password?",
    "Who won the football world cup in 2014?",
    "What is the best way to learn Python programming?",
    "How many moons does Jupiter have?",
    "What is the exchange rate between the euro and the dollar?",
    "How do I bake sourdough bread?",
    "What time does the sun set in London in December?",
    "Who wrote Pride and Prejudice?",
    "How do I change a flat tyre on a bicycle?",
    "What is the tallest mountain in Africa?",
    "How do I file my income tax return?",
    "What is the plot of Hamlet?",
    "Which programming language is fastest for numerical work?",
    "How far is the Moon from the Earth?",
    "What are the rules of chess castling?",
    "How do I train a puppy to sit?",
    "What is the population of Tokyo?",
    "How does a blockchain work?",
    "What is the difference between a violin and a viola?",
    "When was the Eiffel Tower built?",
    "How do I remove a red wine stain from a carpet?",
    "What is the speed of light in a vacuum?",
    "Which planets have rings?",
    "How do I grow tomatoes on a balcony?",
    "What is the recipe for a classic margherita pizza?",
    "How do I write a cover letter for a job application?",
    "What causes the northern lights?",
    "What are the symptoms of a failing car battery?",
    "How do I treat a wooden table against water damage?",
    "What is the treatment for a slow laptop?",
    "What are the side effects of drinking too much coffee on sleep quality in teenagers at exam time?",
    "What is the first-line strategy for opening a chess game?",
    "How is a mortgage interest rate calculated?",
    "Who painted the Mona Lisa?",
    "What is the boiling point of water at high altitude?",
    "How do airplanes stay in the air?",
    "What is the longest river in South America?",
    "How do I set up a home aquarium?",
    "What does GDP measure?",
)


CARPAL_TUNNEL = "bioasq-601eaac81cb411341a000051"
RELABELLED: dict[str, str] = {
    CARPAL_TUNNEL: "the NINDS Carpal Tunnel Syndrome page (core KB) names the median nerve",
}
"""Questions of an "unanswerable" source that the default KB does answer, found by reading the passages the
calibration run marked answered (the reason quotes where the answer is); they are labelled answerable."""


def split_of(qid: str) -> str:
    """A stable half of the set: by the first hex digit of the id's SHA-1 (even → calibration)."""
    return "calibration" if int(hashlib.sha1(qid.encode()).hexdigest()[0], 16) % 2 == 0 else "held_out"


def rows(settings: Settings) -> list[dict[str, object]]:
    """Every labelled question (see the module doc), in a stable order."""
    rng = random.Random(SEED)
    out: list[dict[str, object]] = []

    def add(qid: str, question: str, answerable: bool, kind: str) -> None:
        out.append(
            {"id": qid, "question": question, "answerable": answerable, "kind": kind, "split": split_of(qid)}
        )

    for line in (DATA / "medquad_consumer.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            add(row["id"], row["question"], True, "medquad_consumer")
    shared = settings.shared_data_dir
    medquad = [
        json.loads(line)
        for line in (shared / "corpus" / "medquad_answered.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    core = sorted((r for r in medquad if r["source"] in CORE_SOURCES), key=lambda r: r["id"])
    for row in rng.sample(core, MEDQUAD_SAMPLE):
        add(f"mq-{row['id']}", row["question"], True, "medquad_template")
    for line in (DATA / "bioasq_dev.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            qid = f"bioasq-{row['id']}"
            add(
                qid,
                row["question"],
                qid in RELABELLED,
                "bioasq (answered in KB)" if qid in RELABELLED else "bioasq",
            )
    medication = [
        json.loads(line)
        for line in (shared / "eval" / "medicationqa.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    for qtype, n in MEDICATIONQA_TYPES.items():
        pool = sorted((r for r in medication if r["question_type"].lower() == qtype), key=lambda r: r["id"])
        for row in rng.sample(pool, min(n, len(pool))):
            add(row["id"], row["question"], False, f"medicationqa_{qtype.replace(' ', '_')}")
    for i, question in enumerate(NON_MEDICAL):
        add(f"nonmed-{i:03d}", question, False, "non_medical")
    return out


def main() -> None:
    from graphs.model.settings import load_settings

    data = rows(load_settings())
    OUT.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")
    print(f"wrote {len(data)} questions to {OUT}")


if __name__ == "__main__":
    main()
