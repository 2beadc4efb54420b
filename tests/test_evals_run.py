"""End to end: the evaluation runner on the CI slices writes a report with every system's row."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evals.baselines.registry import SYSTEMS
from evals.run import main


def _system_rows(markdown: str) -> set[str]:
    return {line.split("|")[1].strip() for line in markdown.splitlines() if line.startswith("| ")}


def test_bioasq_ci_report_has_every_system(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    code = main(
        [
            "retrieval",
            "--dataset",
            "bioasq-ci",
            "--systems",
            "all",
            "--k",
            "1,5,10",
            "--limit",
            "3",
            "--out",
            str(out),
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
    )
    assert code == 0
    report = (out / "retrieval_bioasq-ci.md").read_text(encoding="utf-8")
    assert set(SYSTEMS) <= _system_rows(report)
    assert "## Where the graph loses gold" in report
    assert (out / "retrieval_bioasq-ci_recall.png").stat().st_size > 0
    assert (out / "retrieval_bioasq-ci_spread.png").stat().st_size > 0
    numbers = json.loads((out / "retrieval_bioasq-ci.json").read_text(encoding="utf-8"))
    assert numbers["context"]["questions_scored"] == 3
    by_name = {s["system"]: s for s in numbers["systems"]}
    assert [s["system"] for s in numbers["systems"]] == list(SYSTEMS)
    # real questions over their own 300-snippet pool: the text baselines find gold for them
    assert by_name["bm25"]["means"]["passage"]["success@10"] >= 2 / 3
    assert by_name["vector"]["means"]["passage"]["success@10"] >= 2 / 3
    for system in by_name.values():
        assert system["errors"] == 0
        assert 0.0 <= system["means"]["document"]["recall@10"] <= 1.0


def test_medquad_consumer_ci_on_the_slice_kb(slice_kb_root: Path, tmp_path: Path) -> None:
    code = main(
        [
            "retrieval",
            "--dataset",
            "medquad-consumer-ci",
            "--systems",
            "bm25,vector,evigraph,evigraph-graph-only",
            "--kb-root",
            str(slice_kb_root),
            "--limit",
            "4",
            "--no-diagnose",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0
    report = (tmp_path / "retrieval_medquad-consumer-ci.md").read_text(encoding="utf-8")
    assert {"bm25", "vector", "evigraph", "evigraph-graph-only"} <= _system_rows(report)
    numbers = json.loads((tmp_path / "retrieval_medquad-consumer-ci.json").read_text(encoding="utf-8"))
    assert numbers["context"]["questions_scored"] == 4
    assert numbers["context"]["kb_root"] == str(slice_kb_root)


def test_bad_arguments_exit_1(tmp_path: Path) -> None:
    assert main(["retrieval", "--dataset", "bioasq-ci", "--systems", "nope", "--out", str(tmp_path)]) == 1
    assert main(["retrieval", "--dataset", "bioasq-ci", "--k", "x", "--out", str(tmp_path)]) == 1
    missing = tmp_path / "no-kb"
    assert (
        main(
            ["retrieval", "--dataset", "medquad-consumer", "--kb-root", str(missing), "--out", str(tmp_path)]
        )
        == 1
    )


def test_answers_say_plainly_that_they_need_an_llm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    previous = os.environ.get("EVIGRAPH_LLM_ENABLED")
    os.environ["EVIGRAPH_LLM_ENABLED"] = "false"  # no LLM in this process, whatever the machine has set
    try:
        code = main(["answers", "--dataset", "medqa", "--out", str(tmp_path)])
    finally:
        if previous is None:
            os.environ.pop("EVIGRAPH_LLM_ENABLED", None)
        else:
            os.environ["EVIGRAPH_LLM_ENABLED"] = previous
    assert code == 2
    assert "needs an LLM" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
    assert main(["answers", "--dataset", "nope", "--out", str(tmp_path)]) == 1
