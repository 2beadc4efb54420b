"""KG extraction artefacts ("abnormal ossification of cartilage in", "inflammation of the") are no concept:
never a fact line (graphs/stores/kg_facts.py) — "Genes and causes the KG links to achondroplasia: FGFR3;
abnormal ossification of cartilage in" was shown on a BioASQ question."""

from __future__ import annotations

from pathlib import Path

from graphs.building.builder import build_kb
from graphs.kb import KnowledgeBase
from graphs.stores.kg_facts import kg_facts
from graphs.text.ner import is_fragment_name
from tests.tiny_kb import tiny_config

FRAGMENT = "FINDING:enlargement_of_the"


def test_a_name_ending_in_a_dangling_word_is_a_fragment_a_type_letter_is_not() -> None:
    assert is_fragment_name("abnormal ossification of cartilage in")
    assert is_fragment_name("inflammation of the")
    assert is_fragment_name("other tissues")
    assert not is_fragment_name("hepatitis A")
    assert not is_fragment_name("Vitamin A")
    assert not is_fragment_name("polyuria")


def test_a_fragment_node_is_never_a_fact(tmp_path: Path) -> None:
    config = tiny_config(tmp_path / "src")
    kg = tmp_path / "src" / "kg"
    with (kg / "nodes.tsv").open("a", encoding="utf-8") as nodes:
        nodes.write(f"{FRAGMENT}\tenlargement of the\tFinding\ttiny\t\t\t0\n")
    with (kg / "edges.tsv").open("a", encoding="utf-8") as edges:
        edges.write(f"DOID:9352\thas_symptom\t{FRAGMENT}\ttiny\t\t\tCC0\n")
    build_kb(tmp_path / "kb", config)
    kb = KnowledgeBase.open(tmp_path / "kb")
    try:
        assert FRAGMENT in kb.store.get_entities([FRAGMENT])  # the node is in the KB …
        facts = kg_facts(kb.store, ["DOID:9352"], ["has_symptom"])
        assert [f.entity_name for f in facts] == ["Polyuria"]  # … but never shown as a fact
    finally:
        kb.close()
