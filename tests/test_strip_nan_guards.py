"""The attention NaN guards come out of an ONNX model and nothing else changes (evals/strip_nan_guards.py).

Real models: the shipped reader and claim checker carry no guard; the shipped reader with guards put back
(as ``torch.onnx.export`` writes them) scores real pairs exactly as without them once stripped; a small
graph shows that a ``Where`` that is not a guard stays.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper

from evals.strip_nan_guards import same_scores, sample_pairs, strip_file, strip_nan_guards

DATA = Path(__file__).resolve().parent.parent / "data"
SHIPPED = [DATA / "reader" / "reader-minilm-int8.onnx", DATA / "claims" / "claims-minilm-int8.onnx"]


def with_guards(model: onnx.ModelProto) -> int:
    """Put ``Where(IsNaN(s), 0, s)`` after every Softmax, as the SDPA export does; returns how many."""
    graph = model.graph
    nodes: list[onnx.NodeProto] = []
    added = 0
    for node in graph.node:
        nodes.append(node)
        if node.op_type != "Softmax":
            continue
        raw = node.output[0]
        guarded = f"{raw}_guarded"
        for other in graph.node:
            for i, name in enumerate(other.input):
                if name == raw:
                    other.input[i] = guarded
        zero = f"{raw}_zero"
        nodes.append(helper.make_node("Constant", [], [zero], value=helper.make_tensor(zero, 1, [], [0.0])))
        nodes.append(helper.make_node("IsNaN", [raw], [f"{raw}_isnan"]))
        nodes.append(helper.make_node("Where", [f"{raw}_isnan", zero, raw], [guarded]))
        added += 1
    del graph.node[:]
    graph.node.extend(nodes)
    return added


def ops(model: onnx.ModelProto) -> list[str]:
    return [node.op_type for node in model.graph.node]


def test_the_shipped_reader_and_claim_checker_carry_no_nan_guard() -> None:
    for path in SHIPPED:
        assert "IsNaN" not in ops(onnx.load(str(path))), path


def test_a_guarded_reader_stripped_scores_real_pairs_exactly_as_before(tmp_path: Path) -> None:
    model = onnx.load(str(SHIPPED[0]))
    assert with_guards(model) == 6  # one per attention layer of MiniLM-L6
    guarded = tmp_path / "guarded.onnx"
    onnx.save(model, str(guarded))
    stripped = tmp_path / "stripped.onnx"
    assert strip_file(guarded, stripped) == 6
    result = onnx.load(str(stripped))
    assert "IsNaN" not in ops(result) and ops(result).count("Where") == ops(model).count("Where") - 6
    assert same_scores(guarded, stripped, sample_pairs(24)) == 0.0


def test_a_where_that_is_not_a_guard_stays() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])
    nodes = [
        helper.make_node("Softmax", ["x"], ["s"], axis=-1),
        helper.make_node("IsNaN", ["s"], ["nan"]),
        helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("zero", 1, [], [0.0])),
        helper.make_node("Where", ["nan", "zero", "s"], ["guarded"]),  # a guard
        helper.make_node("IsNaN", ["x"], ["nan_x"]),
        helper.make_node("Where", ["nan_x", "zero", "s"], ["not_a_guard"]),  # tests x, returns s
        helper.make_node("Add", ["guarded", "not_a_guard"], ["y"]),
        helper.make_node("Identity", ["nan_x"], ["z_bool"]),
        helper.make_node("Cast", ["z_bool"], ["z"], to=TensorProto.FLOAT),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "g", [x], [y, z]), opset_imports=[helper.make_opsetid("", 17)]
    )
    feeds = {"x": np.array([[1.0, 2.0, np.nan], [0.5, -1.0, 3.0]], dtype=np.float32)}
    before = onnxruntime.InferenceSession(model.SerializeToString()).run(None, feeds)
    assert strip_nan_guards(model) == 1
    onnx.checker.check_model(model)
    assert ops(model).count("Where") == 1 and ops(model).count("IsNaN") == 1
    after = onnxruntime.InferenceSession(model.SerializeToString()).run(None, feeds)
    # The NaN row differs only where the guard used to zero a NaN; every finite row is unchanged.
    assert np.array_equal(before[0][1], after[0][1]) and np.array_equal(before[1], after[1])
