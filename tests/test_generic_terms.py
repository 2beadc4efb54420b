"""Generic category words (disease, drug, gene, patient, …) never become a question's subject or a KG fact.

The tiny KB is built with the real builder, plus the nodes that caused the defect on the default KB: Disease
Ontology's root ``DOID:4 disease`` (with a LabeledIn-style ``Quetiapine -treats-> disease`` edge) and a
node named "gene". Before, "What disease can be treated with lenacapavir?" linked "disease" and the offline
answer listed "Drugs the KG lists for disease: Quetiapine".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.consult import Consultant
from graphs.building.builder import build_kb
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings
from tests.tiny_kb import tiny_config
from tools.candidate_terms import is_generic
from tools.ner_link import NerLinkRequest, ner_link

GENERIC_NODES = [
    ("DOID:4", "disease", "Disease"),
    ("GENE:gene", "gene", "Gene"),
    ("DRUGBANK:DB01224", "Quetiapine", "Compound"),
]
GENERIC_EDGES = [("DRUGBANK:DB01224", "treats", "DOID:4"), ("DRUGBANK:DB01224", "treats", "DOID:9352")]


@pytest.fixture(scope="module")
def generic_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("generic")
    config = tiny_config(directory / "src")
    kg = directory / "src" / "kg"
    with (kg / "nodes.tsv").open("a", encoding="utf-8") as nodes:
        nodes.writelines(f"{i}\t{n}\t{t}\ttiny\t\t\t0\n" for i, n, t in GENERIC_NODES)
    with (kg / "edges.tsv").open("a", encoding="utf-8") as edges:
        edges.writelines(f"{h}\t{r}\t{t}\ttiny\t\t\tCC0\n" for h, r, t in GENERIC_EDGES)
    root = directory / "kb"
    build_kb(root, config)
    return root


@pytest.fixture(scope="module")
def generic_kb(generic_root: Path) -> Iterator[KnowledgeBase]:
    kb = KnowledgeBase.open(generic_root)
    yield kb
    kb.close()


def linked(kb: KnowledgeBase, text: str) -> set[str]:
    return {e.id for e in ner_link(kb, NerLinkRequest(texts=[text])).entities}


def test_category_words_are_generic_and_names_that_contain_them_are_not() -> None:
    for word in ("disease", "Diseases", "drug", "gene", "patient", "syndrome", "treatment"):
        assert is_generic(word), word
    for name in ("Fabry disease", "CFTR gene", "type 2 diabetes", "cancer", "pain"):
        assert not is_generic(name), name


def test_generic_words_are_not_linked_and_are_reported(generic_kb: KnowledgeBase) -> None:
    question = "Which disease is caused by mutations in the CFTR gene?"
    result = ner_link(generic_kb, NerLinkRequest(texts=[question]))
    assert not {"DOID:4", "GENE:gene"} & {e.id for e in result.entities}
    assert {"disease", "gene"} <= set(result.generic_terms)
    assert "DOID:4" not in linked(generic_kb, "What disease can be treated with lenacapavir?")
    # An LLM term that is only a category word is not linked either.
    terms = ner_link(generic_kb, NerLinkRequest(texts=["lenacapavir"], llm_terms=["disease", "Quetiapine"]))
    assert {e.id for e in terms.entities} == {"DRUGBANK:DB01224"}


def test_specific_names_still_link(generic_kb: KnowledgeBase) -> None:
    ids = linked(generic_kb, "Is Quetiapine used for type 2 diabetes in a patient with polyuria?")
    assert {"DRUGBANK:DB01224", "DOID:9352", "MESH:D011141"} <= ids


def test_no_generic_node_fact_in_an_offline_answer(
    generic_root: Path, generic_kb: KnowledgeBase, tmp_path: Path
) -> None:
    settings = Settings(kb_dir=generic_root, data_dir=tmp_path, llm_enabled=False)
    consultant = Consultant(settings, kb=generic_kb, checkpointer=InMemorySaver(), use_llm=False)
    result = consultant.ask("What disease can be treated with lenacapavir?")
    text = result.answer["text"]
    assert "Quetiapine" not in text
    assert "for disease" not in text.lower()
    assert result.answer["status"] == "insufficient"


DEV_SETS = ("bioasq_dev.jsonl", "medquad_consumer.jsonl", "pubmedqa_dev.jsonl", "sufficiency.jsonl")


def test_no_dev_question_links_a_generic_node(generic_kb: KnowledgeBase) -> None:
    """Every question of the dev sets (and the sufficiency set): no category node becomes an entity, so none
    can be a subject or the source of a KG fact line (facts come only from the focus entities)."""
    data = Path(__file__).resolve().parent.parent / "evals" / "data"
    questions = [
        json.loads(line)["question"]
        for name in DEV_SETS
        for line in (data / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    assert len(questions) > 600
    generic_ids = {node_id for node_id, name, _ in GENERIC_NODES if is_generic(name)}
    found: set[str] = set()
    refused: set[str] = set()
    for question in questions:  # one question per call, as the agent links them
        result = ner_link(generic_kb, NerLinkRequest(texts=[question]))
        found.update(e.id for e in result.entities)
        refused.update(result.generic_terms)
    assert not generic_ids & found
    assert {"disease", "gene"} <= refused  # they were there, and were refused
