"""``kb add`` and ``kb build --corpus`` with the real-format importers, on a copy of the real slice KB: each
format's documents land in the KB with their labels, and a question finds them — the adverse-reactions
section for a side-effects question, the pregnancy section for a pregnancy question (issue 21, items 2–3)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent.frontends.cli_kb import parse_source
from graphs.building.builder import BuildConfig, build_kb
from graphs.building.incremental import UpdateResult, add_documents
from graphs.building.loaders import LoadError
from graphs.building.loaders.pubmed_passages import SOURCE as RESEARCH_LITERATURE
from graphs.kb import KnowledgeBase
from tests.test_importers import HALOPERIDOL, OPENFDA, OPENFDA_LINES, PUBMED, SPL, SPL_EMPTY, VYVANSE
from tests.test_kb_updates import _rows
from tests.tiny_kb import write_tiny_sources
from tools.evidence_rank import EvidenceRankRequest, evidence_rank

REPO = Path(__file__).resolve().parent.parent


def _notes(folder: Path) -> Path:
    folder.mkdir()
    (folder / "warfarin.html").write_text(
        "<html><head><title>Warfarin and vitamin K</title><script>document.write('pwned')</script></head>"
        "<body><p>Keep the vitamin K in your diet steady while taking warfarin; leafy greens change the INR."
        "</p><script>alert('pwned')</script></body></html>",
        encoding="utf-8",
    )
    (folder / "scan.jpg").write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00")
    return folder


@pytest.fixture(scope="module")
def imported(slice_kb_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A slice KB copy with every fixture added: four by ``add_documents``, the folder by the CLI."""
    from agent.frontends.cli import app

    root = tmp_path_factory.mktemp("importers") / "kb"
    shutil.copytree(slice_kb_root, root, symlinks=True)
    added: dict[str, UpdateResult] = {
        name: add_documents(root, path)
        for name, path in (("spl", SPL), ("openfda", OPENFDA), ("lines", OPENFDA_LINES), ("pubmed", PUBMED))
    }
    notes = _notes(root.parent / "notes")
    cli = CliRunner().invoke(app, ["kb", "add", str(notes), "--kb-dir", str(root)], env={"COLUMNS": "300"})
    return {"root": root, "added": added, "cli": cli}


def _top(root: Path, question: str, k: int = 3) -> list[tuple[str, str]]:
    kb = KnowledgeBase.open(root)
    try:
        result = evidence_rank(kb, EvidenceRankRequest(question=question, top_k=k))
        return [(e.document_id, e.label) for e in result.evidence]
    finally:
        kb.close()


def test_kb_add_takes_every_format_and_the_folder_from_the_command_line(imported: dict[str, Any]) -> None:
    added = {name: result.added_documents for name, result in imported["added"].items()}
    assert len(added["spl"]) == 8 and all(d.startswith(f"label:{HALOPERIDOL}:") for d in added["spl"])
    assert len(added["openfda"]) == 8 and len(added["lines"]) == 8
    assert added["pubmed"] == ["pmid:12269810", "pmid:21179314"]
    assert "PMID 30299937 has no abstract" in imported["added"]["pubmed"].report.summary()[0]
    cli = imported["cli"]
    assert cli.exit_code == 0, cli.output
    assert "added 1," in cli.output and "scan.jpg: not text (a binary file)" in cli.output
    labels = dict(
        _rows(
            imported["root"],
            "SELECT label, COUNT(*) FROM evidence WHERE document_id LIKE 'label:%' GROUP BY 1",
        )
    )
    assert {
        "side effects",
        "pregnancy",
        "interactions",
        "treatment",
        "contraindications",
        "mechanism",
    } <= set(labels)


def test_a_label_section_hangs_on_its_drug_as_a_compound(imported: dict[str, Any]) -> None:
    kb = KnowledgeBase.open(imported["root"])
    try:
        (entity,) = {
            r[0]
            for r in _rows(
                imported["root"],
                "SELECT keyword_entity FROM evidence WHERE document_id LIKE ?",
                f"label:{VYVANSE}:%",
            )
        }
        assert kb.store.get_entities([entity])[entity].type == "Compound"
    finally:
        kb.close()


@pytest.mark.parametrize(
    ("question", "document", "label"),
    [
        (
            "What are the side effects of haloperidol?",
            f"label:{HALOPERIDOL}:adverse_reactions",
            "side effects",
        ),
        ("What are the side effects of Vyvanse?", f"label:{VYVANSE}:adverse_reactions", "side effects"),
        ("Is it safe to take lisdexamfetamine during pregnancy?", f"label:{VYVANSE}:pregnancy", "pregnancy"),
        ("Can haloperidol be used in pregnancy?", f"label:{HALOPERIDOL}:pregnancy", "pregnancy"),
        (
            "What should I avoid taking with Vyvanse? drug interactions",
            f"label:{VYVANSE}:drug_interactions",
            "interactions",
        ),
    ],
)
def test_a_question_about_an_aspect_finds_that_section(
    imported: dict[str, Any], question: str, document: str, label: str
) -> None:
    top = _top(imported["root"], question)
    assert (document, label) in top, top


def test_pubmed_and_folder_documents_are_found_and_scripts_were_never_stored(
    imported: dict[str, Any],
) -> None:
    root = imported["root"]
    assert (
        _top(root, "crystal structure of apolipoprotein A-II with beta-octyl glucoside")[0][0]
        == "pmid:12269810"
    )
    assert _top(root, "Does vitamin K in the diet change warfarin?")[0][0] == "file:notes/warfarin.html"
    stored = [t for (t,) in _rows(root, "SELECT text FROM documents WHERE id LIKE 'file:%'")]
    assert stored == [
        "Keep the vitamin K in your diet steady while taking warfarin; leafy greens change the INR."
    ]
    (title,) = _rows(root, "SELECT title FROM documents WHERE id = 'file:notes/warfarin.html'")[0]
    assert title == "Warfarin and vitamin K"
    # an imported abstract is cited as research literature, and its evidence is ``general`` (not hidden
    # from a treatment question as a ``research`` passage's sentences are)
    assert set(_rows(root, "SELECT source FROM documents WHERE id LIKE 'pmid:%'")) == {(RESEARCH_LITERATURE,)}
    assert set(_rows(root, "SELECT label FROM evidence WHERE document_id LIKE 'pmid:%'")) == {("general",)}


def test_re_adding_is_a_no_op_and_a_later_file_with_the_same_pmid_replaces_it(
    imported: dict[str, Any], tmp_path: Path
) -> None:
    root = tmp_path / "kb"
    shutil.copytree(imported["root"], root, symlinks=True)
    again = add_documents(root, SPL)
    assert again.added_documents == [] and len(again.unchanged_documents) == 8
    newer = tmp_path / "pubmed_update.xml"
    newer.write_text(
        "<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>12269810</PMID><Article><ArticleTitle>Revised"
        "</ArticleTitle><Abstract><AbstractText>A corrected abstract.</AbstractText></Abstract></Article>"
        "</MedlineCitation></PubmedArticle></PubmedArticleSet>"
    )
    assert add_documents(root, newer).added_documents == ["pmid:12269810"]
    assert _rows(root, "SELECT title, text FROM documents WHERE id = 'pmid:12269810'") == [
        ("Revised", "A corrected abstract.")
    ]
    with pytest.raises(LoadError, match=r"(?s)No usable document.*has no section EviGraph reads"):
        add_documents(root, SPL_EMPTY)


def test_kb_build_reads_the_formats_with_and_without_a_format_suffix(tmp_path: Path) -> None:
    kg, _ = write_tiny_sources(tmp_path / "src")
    second = tmp_path / "second.xml"  # the same PMID in a later file: the later one is kept, as in kb add
    second.write_text(
        PUBMED.read_text(encoding="utf-8").replace("Structures of apolipoprotein", "Revised: apolipoprotein")
    )
    config = BuildConfig(
        kg_sources=[(kg, None)],
        corpus_sources=[(SPL, None), (OPENFDA_LINES, "openfda"), (PUBMED, "pubmed"), (second, None)],
        name="importers",
    )
    result = build_kb(tmp_path / "kb", config)
    titles = dict(_rows(tmp_path / "kb", "SELECT id, title FROM documents"))
    assert len(titles) == 8 + 8 + 2
    assert titles["pmid:12269810"].startswith("Revised: apolipoprotein")
    assert any("pmid:12269810 appears more than once" in line for line in result.report.summary(50))


def _cli_add(source: str, kb: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent.frontends.cli", "kb", "add", source, *extra, "--kb-dir", str(kb)],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        env={**os.environ, "COLUMNS": "300"},
        timeout=300,
    )


def test_kb_add_takes_a_format_suffix_and_a_path_that_holds_an_equals_sign(kb_copy: Path) -> None:
    """``evigraph kb add labels.json=openfda`` works as ``--format openfda`` does (issue 21: "a ``=FORMAT``
    suffix forces it"); a file whose own name holds '=' is still read as the path it is."""
    forced = _cli_add(f"{OPENFDA_LINES}=openfda", kb_copy)
    assert forced.returncode == 0, forced.stderr
    assert "added 8," in forced.stderr
    wrong = _cli_add(f"{PUBMED}=openfda", kb_copy)  # the suffix is obeyed: XML read as JSON fails clearly
    assert wrong.returncode == 2 and "malformed JSON" in wrong.stderr and "Traceback" not in wrong.stderr
    clash = _cli_add(f"{PUBMED}=openfda", kb_copy, "--format", "pubmed")
    assert clash.returncode == 2 and "--format says pubmed" in clash.stderr
    named = kb_copy.parent / "export=2024.xml"
    shutil.copyfile(PUBMED, named)
    taken_whole = _cli_add(str(named), kb_copy)
    assert taken_whole.returncode == 0, taken_whole.stderr
    assert "added 2," in taken_whole.stderr


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("labels.json=openfda", ("labels.json", "openfda")),
        ("a=b/labels.json=openfda", ("a=b/labels.json", "openfda")),
        ("labels.json", ("labels.json", None)),
        ("labels.json=", ("labels.json", None)),
        ("runs/date=2024/notes", ("runs/date=2024/notes", None)),  # not a format word: a path
    ],
)
def test_a_source_argument_splits_at_its_last_equals_sign(
    value: str, expected: tuple[str, str | None]
) -> None:
    path, fmt = parse_source(value)
    assert (str(path), fmt) == expected


def test_a_source_path_that_exists_with_an_equals_sign_is_taken_whole(tmp_path: Path) -> None:
    existing = tmp_path / "labels.json=openfda"
    existing.write_text("{}", encoding="utf-8")
    assert parse_source(str(existing)) == (existing, None)
