"""The streaming claim of the importers (issue 21): a 100 000-article PubMed XML file (46 MB) and a
20 000-label openFDA ``{"results": [...]}`` file (11 MB), generated here, are read while memory grows by a
few MB; loading either whole (``ElementTree.parse``, ``json.load``) would hold the entire file as objects,
several times its size.

The files are written by evals/importer_stress.py (shared with evals/bench_importers.py, which measures
throughput too). How memory is measured: the openFDA file under ``tracemalloc`` (peak Python heap growth
while reading). The PubMed file in a child process by its peak resident memory (``VmHWM``) after the
imports versus after reading — not ``ru_maxrss``, which in a child starts at its parent's peak, so under a
large pytest process it showed no growth whatever was read; and not ``tracemalloc``, which traces each of
the ~10 million allocations of 100 000 articles and makes that read take 16 s instead of 2.5 s (measured
once by hand: tracemalloc peak 0.18 MB for the 100 000 articles; and the same RSS measure grows by 206 MB
when the file is read with ``ElementTree.parse``, so it does see a whole load).
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from pathlib import Path

from evals.importer_stress import probe, write_openfda, write_pubmed
from graphs.building.loaders import LoadReport, detect_corpus_loader

ARTICLES = 100_000
LABELS = 20_000
PEAK_LIMIT = 10 * 1024 * 1024
"""Memory growth allowed while streaming (bytes): a fixed bound, below the size of either stress file."""


def _stream(path: Path) -> tuple[int, int, LoadReport]:
    """(documents read, peak heap growth in bytes) for reading ``path`` through its detected loader."""
    report = LoadReport()
    loader = detect_corpus_loader(path)
    docs: Iterator[object] = loader.load(path, report)
    tracemalloc.start()
    try:
        count = sum(1 for _ in docs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return count, peak, report


def test_a_100k_article_pubmed_file_streams_in_constant_memory(tmp_path: Path) -> None:
    path = write_pubmed(tmp_path / "baseline.xml", ARTICLES)
    size = path.stat().st_size
    result = probe(path, timeout=300)
    assert result["documents"] == ARTICLES and result["issues"] == 0
    growth = result["rss_peak"] - result["rss_before"]
    assert growth < PEAK_LIMIT < size, f"peak RSS grew {growth / 1e6:.1f} MB for a {size / 1e6:.0f} MB file"
    print(f"PubMed: {ARTICLES} articles, peak RSS growth {growth / 1e6:.1f} MB, file {size / 1e6:.0f} MB")


def test_a_20k_label_openfda_file_streams_in_constant_memory(tmp_path: Path) -> None:
    path = write_openfda(tmp_path / "drug-label-0001-of-0001.json", LABELS)
    size = path.stat().st_size
    count, peak, report = _stream(path)
    assert count == 2 * LABELS and report.issues == []
    assert peak < PEAK_LIMIT < size, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.0f} MB file"
    print(f"openFDA: {count} documents, tracemalloc peak {peak / 1e6:.1f} MB, file {size / 1e6:.0f} MB")
