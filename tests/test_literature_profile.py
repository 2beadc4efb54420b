"""The ``literature`` profile (issue 21): PubMed passages shipped in data/, read as research literature,
with their vectors shipped too, and a KB that answers a research question citing PubMed.

Real shipped files, the real loader, the real builder and embedder (through the shipped caches).
"""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.consult import Consultant
from graphs.building.builder import BuildConfig, build_kb, load_documents, make_evidence
from graphs.building.default_kb import LITERATURE_FILES, literature_sources, shipped_embedding_caches
from graphs.building.embed_stage import evidence_text
from graphs.building.loaders import LoadReport, detect_corpus_loader
from graphs.building.loaders.pubmed_passages import SOURCE, PubMedPassageLoader
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings
from graphs.vectors.embedding import get_embedder
from graphs.vectors.embedding_cache import EmbeddingCache, text_key
from tests.conftest import SLICE, TEST_EMBEDDING_CACHE, offline_answers

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
SETTINGS = Settings(source_data_dir=DATA, embedding_backend="onnx")


def test_the_shipped_passages_are_detected_and_read_as_research_literature() -> None:
    counts = {}
    for path, fmt in literature_sources(DATA):
        assert isinstance(detect_corpus_loader(path), PubMedPassageLoader)  # by content, not by name
        report = LoadReport()
        docs = load_documents([(path, fmt)], report, None)
        assert report.issues == []
        counts[path.name] = len(docs)
        for doc in docs[:50]:
            pmid = doc.title.removeprefix("PubMed ")
            assert pmid.isdigit() and doc.id.startswith("pubmed:")
            assert doc.source == SOURCE and doc.url == f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"
            assert doc.license and doc.text.strip()
    assert counts == {"bioasq_snippets.jsonl.gz": 20_585, "pubmedqa_contexts.jsonl.gz": 3_358}


def test_a_generic_documents_file_is_still_read_as_documents(tmp_path: Path) -> None:
    """A user's own JSONL with a title keeps its title: only title-less PubMed rows take the new format."""
    path = tmp_path / "mine.jsonl"
    path.write_text(
        json.dumps({"id": "1", "pmid": "123", "title": "My note", "text": "Gout is treated."}) + "\n"
    )
    assert detect_corpus_loader(path).format == "documents"


def test_every_literature_passage_has_a_shipped_vector() -> None:
    """Without them a literature build would embed 24 k passages on first use (13 min on 2 cores)."""
    name = get_embedder("onnx").name
    part = next(
        p for p in shipped_embedding_caches(SETTINGS, literature=True) if p.stem.endswith("-literature")
    )
    cache = EmbeddingCache(part)
    docs = load_documents(literature_sources(DATA), LoadReport(), None)
    texts = [evidence_text(ev, doc.title) for doc in docs for ev in make_evidence(doc, "")]
    missing = [t for t in texts if cache.get(text_key(name, t)) is None]
    assert len(texts) > 24_000 and missing == []
    assert part not in shipped_embedding_caches(SETTINGS)  # the core build does not read it


@pytest.fixture(scope="module")
def literature_kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test slice KB plus the first 400 rows of each shipped literature file (a real slice of them)."""
    folder = tmp_path_factory.mktemp("literature")
    sources = []
    for name in LITERATURE_FILES:
        target = folder / Path(name).name.removesuffix(".gz")
        with gzip.open(DATA / name, "rt", encoding="utf-8") as src:
            target.write_text("".join(itertools.islice(src, 400)), encoding="utf-8")
        sources.append((target, None))
    root = folder / "kb"
    build_kb(
        root,
        BuildConfig(
            kg_sources=[(SLICE / "kg", "unified"), (SLICE / "disease_ontology", None)],
            corpus_sources=[(SLICE / "medquad.jsonl", None), *sources],
            embedding_caches=tuple(shipped_embedding_caches(SETTINGS, literature=True)),
            user_embedding_cache=TEST_EMBEDDING_CACHE,
            name="literature-slice",
        ),
    )
    return root


def test_a_research_question_is_answered_from_pubmed_and_cited_as_research_literature(
    literature_kb: Path, tmp_path: Path
) -> None:
    (answer,) = offline_answers(
        literature_kb,
        tmp_path,
        "Which test is the companion diagnostic for PD-L1 status before pembrolizumab?",
    )
    research = [s for s in answer["sources"] if s.get("source") == SOURCE]
    assert research, answer["sources"]
    assert all(s["url"].startswith("https://pubmed.ncbi.nlm.nih.gov/") for s in research)
    assert "22C3" in answer["text"]


def test_a_research_question_on_a_kb_without_literature_names_the_literature_profile(
    slice_kb: KnowledgeBase, tmp_path: Path
) -> None:
    """Issue 21, item 4: "what is the target of X?" on a consumer-health KB said only "insufficient"; now the
    answer says first that the KB holds no research literature and how to add it. A KB that has some (the
    slice's PubMed documents) and a consumer question do not get the note."""
    from agent.nodes.coverage import literature_documents
    from tests.conftest import slice_config

    root = tmp_path / "kb"
    build_kb(root, slice_config(corpus_sources=[(SLICE / "medquad.jsonl", None)], name="no-literature"))
    kb = KnowledgeBase.open(root)
    try:
        assert literature_documents(kb) == 0
        settings = Settings(kb_dir=root, data_dir=tmp_path, llm_enabled=False)
        consultant = Consultant(settings, kb=kb, checkpointer=InMemorySaver(), use_llm=False)
        research = consultant.ask("What is the molecular target of pembrolizumab?").answer
        consumer = consultant.ask("How is gout treated?").answer
    finally:
        kb.close()
    assert research["status"] == "insufficient"
    first = " ".join(research["text"].split("\n\n")[1].split())
    assert first.startswith("**Insufficient evidence** — not covered: this knowledge base holds no research")
    assert "evigraph kb build --profile literature" in first and "evigraph kb add pubmed.xml" in first
    assert "not covered" not in consumer["text"]
    assert literature_documents(slice_kb) == 30
    settings = Settings(kb_dir=root, data_dir=tmp_path / "other", llm_enabled=False)
    with_pubmed = Consultant(settings, kb=slice_kb, checkpointer=InMemorySaver(), use_llm=False)
    assert (
        "research literature"
        not in with_pubmed.ask("What is the molecular target of pembrolizumab?").answer["text"]
    )
