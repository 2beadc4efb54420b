"""What every benchmark script shares: one percentile convention and one way to publish a report.

Why: the reports are compared with each other (p95 of a tool vs p95 of a consult turn), so they must compute
percentiles the same way — numpy's linear interpolation, ``q`` in 0–100.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0–100, linear interpolation); NaN for no values."""
    return float(np.percentile(np.asarray(values, dtype=float), q)) if len(values) else float("nan")


def publish(report: str, out: Path | None) -> None:
    """Print the report, and write it to ``out`` too when one is given."""
    sys.stdout.write(report)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(report, encoding="utf-8")
