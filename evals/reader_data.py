"""Training pairs for the evidence reader (a question–passage cross-encoder), disjoint from evaluation.

Why here: the reader decides which passage and sentence a clinician reads, so it is trained on labelled
question–passage pairs from ``../shared/data`` — and every question, gold snippet and document that any
evaluation or calibration set uses is kept out, so no reported number is measured on training data.
``data/reader/CARD.md`` states the split; ``tests/test_reader_data.py`` checks it on the written file.

Sources (labels as the datasets give them):

* **BioASQ 7b–10b** (``eval/bioasq_taskb_golden_7b_10b.jsonl``): a question with each of its gold snippets is
  a positive; hard negatives are the top BM25 snippets of the 20,585-snippet pool that are neither gold for
  the question nor from one of its gold PubMed documents (a same-abstract sentence is often relevant too),
  plus one random snippet; no evaluation question's gold snippet is used, as a positive or a negative.
  Questions of bioasq-dev, bioasq-test (= bioasq-full's questions), bioasq-ci and the sufficiency set are
  excluded, and so is any other question that repeats one of their texts or shares a gold snippet or gold
  document with them.
* **MedQuAD** (``corpus/medquad_answered.jsonl``): a template question ("What are the treatments for X ?")
  with the start of its own answer is a positive; the answers of the *same focus* under other question
  types are hard negatives (same subject, wrong aspect — the mistake the rule made), plus one BM25 answer of
  another focus. Every focus that a medquad-consumer gold document or a sufficiency-set MedQuAD question has
  is excluded whole, so no evaluation answer is seen under any question.
* **PubMedQA PQA-L** (``eval/pubmedqa_pqal.jsonl``): only the 500 questions *outside* the official test
  split (the pubmedqa eval set is drawn from the test split); the question with its abstract's results
  and conclusion paragraphs is a positive, the top BM25 paragraphs of other abstracts are negatives.

Output: one JSON line per pair ``{"source", "qid", "question", "passage", "label"}``, deterministic for a
seed. Usage: ``python -m evals.reader_data --out /tmp/reader/pairs.jsonl [--seed 13]``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

from graphs.model.settings import Settings, load_settings
from graphs.text.lexical_index import tokenize

REPO = Path(__file__).resolve().parent.parent
EVAL_DATA = REPO / "evals" / "data"
MANIFEST = REPO / "data" / "reader" / "training_questions.jsonl.gz"
"""The training questions, shipped with the reader so tests/test_reader_data.py can check disjointness."""
BIOASQ_EVAL_FILES = ("bioasq_dev.jsonl", "bioasq_test.jsonl", "bioasq_ci.jsonl")
MAX_PASSAGE_WORDS = 120
"""Passages are cut to this many words: the reader reads at most 256 word pieces with the question."""
BIOASQ_POSITIVES = 6
BIOASQ_HARD_NEGATIVES = 5
MEDQUAD_QUESTIONS = 3500
MEDQUAD_SAME_FOCUS_NEGATIVES = 3
PUBMEDQA_NEGATIVES = 3
SENTENCE_POSITIVES = 4
SENTENCE_SAME_TOPIC_NEGATIVES = 4
SENTENCE_OTHER_NEGATIVES = 4
PUBMEDQA_ANSWER_LABELS = ("RESULTS", "CONCLUSIONS", "CONCLUSION")


def normalise_question(text: str) -> str:
    """Lower-cased words only: two questions that differ in case or punctuation are the same question."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def _cut(text: str, words: int = MAX_PASSAGE_WORDS) -> str:
    parts = text.split()
    return " ".join(parts[:words])


@dataclass
class Exclusions:
    """Everything an evaluation or calibration set uses; nothing here may reach a training pair."""

    bioasq_ids: set[str] = field(default_factory=set)
    question_texts: set[str] = field(default_factory=set)
    snippet_ids: set[str] = field(default_factory=set)
    pmids: set[str] = field(default_factory=set)
    medquad_foci: set[str] = field(default_factory=set)
    pubmedqa_test_pmids: set[str] = field(default_factory=set)


def exclusions(settings: Settings) -> Exclusions:
    """Collect the ids and texts of every evaluation and calibration question (see the module docstring)."""
    out = Exclusions()
    shared = settings.shared_data_dir
    for name in BIOASQ_EVAL_FILES:
        for row in _rows(EVAL_DATA / name):
            out.bioasq_ids.add(row["id"])
            out.question_texts.add(normalise_question(row["question"]))
            out.snippet_ids.update(row.get("gold_snippet_ids", []))
            out.pmids.update(row.get("gold_pmids", []))
    medquad_by_id = {row["id"]: row for row in _rows(shared / "corpus" / "medquad_answered.jsonl")}
    for row in _rows(EVAL_DATA / "medquad_consumer.jsonl"):
        out.question_texts.add(normalise_question(row["question"]))
        for gold in row["gold_ids"]:
            if gold in medquad_by_id:
                out.medquad_foci.add(medquad_by_id[gold]["focus"].lower())
    for row in _rows(EVAL_DATA / "sufficiency.jsonl"):
        out.question_texts.add(normalise_question(row["question"]))
        if row["id"].startswith("bioasq-"):
            out.bioasq_ids.add(row["id"].removeprefix("bioasq-"))
        if row["id"].startswith("mq-") and row["id"][3:] in medquad_by_id:
            out.medquad_foci.add(medquad_by_id[row["id"][3:]]["focus"].lower())
    for row in _rows(shared / "eval" / "pubmedqa_pqal.jsonl"):
        if row.get("official_split") == "test":
            out.pubmedqa_test_pmids.add(str(row["pubid"]))
            out.question_texts.add(normalise_question(row["question"]))
    return out


class _BM25:
    """BM25 over a list of texts with the KB's own biomedical tokenizer (graphs/text/lexical_index.py)."""

    def __init__(self, texts: list[str]) -> None:
        self.retriever = bm25s.BM25()
        self.retriever.index([tokenize(text) or ["_"] for text in texts], show_progress=False)

    def top(self, query: str, k: int) -> list[int]:
        tokens = tokenize(query) or ["_"]
        rows, _ = self.retriever.retrieve([tokens], k=k, show_progress=False)
        return [int(i) for i in np.asarray(rows)[0]]


def _pair(source: str, qid: str, question: str, passage: str, label: int) -> dict[str, Any]:
    return {"source": source, "qid": qid, "question": question, "passage": _cut(passage), "label": label}


def _snippet_pool(
    settings: Settings,
) -> tuple[list[dict[str, Any]], list[str], _BM25, dict[str, int]]:
    """The 20,585 BioASQ snippets, their texts, a BM25 index over them and row numbers by snippet id."""
    snippets = list(_rows(settings.shared_data_dir / "corpus" / "bioasq_snippets.jsonl"))
    texts = [row["text"] for row in snippets]
    return snippets, texts, _BM25(texts), {row["id"]: i for i, row in enumerate(snippets)}


def _training_questions(
    settings: Settings, excluded: Exclusions
) -> Iterator[tuple[dict[str, Any], set[str], set[str]]]:
    """(golden row, gold snippet ids, gold PubMed ids) of every BioASQ question a pair may use: not an
    evaluation question, no repeat of one's text, no shared gold snippet or gold document."""
    for row in _rows(settings.shared_data_dir / "eval" / "bioasq_taskb_golden_7b_10b.jsonl"):
        gold_ids = set(row.get("gold_snippet_ids", []))
        gold_pmids = {str(p) for p in row.get("documents", [])}
        if (
            row["id"] in excluded.bioasq_ids
            or normalise_question(row["question"]) in excluded.question_texts
            or gold_ids & excluded.snippet_ids
            or gold_pmids & excluded.pmids
        ):
            continue
        yield row, gold_ids, gold_pmids


def bioasq_pairs(settings: Settings, excluded: Exclusions, rng: random.Random) -> Iterator[dict[str, Any]]:
    """Gold snippets as positives, BM25-mined hard negatives (see the module docstring)."""
    snippets, texts, index, row_of = _snippet_pool(settings)
    for row, gold_ids, gold_pmids in _training_questions(settings, excluded):
        positives = sorted(gold_ids & row_of.keys())
        if not positives:
            continue
        rng.shuffle(positives)
        for snippet_id in positives[:BIOASQ_POSITIVES]:
            yield _pair("bioasq", row["id"], row["question"], texts[row_of[snippet_id]], 1)
        gold_texts = {texts[row_of[s]] for s in positives}
        negatives = [
            i
            for i in index.top(row["question"], 40)
            if snippets[i]["id"] not in gold_ids
            and str(snippets[i]["pmid"]) not in gold_pmids
            and texts[i] not in gold_texts
            and snippets[i]["id"] not in excluded.snippet_ids
        ][:BIOASQ_HARD_NEGATIVES]
        negatives.append(rng.randrange(len(snippets)))
        for i in negatives:
            usable = snippets[i]["id"] not in gold_ids | excluded.snippet_ids
            if usable and str(snippets[i]["pmid"]) not in gold_pmids:
                yield _pair("bioasq", row["id"], row["question"], texts[i], 0)


def _sentences(text: str) -> list[str]:
    """The sentences the key-sentence picker would consider (the agent's splitter, 25–500 characters)."""
    from agent.nodes.focus import sentences

    return [text[s:e].strip() for s, e in sentences(text) if 25 <= e - s <= 500]


def medquad_training_rows(
    settings: Settings, excluded: Exclusions
) -> tuple[list[dict[str, Any]], dict[str, list[int]], _BM25]:
    """The MedQuAD answers a pair may use (no excluded focus or question text), their row numbers by focus
    and a BM25 index over each answer's first 80 words."""
    rows = [
        row
        for row in _rows(settings.shared_data_dir / "corpus" / "medquad_answered.jsonl")
        if row["focus"].lower() not in excluded.medquad_foci
        and normalise_question(row["question"]) not in excluded.question_texts
        and row["answer"].strip()
    ]
    by_focus: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_focus[row["focus"].lower()].append(i)
    return rows, by_focus, _BM25([_cut(row["answer"], 80) for row in rows])


def medquad_pairs(settings: Settings, excluded: Exclusions, rng: random.Random) -> Iterator[dict[str, Any]]:
    """Own answer positive; same focus, other question type: hard negatives (see the module docstring)."""
    rows, by_focus, index = medquad_training_rows(settings, excluded)
    answers = [row["answer"] for row in rows]
    chosen = rng.sample(range(len(rows)), min(MEDQUAD_QUESTIONS, len(rows)))
    for i in chosen:
        row = rows[i]
        question = row["question"].replace(" ?", "?")
        yield _pair("medquad", row["id"], question, row["answer"], 1)
        same_focus = [
            j
            for j in by_focus[row["focus"].lower()]
            if rows[j]["qtype"] != row["qtype"] and answers[j] != row["answer"]
        ]
        rng.shuffle(same_focus)
        for j in same_focus[:MEDQUAD_SAME_FOCUS_NEGATIVES]:
            yield _pair("medquad", row["id"], question, answers[j], 0)
        for j in index.top(question, 10):
            if rows[j]["focus"].lower() != row["focus"].lower():
                yield _pair("medquad", row["id"], question, answers[j], 0)
                break


def pubmedqa_pool(settings: Settings, excluded: Exclusions) -> tuple[list[dict[str, Any]], _BM25]:
    """The PubMedQA paragraphs a pair may use (none of the official test split) and a BM25 index over them."""
    paragraphs = [
        row
        for row in _rows(settings.shared_data_dir / "corpus" / "pubmedqa_contexts.jsonl")
        if str(row["pmid"]) not in excluded.pubmedqa_test_pmids
    ]
    return paragraphs, _BM25([row["text"] for row in paragraphs])


def pubmedqa_training(settings: Settings, excluded: Exclusions) -> Iterator[tuple[dict[str, Any], list[str]]]:
    """Each PQA-L question outside the official test split (and no repeat of an evaluation question), with
    its abstract's results/conclusion paragraphs and long answer: what answers it."""
    for row in _rows(settings.shared_data_dir / "eval" / "pubmedqa_pqal.jsonl"):
        pmid = str(row["pubid"])
        if row.get("official_split") == "test" or pmid in excluded.pubmedqa_test_pmids:
            continue
        if normalise_question(row["question"]) in excluded.question_texts:
            continue
        labels = [str(label).upper() for label in row.get("labels", [])]
        own = [
            text
            for text, label in zip(row["contexts"], labels, strict=False)
            if label in PUBMEDQA_ANSWER_LABELS
        ]
        if row.get("long_answer"):
            own.append(row["long_answer"])
        yield row, own


def pubmedqa_pairs(settings: Settings, excluded: Exclusions, rng: random.Random) -> Iterator[dict[str, Any]]:
    """Results/conclusion paragraphs of the question's own abstract positive, other abstracts negative."""
    paragraphs, index = pubmedqa_pool(settings, excluded)
    for row, own in pubmedqa_training(settings, excluded):
        pmid = str(row["pubid"])
        for text in own:
            yield _pair("pubmedqa", pmid, row["question"], text, 1)
        negatives = [j for j in index.top(row["question"], 20) if str(paragraphs[j]["pmid"]) != pmid]
        for j in negatives[:PUBMEDQA_NEGATIVES]:
            yield _pair("pubmedqa", pmid, row["question"], paragraphs[j]["text"], 0)


def dev_split(qid: str, share: float = 0.08) -> bool:
    """A stable, question-level dev split of the *training* sources (for early stopping and the int8 check):
    all pairs of a question fall on the same side."""
    digest = hashlib.sha256(qid.encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32 < share


def build_pairs(settings: Settings, seed: int = 13, stage3: bool = False) -> list[dict[str, Any]]:
    """Every training pair, in a deterministic order (shuffled with ``seed``); ``stage3`` adds the
    sentence-level sources of evals/reader_sentence_data.py (an experiment, not in the shipped reader)."""
    excluded = exclusions(settings)
    rng = random.Random(seed)
    pairs: list[dict[str, Any]] = []
    for make in (bioasq_pairs, medquad_pairs, pubmedqa_pairs):
        pairs.extend(make(settings, excluded, rng))
    rng.shuffle(pairs)
    # Appended after the shuffle with their own generator: the first three sources' pairs stay exactly those
    # the first reader was trained on, so its recipe still reproduces.
    from evals.reader_sentence_data import bioasq_ideal_pairs, bioasq_sentence_pairs, medquad_sentence_pairs

    pairs.extend(bioasq_sentence_pairs(settings, excluded, random.Random(seed + 1)))
    if stage3:  # appended last with their own generators, for the same reason
        pairs.extend(bioasq_ideal_pairs(settings, excluded, random.Random(seed + 2)))
        pairs.extend(medquad_sentence_pairs(settings, excluded, random.Random(seed + 3)))
    for pair in pairs:
        family = pair["source"].split("-")[0]  # a question's passage and sentence pairs: the same side
        pair["split"] = "dev" if dev_split(f"{family}:{pair['qid']}") else "train"
    return pairs


def write_pairs(pairs: Iterable[dict[str, Any]], out: Path) -> dict[str, int]:
    out.parent.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = defaultdict(int)
    tmp = out.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for pair in pairs:
            handle.write(json.dumps(pair, ensure_ascii=False) + "\n")
            counts[f"{pair['source']}/{pair['split']}/{'pos' if pair['label'] else 'neg'}"] += 1
    tmp.replace(out)
    return dict(sorted(counts.items()))


def training_manifest(settings: Settings, pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per training question with what the disjointness test needs: its text, and its gold snippet
    ids (BioASQ) or focus (MedQuAD). Shipped beside the weights (``data/reader/training_questions.jsonl.gz``)
    so the test runs without ``../shared/data``."""
    shared = settings.shared_data_dir
    questions = {(p["source"], p["qid"]): p["question"] for p in pairs}
    bioasq = {
        row["id"]: row
        for row in _rows(shared / "eval" / "bioasq_taskb_golden_7b_10b.jsonl")
        if any((source, row["id"]) in questions for source in ("bioasq", "bioasq-sentence", "bioasq-ideal"))
    }
    medquad = {
        row["id"]: row
        for row in _rows(shared / "corpus" / "medquad_answered.jsonl")
        if ("medquad", row["id"]) in questions or ("medquad-sentence", row["id"]) in questions
    }
    manifest = []
    for (source, qid), question in sorted(questions.items()):
        row: dict[str, Any] = {"source": source, "qid": qid, "question": question}
        if source.startswith("bioasq"):
            row["gold_snippet_ids"] = sorted(bioasq[qid].get("gold_snippet_ids", []))
        elif source.startswith("medquad"):
            row["focus"] = medquad[qid]["focus"]
        manifest.append(row)
    return manifest


def write_manifest(rows: list[dict[str, Any]], out: Path) -> None:
    """Deterministic gzip (no timestamp), so a rebuild with the same inputs gives the same bytes."""
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)
    with out.open("wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as handle:
        handle.write(payload.encode("utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/evigraph-reader/pairs.jsonl"))
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument(
        "--stage3",
        action="store_true",
        help="add the stage-3 sentence sources (evals/reports/reader_stage3.md; not in the shipped reader)",
    )
    args = parser.parse_args()
    settings = load_settings()
    pairs = build_pairs(settings, args.seed, args.stage3)
    counts = write_pairs(pairs, args.out)
    write_manifest(training_manifest(settings, pairs), args.manifest)
    print(json.dumps(counts, indent=1))
    print(f"wrote {sum(counts.values())} pairs to {args.out} and the question manifest to {args.manifest}")


if __name__ == "__main__":
    main()
