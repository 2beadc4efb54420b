"""The README's first command, for real: on an empty data dir `evigraph ask` builds the default KB from the
shipped data/ (core profile) and answers with citations, sources and the KB version."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def ask_json(
    question: str, env: dict[str, str], timeout: int, task: str = "auto"
) -> subprocess.CompletedProcess[str]:
    """`evigraph ask --json [--task TASK] QUESTION` as a user runs it (a child process, its environment)."""
    return subprocess.run(
        [sys.executable, "-m", "agent.frontends.cli", "ask", "--json", "--task", task, question],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=timeout,
        check=False,
    )


@pytest.mark.slow
def test_first_ask_builds_the_default_kb_and_answers_with_citations(tmp_path: Path) -> None:
    env = {**os.environ, "EVIGRAPH_DATA_DIR": str(tmp_path / "data")}
    env.pop("EVIGRAPH_KB_DIR", None)
    for key in ("EVIGRAPH_LLM_BASE_URL", "OPENAI_BASE_URL", "EVIGRAPH_LLM_API_KEY", "OPENAI_API_KEY"):
        env.pop(key, None)
    proc = ask_json("How is gout treated?", env, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "building the default one" in " ".join(proc.stderr.split())  # rich wraps lines
    out = json.loads(proc.stdout)
    answer = out["answer"]
    assert answer["mode"] == "offline" and answer["kb_version"].startswith("default-core-")
    assert answer["sources"] and answer["evidence_ids"]
    assert "gout" in answer["text"].lower()
    manifest = json.loads((tmp_path / "data" / "kb" / "current" / "manifest.json").read_text())
    assert manifest["profile"] == "core" and manifest["counts"]["documents"] > 5000
    # the shipped embedding cache served (nearly) everything: no 10-minute embedding on first use
    assert manifest["embedding_cache"]["hits"] > 10 * manifest["embedding_cache"]["misses"]
    # Issue 18: a drug the KB does not know is "insufficient", and no generic-node fact heads the answer.
    proc = ask_json("What disease can be treated with lenacapavir?", env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    answer = json.loads(proc.stdout)["answer"]
    assert answer["status"] == "insufficient"
    assert answer["verdict"]["method"].startswith("calibrated model")
    assert "Quetiapine" not in answer["text"] and "for disease" not in answer["text"].lower()
    # Issue 22: the AF/aspirin reply's evidence block is read from the atrial-fibrillation pages, and shows
    # that warfarin and the newer blood thinners cut stroke in AF, not a diabetes page's aspirin advice.
    proc = ask_json(
        "Colleague says: for a patient with atrial fibrillation and CHA2DS2-VASc of 3, aspirin alone is "
        "adequate stroke prevention.",
        env,
        timeout=600,
        task="check_reply",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    answer = json.loads(proc.stdout)["answer"]
    shown = " ".join(s["text"] for s in answer["direct"]["sentences"])
    assert "warfarin or new blood thinners reduces the rate of stroke" in shown, shown
    assert "Your doctor can tell you" not in shown and "not safe for everyone" not in shown, shown
    # A transmission claim is decided by Disease Ontology's curated edge, cited as its chain (a vector the
    # KG does not list is never a KG "contradicted"); the dengue claim is contradicted by a passage that
    # says it in its own words, negated (agent/nodes/claim_restatement.py).
    proc = ask_json(
        "Colleague says: Lyme disease is spread by ticks, and dengue spreads from person to person.",
        env,
        timeout=600,
        task="check_reply",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    claims = json.loads(proc.stdout)["answer"]["reply_check"]["claims"]
    assert [c["verdict"] for c in claims] == ["supported", "contradicted"], claims
    assert claims[0]["decided_by"] == "knowledge graph" and "transmitted_by" in " ".join(
        claims[0]["kg_facts"]
    )
    assert claims[1]["decided_by"] == "restatement"
    assert claims[1]["quotes"] == ["Dengue does not spread from person to person."]
    # A yes/no question about a linked treatment is answered only by evidence that names it: hormone
    # *replacement* therapy is not the breast-cancer hormone therapy (tamoxifen) the reader read as answering.
    proc = ask_json(
        "Should a woman with a history of breast cancer take hormone replacement therapy?", env, 600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    answer = json.loads(proc.stdout)["answer"]
    assert answer["status"] == "insufficient", answer["text"]
    assert "a passage naming Hormone Replacement Therapy" in answer["verdict"]["missing_labels"], answer[
        "verdict"
    ]
    # A treatment question leads with the sentence that names the drugs (agent/nodes/treatment_lead.py).
    proc = ask_json("What is the recommended treatment for latent tuberculosis?", env, 600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    answer = json.loads(proc.stdout)["answer"]
    assert answer["status"] == "answered", answer["text"]
    assert "isoniazid" in answer["direct"]["sentences"][0]["text"], answer["direct"]["sentences"]
