"""Strip the attention NaN guards from a shipped MiniLM ONNX model: the same scores, ~13 % less time.

Why: ``torch.onnx.export`` of a BERT model with PyTorch's scaled-dot-product attention writes, in every
layer, ``Where(IsNaN(softmax), 0, softmax)`` after the attention softmax — a guard for a query row whose keys
are all masked, which would give 0/0. Our inputs never have such a row (the attention mask covers keys, and
``[CLS]`` is never masked), so the guard returns the softmax unchanged; it still costs two elementwise passes
over a (batch × 12 heads × length × length) tensor per layer. Removing it leaves every other node and every
weight as exported and quantised, so the scores are the same bit for bit (checked here on real pairs before
anything is written). Measured on the evidence reader, 36 BioASQ snippets per MedQA question, 2 threads:
median 427 → 370 ms per turn's reading (five interleaved runs, load average ~2), logits identical
(max |Δ| 0.0). The fused-attention route of ``onnxruntime.transformers`` was no faster and moved the
logits (Pearson 0.993), so it is not used.

``evals/train_reader.py`` applies this to every export; this command applies it to a model that already
ships and rewrites its manifest's ``sha256`` and ``bytes``.

Usage (the ``train`` extra, for ``onnx``): python -m evals.strip_nan_guards data/reader [data/claims …]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from graphs.vectors.claim_checker import ClaimChecker
from graphs.vectors.reader import READER_MANIFEST

MAX_LENGTH = 192
"""Word pieces per pair, as the shipped manifests record it (``max_length``)."""
CHECK_PAIRS = 96
"""(question, passage) pairs scored by both models before a stripped file replaces a shipped one."""


def strip_nan_guards(model: Any) -> int:
    """Remove every ``Where(IsNaN(x), c, x)`` from ``model`` (an ``onnx.ModelProto``), in place.

    Each consumer of the ``Where`` reads ``x`` instead. Returns how many guards were removed. A ``Where``
    whose third input is not the ``IsNaN``'s own input is not a guard and is left alone.
    """
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    readers: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            readers[name] = readers.get(name, 0) + 1
    graph_outputs = {out.name for out in graph.output}
    replace: dict[str, str] = {}
    dropped: set[int] = set()
    for node in graph.node:
        if node.op_type != "Where" or len(node.input) != 3:
            continue
        test = producer.get(node.input[0])
        if test is None or test.op_type != "IsNaN" or test.input[0] != node.input[2]:
            continue
        if node.output[0] in graph_outputs or readers.get(test.output[0], 0) != 1:
            continue
        replace[node.output[0]] = node.input[2]
        dropped.update((id(node), id(test)))
    kept = [node for node in graph.node if id(node) not in dropped]
    for node in kept:
        for i, name in enumerate(node.input):
            if name in replace:
                node.input[i] = replace[name]
    del graph.node[:]
    graph.node.extend(kept)
    _drop_unused_constants(graph)
    return len(replace)


def _drop_unused_constants(graph: Any) -> None:
    """The constants only the removed guards read (the ``0`` each ``Where`` returned for NaN), as
    ``Constant`` nodes or initializers: onnxruntime warns on stderr about every unused one at load."""
    used = {name for node in graph.node for name in node.input} | {out.name for out in graph.output}
    nodes = [n for n in graph.node if n.op_type != "Constant" or any(out in used for out in n.output)]
    del graph.node[:]
    graph.node.extend(nodes)
    kept = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)


def sample_pairs(n: int = CHECK_PAIRS) -> list[tuple[str, str]]:
    """Real (question, passage) pairs from the shipped corpus: MedQuAD questions with their own answers and
    with BioASQ snippets, short and long, so batches of several widths are compared."""
    corpus = Path(__file__).resolve().parent.parent / "data" / "corpus"
    with gzip.open(corpus / "medquad_answered.jsonl.gz", "rt", encoding="utf-8") as handle:
        pages = [json.loads(line) for _, line in zip(range(n), handle, strict=False)]
    with gzip.open(corpus / "bioasq_snippets.jsonl.gz", "rt", encoding="utf-8") as handle:
        snippets = [json.loads(line)["text"] for _, line in zip(range(n), handle, strict=False)]
    pairs = [(p["question"], p["answer"][:600]) for p in pages[: n // 2]]
    pairs += [(p["question"], s) for p, s in zip(pages[n // 2 :], snippets, strict=False)]
    return pairs[:n]


def same_scores(
    original: Path, stripped: Path, pairs: list[tuple[str, str]], max_length: int = MAX_LENGTH
) -> float:
    """The largest absolute difference between the two models' outputs on ``pairs`` (in batches of 32,
    sorted by length as the reader runs them)."""
    import onnxruntime
    from tokenizers import Tokenizer

    from graphs.vectors.embedding import ASSETS_DIR, pad_encodings, session_options

    tokenizer = Tokenizer.from_file(str(ASSETS_DIR / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=max_length, strategy="only_second")
    tokenizer.no_padding()
    encodings = sorted(tokenizer.encode_batch(pairs), key=lambda e: len(e.ids))
    sessions = [
        onnxruntime.InferenceSession(str(path), session_options(2), providers=["CPUExecutionProvider"])
        for path in (original, stripped)
    ]
    worst = 0.0
    for start in range(0, len(encodings), 32):
        ids, mask, types = pad_encodings(encodings[start : start + 32], 0)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        a, b = (np.asarray(s.run(None, feeds)[0]) for s in sessions)
        worst = max(worst, float(np.abs(a - b).max()))
    return worst


def strip_file(source: Path, target: Path) -> int:
    """Write ``source`` without its NaN guards to ``target`` (atomically); returns the guards removed."""
    import onnx

    model = onnx.load(str(source))
    removed = strip_nan_guards(model)
    onnx.checker.check_model(model)
    handle, tmp = tempfile.mkstemp(dir=target.parent, suffix=".onnx.tmp")
    os.close(handle)
    onnx.save(model, tmp)
    os.replace(tmp, target)
    return removed


def strip_shipped(model_dir: Path, manifest_name: str) -> str:
    """Strip the model a manifest pins, check its scores are unchanged, and update the manifest."""
    manifest_path = model_dir / manifest_name
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    model_file = model_dir / str(manifest["model"])
    with tempfile.TemporaryDirectory(dir=model_dir) as tmp:
        candidate = Path(tmp) / model_file.name
        removed = strip_file(model_file, candidate)
        if removed == 0:
            return f"{model_file}: no NaN guards, unchanged"
        worst = same_scores(model_file, candidate, sample_pairs(), int(manifest["max_length"]))
        if worst != 0.0:
            raise SystemExit(f"{model_file}: stripped scores differ by up to {worst}; nothing written")
        os.replace(candidate, model_file)
    data = model_file.read_bytes()
    manifest["sha256"] = hashlib.sha256(data).hexdigest()
    manifest["bytes"] = len(data)
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return (
        f"{model_file}: {removed} NaN guards removed, scores identical on {CHECK_PAIRS} pairs; "
        f"{len(data)} bytes, sha256 {manifest['sha256']}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_dirs", type=Path, nargs="+", help="e.g. data/reader data/claims")
    args = parser.parse_args(argv)
    for model_dir in args.model_dirs:
        claims = (model_dir / ClaimChecker.MANIFEST).exists()
        manifest = ClaimChecker.MANIFEST if claims else READER_MANIFEST
        print(strip_shipped(model_dir, manifest))


if __name__ == "__main__":
    main()
