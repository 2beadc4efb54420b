"""The offline MCQ calibration: it keeps a gate only when accuracy among answered beats chance with a margin,
never credits a tie broken by option order, and its committed splits are fixed and disjoint."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from evals.datasets.answers import MCQ_FILES, load_mcq
from evals.mcq_gate import MIN_ANSWERED, Row, calibrate, gate_stats, pick
from evals.mcq_offline import SPLITS_FILE, make_splits

SHARED_SLICES = Path(__file__).parent / "fixtures" / "shared"
LETTERS = ["A", "B", "C", "D"]


def row(i: int, gold: str, kg: dict[str, float] | None = None, ir: dict[str, float] | None = None) -> Row:
    options = [
        {"letter": k, "kg": (kg or {}).get(k, 0.0), "ir": (ir or {}).get(k, 0.0), "dense": 0.0}
        for k in LETTERS
    ]
    return Row("medqa", f"q{i}", gold, options, negated=False, parsed=True, product_choice=None, seconds=0.0)


def test_a_signal_that_separates_the_gold_gets_a_gate_and_only_where_it_fires() -> None:
    rng = random.Random(1)
    rows = [row(i, g, kg={g: 1.0}) for i, g in enumerate(rng.choice(LETTERS) for _ in range(40))]
    rows += [row(100 + i, rng.choice(LETTERS)) for i in range(60)]  # no signal: all options tie
    chosen = calibrate(rows)
    assert chosen is not None
    weights, margin = chosen
    assert weights["kg"] > 0 and margin > 0
    stats = gate_stats(rows, weights, margin)
    assert stats["answered"] == 40 and stats["accuracy"] == 1.0 and stats["coverage"] == pytest.approx(0.4)
    assert stats["ci"][0] > stats["chance"]


def test_signals_unrelated_to_the_gold_give_no_gate() -> None:
    rng = random.Random(2)
    rows = [
        row(i, rng.choice(LETTERS), ir={k: rng.random() for k in LETTERS}, kg={rng.choice(LETTERS): 1.0})
        for i in range(300)
    ]
    assert calibrate(rows) is None


def test_a_tie_is_never_answered_and_earns_only_its_share_un_gated() -> None:
    tied = row(0, "A")  # all signals equal: option order would pick A, which is gold here
    _, lead, credit = pick(tied, {"kg": 1.0, "ir": 10.0, "dense": 0.0})
    assert lead == 0.0 and credit == pytest.approx(0.25)
    stats = gate_stats([tied] * MIN_ANSWERED, {"kg": 1.0, "ir": 0.0, "dense": 0.0}, 0.0)
    assert stats["answered"] == 0 and stats["ungated"] == pytest.approx(0.25)


def test_negated_questions_are_never_answered() -> None:
    negated = row(0, "B", kg={"B": 1.0})
    negated.negated = True
    assert gate_stats([negated], {"kg": 1.0, "ir": 0.0, "dense": 0.0}, 0.5)["answered"] == 0


def test_the_committed_splits_are_fixed_disjoint_and_the_same_size() -> None:
    committed = json.loads(SPLITS_FILE.read_text(encoding="utf-8"))
    assert set(committed) == set(MCQ_FILES)
    n = len(committed["medqa"]["calibration"])
    for split in committed.values():
        assert not set(split["calibration"]) & set(split["heldout"])
        assert len(set(split["calibration"])) == len(set(split["heldout"])) == n
    assert all(i.startswith("medqa-us-test-") for i in committed["medqa"]["heldout"])


def test_splits_are_drawn_reproducibly_from_the_real_items() -> None:
    eval_dir = SHARED_SLICES / "eval"  # the shipped slices of ../shared/data/eval (tests need no ../shared)
    first, again = make_splits(eval_dir, 5), make_splits(eval_dir, 5)
    assert first == again
    for name, split in first.items():
        ids = {item.id for item in load_mcq(name, eval_dir)}
        assert not set(split["calibration"]) & set(split["heldout"])
        assert set(split["calibration"]) | set(split["heldout"]) <= ids
        assert len(split["calibration"]) == 5 and len(split["heldout"]) == min(5, len(ids) - 5)
