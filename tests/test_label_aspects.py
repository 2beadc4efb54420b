"""Drug-label sections become aspects (issue 21, item 3): after `kb add` of real labels, a side-effects
question is answered from the label's adverse-reaction/warning sections and a pregnancy question from its
pregnancy section — the sufficiency check counts the section's label as the asked aspect and the key
sentences come from it. Before the labels are added, the same questions end "not covered".

Real fixtures (tests/fixtures/importers/: FDA's haloperidol SPL, an openFDA Vyvanse label), the real
importer, builder, reader and answered model, offline.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from graphs.building.incremental import add_documents
from tests.conftest import offline_answers

FIXTURES = Path(__file__).parent / "fixtures" / "importers"
SIDE_EFFECTS = "What are the side effects of haloperidol?"
PREGNANCY = "Is Vyvanse safe during pregnancy?"


@pytest.fixture(scope="module")
def labelled(slice_kb_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("labels") / "kb"
    shutil.copytree(slice_kb_root, root, symlinks=True)
    for name in ("spl_haloperidol.xml", "openfda_vyvanse.jsonl"):
        add_documents(root, FIXTURES / name)
    return root


def cited_sections(answer: dict[str, Any]) -> list[str]:
    """The titles of the passages the direct answer's key sentences cite ("Haloperidol — Warnings")."""
    shown = {s["document_id"]: s for s in answer["sources"]}
    titles = [str(s.get("title", "")) for s in shown.values()]
    return [t for t in titles if " — " in t]


def test_label_sections_answer_their_aspect(labelled: Path, tmp_path: Path) -> None:
    side, pregnancy = offline_answers(labelled, tmp_path, SIDE_EFFECTS, PREGNANCY)
    assert side["status"] == "answered", side["text"][:600]
    assert "not covered" not in side["text"]
    key = side["verdict"]
    assert "side effects" not in key.get("missing_labels", [])
    side_titles = cited_sections(side)
    assert side_titles and all(t.startswith("Haloperidol") for t in side_titles[:2])
    assert any(
        t.endswith(("Adverse reactions", "Warnings", "Warnings and precautions", "Boxed warning"))
        for t in side_titles
    )
    assert pregnancy["status"] == "answered", pregnancy["text"][:600]
    assert any(t.endswith("Pregnancy") for t in cited_sections(pregnancy))
    direct = pregnancy["text"].split("Supporting passages")[0].lower()
    assert "pregnan" in direct


def test_without_the_labels_the_same_questions_are_not_covered(slice_kb_root: Path, tmp_path: Path) -> None:
    side, _ = offline_answers(slice_kb_root, tmp_path, SIDE_EFFECTS, PREGNANCY)
    assert side["status"] == "insufficient"
    assert "holds no drug labels" in side["text"]
