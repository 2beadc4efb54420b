"""``ner_link`` on the real slice KB: dictionary, embedding and LLM-term linking, negation, sources."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from graphs.kb import KnowledgeBase
from graphs.text.term_variants import condition_noun_forms
from tools.candidate_terms import candidate_terms
from tools.common import MAX_TEXT_CHARS
from tools.ner_link import (
    DEFAULT_DELTA,
    LinkedEntity,
    NerLinkRequest,
    NerLinkResult,
    ner_link,
    ner_link_tool,
)


def link(kb: KnowledgeBase, *texts: str, **options: object) -> NerLinkResult:
    return ner_link(kb, NerLinkRequest(texts=list(texts), **options))


def by_id(result: NerLinkResult) -> dict[str, LinkedEntity]:
    return {e.id: e for e in result.entities}


def assert_spans_point_into_texts(result: NerLinkResult, texts: dict[str, str]) -> None:
    for entity in result.entities:
        for m in entity.mentions:
            if m.source in texts:
                assert texts[m.source][m.start : m.end] == m.surface


def test_synonyms_and_plurals_link_by_dictionary(slice_kb: KnowledgeBase) -> None:
    text = "Patients with IDDM and recurrent seizures; her sister has migraines."
    result = link(slice_kb, text)
    entities = by_id(result)
    assert entities["DOID:9744"].name == "type 1 diabetes mellitus"  # reached through its synonym "IDDM"
    assert entities["DOID:9744"].mentions[0].surface == "IDDM"
    assert entities["MESH:D012640"].mentions[0].surface == "seizures"  # plural of a dictionary name
    assert "DOID:6364" in entities  # "migraines" -> migraine
    for entity in (entities["DOID:9744"], entities["MESH:D012640"]):
        assert (entity.method, entity.score, entity.negated) == ("dictionary", 1.0, False)
    assert_spans_point_into_texts(result, {"question": text})


def test_negated_mentions_are_marked_not_dropped(slice_kb: KnowledgeBase) -> None:
    text = "Swollen painful big toe consistent with gout. The patient has no fever."
    entities = by_id(link(slice_kb, text))
    fever = entities["MESH:D005334"]
    assert fever.negated and all(m.negated for m in fever.mentions)
    assert fever.mentions[0].surface == "fever"
    assert not entities["DOID:13189"].negated  # gout, in the sentence before the negation


def test_ambiguous_name_keeps_n_m_senses_by_degree(slice_kb: KnowledgeBase) -> None:
    both = by_id(link(slice_kb, "She reports fever.", n_m=3))
    assert {"MESH:D005334", "TEXT:fever"} <= set(both)
    degrees = slice_kb.store.degrees(["MESH:D005334", "TEXT:fever"])
    best = min(degrees, key=lambda i: (-degrees[i], i))
    one = by_id(link(slice_kb, "She reports fever.", n_m=1))
    assert set(one) == {best}


def test_hypothesis_mentions_merge_with_question_and_keep_their_source(slice_kb: KnowledgeBase) -> None:
    question = "Which drug lowers uric acid in gout?"
    hypothesis = "Allopurinol lowers uric acid; colchicine treats acute gout flares."
    result = link(slice_kb, question, hypothesis)
    gout = by_id(result)["DOID:13189"]
    assert [(m.source, m.surface) for m in gout.mentions] == [("question", "gout"), ("hypothesis", "gout")]
    assert by_id(result)["DRUGBANK:DB00437"].mentions[0].source == "hypothesis"  # allopurinol, HO only
    assert_spans_point_into_texts(result, {"question": question, "hypothesis": hypothesis})
    labelled = link(slice_kb, question, hypothesis, sources=["q", "doctor_reply"])
    assert {m.source for m in by_id(labelled)["DOID:13189"].mentions} == {"q", "doctor_reply"}


def test_entity_reachable_only_by_embedding(slice_kb: KnowledgeBase) -> None:
    text = "Does sugar diabetes run in families?"
    assert not slice_kb.matcher.find("sugar diabetes")  # the dictionary cannot see it
    result = link(slice_kb, text)
    linked = [e for e in result.entities if e.method == "embedding"]
    assert linked, result
    best = linked[0]
    assert "diabetes" in best.name.lower()
    assert DEFAULT_DELTA < best.score < 1.0
    # best score first: the unigram "diabetes" scores higher than "sugar diabetes", so it takes the span
    assert best.mentions[0].surface in ("diabetes", "sugar diabetes")
    assert_spans_point_into_texts(result, {"question": text})
    offline = link(slice_kb, text, use_embeddings=False)
    assert not offline.entities and "no entities found" in offline.warnings
    strict = link(slice_kb, text, delta=0.99)
    assert not strict.entities and "sugar diabetes" in strict.unlinked_terms  # the uncovered phrase


def test_llm_terms_are_linked_and_merged_never_alone(slice_kb: KnowledgeBase) -> None:
    question = "My father has gout. What should he take?"
    result = link(slice_kb, question, llm_terms=["Colchicine", "gout", "zzqx unknownium"])
    entities = by_id(result)
    colchicine = entities["DRUGBANK:DB01394"]
    assert colchicine.method == "llm_term" and colchicine.mentions[0].source == "llm_terms"
    assert entities["DOID:13189"].methods == ["dictionary", "llm_term"]  # in the text and from the LLM
    assert [m.source for m in entities["DOID:13189"].mentions] == ["question"]  # located in the question
    assert "zzqx unknownium" in result.unlinked_terms
    assert "DOID:13189" in by_id(link(slice_kb, question))  # the dictionary alone still finds it


def test_candidate_terms_skip_covered_spans_stop_words_and_filler() -> None:
    text = "A 45-year-old woman presents with crushing chest discomfort and gout."
    covered = [[(text.index("gout"), text.index("gout") + 4)]]
    candidates, runs = candidate_terms([text], covered)
    terms = [c.term for c in candidates]
    assert "crushing chest discomfort" in terms and "chest discomfort" in terms
    assert not any("gout" in t or "woman" in t or "year" in t for t in terms)
    assert runs == ["crushing chest discomfort"]


def test_only_terms_resembling_the_dictionary_are_embedded(slice_kb: KnowledgeBase) -> None:
    unlike = link(slice_kb, "Is zzqx blorfing wibbleness normal?")
    assert unlike.parameters["candidate_terms"] == 0 and not unlike.entities  # no word starts like a KB word
    assert "zzqx blorfing wibbleness normal" in unlike.unlinked_terms  # still reported as not understood
    alike = link(slice_kb, "Does sugar diabetes run in families?")
    assert alike.parameters["candidate_terms"] > 0  # "sugar", "diabetes" begin like dictionary words
    llm = link(slice_kb, "Is it normal?", llm_terms=["zzqx unknownium"])
    assert llm.parameters["candidate_terms"] == 1  # an LLM's terms are always tried


def test_text_without_entities_warns(slice_kb: KnowledgeBase) -> None:
    for text in ("Thanks a lot, see you tomorrow!", ""):
        result = link(slice_kb, text)
        assert result.entities == []
        assert "no entities found" in result.warnings


def test_huge_input_is_truncated_with_a_note(slice_kb: KnowledgeBase) -> None:
    text = "The patient with gout reports joint pain after a meal. " * 1000  # 55,000 characters
    result = link(slice_kb, text)
    assert any("truncated" in w and "question" in w for w in result.warnings)
    gout = by_id(result)["DOID:13189"]
    assert all(m.end <= MAX_TEXT_CHARS for m in gout.mentions)
    assert any("not embedded" in w for w in result.warnings) or result.parameters["candidate_terms"] <= 40


def test_request_validation() -> None:
    with pytest.raises(ValidationError):
        NerLinkRequest(texts=[])
    with pytest.raises(ValidationError):
        NerLinkRequest(texts=["a"] * 6)
    with pytest.raises(ValidationError):
        NerLinkRequest(texts=["a", "b"], sources=["question"])
    with pytest.raises(ValidationError):
        NerLinkRequest(texts=["a"], n_m=11)


def test_deterministic(slice_kb: KnowledgeBase) -> None:
    texts = ("No fever but sugar diabetes and gout; blurry vision.", "Maybe diabetes mellitus type two.")
    assert link(slice_kb, *texts).model_dump() == link(slice_kb, *texts).model_dump()


def test_langchain_wrapper(slice_kb: KnowledgeBase) -> None:
    tool = ner_link_tool(slice_kb)
    assert tool.name == "ner_link"
    schema = tool.args_schema.model_json_schema()  # type: ignore[union-attr]
    assert {"texts", "sources", "llm_terms", "n_m", "delta", "use_embeddings"} <= set(schema["properties"])
    assert all("description" in schema["properties"][name] for name in schema["properties"])
    answer = NerLinkResult.model_validate_json(tool.invoke({"texts": ["Gout with no fever."], "n_m": 1}))
    assert {"DOID:13189", "MESH:D005334"} <= {e.id for e in answer.entities}
    try:  # an invalid argument comes back as an error message or a validation error, never a result
        reply = tool.invoke({"texts": ["gout"], "n_m": 0})
        assert "n_m" in json.loads(reply)["error"]
    except ValidationError as exc:
        assert "n_m" in str(exc)


DRUG_WORDS = {"levodopa", "paracetamol", "adrenaline", "frusemide"}


@pytest.mark.parametrize(
    ("question", "entity_id"),
    [
        ("What are the side effects of levodopa?", "DRUGBANK:DB01235"),  # the KG says "L-DOPA"
        ("Can I give paracetamol with ibuprofen?", "DRUGBANK:DB00316"),  # "Acetaminophen"
        ("Is adrenaline given intramuscularly in anaphylaxis?", "DRUGBANK:DB00668"),  # "Epinephrine"
        ("What dose of frusemide for heart failure?", "DRUGBANK:DB00695"),  # "Furosemide"
    ],
)
def test_a_drug_is_linked_by_its_other_approved_name(
    slice_kb: KnowledgeBase, question: str, entity_id: str
) -> None:
    result = link(slice_kb, question, use_embeddings=False)
    assert entity_id in by_id(result), [e.id for e in result.entities]
    drug = next(w.strip("?") for w in question.split() if w.strip("?").lower() in DRUG_WORDS)
    assert drug.lower() not in {t.lower() for t in result.unlinked_terms}


def test_a_lay_adjective_links_the_condition_it_names(slice_kb: KnowledgeBase) -> None:
    """ "my mom is anemic, what kinds of things cause that?" linked nothing and was told it referred back to
    no earlier subject. An adjective for a condition links the KG disease by dictionary; one whose noun form
    names no disease links nothing, and a negated one is flagged."""
    cases = {
        "my mom is anemic": "DOID:2355",
        "my son is asthmatic": "DOID:2841",
        "I am diabetic": "DOID:9351",
    }
    for text, disease in cases.items():
        entities = by_id(link(slice_kb, text, use_embeddings=False))
        assert disease in entities, (text, list(entities))
        mention = entities[disease].mentions[0]
        assert mention.method == "dictionary" and text[mention.start : mention.end] == text.split()[-1]
    assert not link(slice_kb, "the test was positive", use_embeddings=False).entities
    negated = by_id(link(slice_kb, "she is not anemic", use_embeddings=False))["DOID:2355"]
    assert negated.mentions[0].negated


def test_condition_noun_forms_of_lay_adjectives() -> None:
    assert condition_noun_forms("anemic") == ("anemia", "anemy")
    assert condition_noun_forms("asthmatic") == ("asthma",)
    assert condition_noun_forms("psychotic") == ("psychosis",)
    assert condition_noun_forms("arthritic") == ("arthritis",)
    assert condition_noun_forms("autistic") == ("autism",)
    assert condition_noun_forms("hypertensive") == ("hypertension",)
    assert "epilepsy" in condition_noun_forms("epileptic")
    assert condition_noun_forms("sick") == () and condition_noun_forms("rash") == ()
