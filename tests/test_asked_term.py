"""The question's own unlinked term must be named by the answer (agent/nodes/asked_term.py), and the KG's
facts are shown only about the question's subject (agent/nodes/direct_answer.py, graphs/stores/kg_facts.py).

"What are TAMs in cancer therapy?" was "answered" with tamoxifen sentences from a breast-cancer page, under
"Drugs the KG lists for cancer: Clonidine; Fentanyl; Granisetron; Morphine …" — label-mined edges from
"pain in cancer patients" onto the whole category. Both must not happen; what the rules leave alone (a
linked acronym, a class of molecule, an agency, a term the passage writes another way) must keep working.
"""

from __future__ import annotations

import pytest

from agent.consult import Consultant
from agent.nodes import answered
from agent.nodes.answer_candidates import AnswerCandidate, enumerates, named_answers
from agent.nodes.asked_term import (
    long_form,
    missing_term,
    names_term,
    on_asked_term,
    term_pattern,
    unlinked_terms,
    written_terms,
)
from agent.nodes.reading import ReadSentence
from agent.state import EntityRec
from graphs.kb import KnowledgeBase
from graphs.stores.kg_facts import (
    is_category,
    kg_facts,
    label_mined_on_category,
    without_label_mined_on_categories,
)
from tests.answered_stub import answers_everything


def linked(surface: str, method: str = "exact", score: float = 1.0) -> EntityRec:
    return {"id": "X:" + surface, "name": surface, "surface": surface, "method": method, "score": score}  # type: ignore[typeddict-item]


@pytest.mark.parametrize(
    ("question", "entities", "terms"),
    [
        ("What are TAMs in cancer therapy?", [linked("cancer")], ["TAMs"]),
        ("What does RUNX2 stand for?", [], ["RUNX2"]),
        ("What indication has FTY720 been approved for by the FDA?", [], ["FTY720"]),
        ("What micro-RNAs are useful in the diagnosis of Heart Failure?", [linked("Heart Failure")], []),
        ("Which SNPs are associated with gout?", [linked("gout")], []),
        ("How is MS diagnosed?", [linked("MS")], []),
        ("How is MS diagnosed?", [linked("MS", method="embedding", score=0.7)], ["MS"]),  # tentative link
        ("What is the role of PD-1 in cancer treatment?", [linked("cancer")], ["PD-1"]),
        ("How is gout treated?", [linked("gout")], []),
    ],
)
def test_the_unlinked_terms_of_a_question(question: str, entities: list[EntityRec], terms: list[str]) -> None:
    assert unlinked_terms(question, entities) == terms


def test_a_term_is_named_however_the_evidence_spells_it() -> None:
    assert term_pattern("TAMs").search("infiltration by TAM predicts")
    assert term_pattern("PD-1").search("PD1 blockade") and term_pattern("PD-1").search("PD 1 blockade")
    assert term_pattern("WAPL").search("the cohesin regulator Wapl")  # case-free from four characters
    assert not term_pattern("TAMs").search("Tamoxifen, an LHRH agonist")
    assert not term_pattern("MS").search("a delay of 40 ms")  # short acronyms only in capitals
    assert not term_pattern("HP1").search("LHP1 binds")
    assert term_pattern("FGFR").search("the FGFR3 G380R mutation") and not term_pattern("HP1").search("HP12")
    # a member's subfamily, when it is still a code: "atemoya … not the activities of CYP2C9 and CYP3A."
    assert term_pattern("CYP3A4").search("not the activities of CYP2C9 and CYP3A.")
    assert not term_pattern("CYP3A4").search("CYP3A5 expressers") and not term_pattern("RUNX2").search("RUNX")
    assert not term_pattern("SAMHD1").search("(SAM) syndrome") and not term_pattern("H1N1").search("H1N")
    assert long_form("What follows aortic intramural hematoma (IMH) when untreated?", "IMH") == (
        "intramural hematoma"
    )
    assert long_form("Is irritable bowel syndrome (IBS) inherited?", "IBS") == "irritable bowel syndrome"
    assert names_term("What follows intramural hematoma (IMH)?", "IMH", ["Intramural hematoma may regress."])
    assert not names_term("What follows intramural hematoma (IMH)?", "IMH", ["Aortic dissection may follow."])


def test_one_named_term_is_enough_and_none_is_missing() -> None:
    question = "What indication has FTY720 been approved for by the AAN?"
    assert (
        missing_term(question, [], ["Fingolimod (FTY720): a recently approved multiple sclerosis drug"])
        is None
    )
    assert missing_term(question, [], ["Tamoxifen is approved for breast cancer."]) == "FTY720 or AAN"
    assert missing_term("How is gout treated?", [linked("gout")], ["Rest helps."]) is None


def test_an_answer_that_never_names_the_asked_term_is_insufficient(consultant: Consultant) -> None:
    """With a model that answers everything, only this check stands between a question about a term no
    passage names and an "answered" made of passages on the linked context."""
    answered.use_answered_model(answers_everything())
    try:
        result = consultant.ask("What are ZQX7s in gout therapy?").answer
        assert result["status"] == "insufficient", result["text"][:400]
        assert result["verdict"]["missing_labels"] == ["a passage naming ZQX7s"]
        assert "names ZQX7s, which the question asks about" in result["verdict"]["reasons"][0]
        assert consultant.ask("How is gout treated?").answer["status"] == "answered"
    finally:
        answered.use_answered_model(None)


def test_no_kg_fact_about_the_context_of_an_unknown_subject(consultant: Consultant) -> None:
    gout = consultant.ask("How is gout treated?").answer
    assert gout["direct"]["facts"], "the slice KG lists drugs for gout"
    unknown = consultant.ask("What is the role of ZQX7 in gout treatment?").answer
    assert unknown["direct"]["facts"] == []
    assert "Drugs the KG lists" not in unknown["text"]


def test_a_label_mined_fact_on_a_disease_category_is_not_shown(slice_kb: KnowledgeBase) -> None:
    """In the slice, cardiovascular system disease has 23 descendants and one drug, from LabeledIn only;
    breast cancer has 12 and curated (Hetionet) drugs; type 2 diabetes mellitus has 3."""
    store = slice_kb.store
    assert is_category(store, "DOID:1287", at_least=10) and not is_category(store, "DOID:9352", at_least=10)
    rels = ["treats", "indicated_for", "palliates"]
    category = kg_facts(store, ["DOID:1287"], rels)
    assert category and all(label_mined_on_category(store, f, at_least=10) for f in category)
    curated = [f for f in kg_facts(store, ["DOID:1612"], rels) if "hetionet" in f.source]
    assert curated and not any(label_mined_on_category(store, f, at_least=10) for f in curated)
    specific = kg_facts(store, ["DOID:9352"], rels)
    assert specific and not any(label_mined_on_category(store, f, at_least=10) for f in specific)
    mixed = [*category, *curated, *specific]
    assert without_label_mined_on_categories(store, mixed, at_least=10) == [*curated, *specific]


def test_one_item_of_a_list_the_evidence_spells_out_is_not_named_as_the_answer() -> None:
    """ "What are the symptoms of diabetes?" was answered "Answer (as the evidence names it): sores", the one
    item of the page's list of eight the KG knows as a symptom."""
    listing = (
        "Some common symptoms of diabetes are: being very thirsty, frequent urination, feeling very "
        "hungry or tired, losing weight without trying, having sores that heal slowly"
    )
    clause = "Itepekimab treatment improved asthma control and quality of life, as compared with placebo."
    assert enumerates(listing) and not enumerates(clause)
    sores = AnswerCandidate("sores", ["SYMPTOM:sores"], "Symptom", 1.7, ["E:1"], [listing])
    asthma = AnswerCandidate("asthma", ["DOID:2841"], "Disease", 1.7, ["E:2"], [clause])
    assert named_answers([sores], list_question=True) == []
    assert named_answers([asthma], list_question=True) == [asthma]
    assert named_answers([sores], list_question=False) == [sores]  # a factoid's one answer may sit in a list


def read(evidence_id: str, text: str) -> ReadSentence:
    return ReadSentence(evidence_id, text, 0, len(text), 0, 1.0, 0.7, 1.0, "")


def test_sentences_come_from_passages_that_name_the_asked_term_when_any_do() -> None:
    """Over the full BioASQ pool, "Which syndrome is associated to SAMHD1 gene mutations?" was answered from
    snippets on "(SAM) syndrome"; other retrieved snippets named SAMHD1."""
    question = "Which syndrome is associated to SAMHD1 gene mutations?"
    sam = read("E:sam", "Here we describe a new syndrome (SAM syndrome) caused by DSG1 mutations.")
    ags = read("E:ags", "It is one of the genes mutated in Aicardi-Goutieres syndrome.")
    passages = {
        "E:ags": "SAMHD1 is a dNTP hydrolase. It is one of the genes mutated in Aicardi-Goutieres syndrome."
    }
    assert on_asked_term([sam, ags], question, [], passages) == [ags]  # its passage names SAMHD1
    assert on_asked_term([sam], question, [], {}) == [sam]  # none names it: left to the check after the model
    assert on_asked_term([sam, ags], "How is gout treated?", [], passages) == [sam, ags]  # no unlinked term


def linked_gene(symbol: str) -> EntityRec:
    return {"id": f"NCBIGene:{symbol}", "name": symbol, "surface": symbol, "type": "Gene", "score": 1.0}


def test_a_linked_gene_symbol_must_still_be_written_by_the_answer() -> None:
    """Over the 20,585-snippet pool SAMHD1 *is* linked to the KG's gene, and the answer was still taken
    from the "(SAM) syndrome" snippets: linking a code-like symbol does not excuse an answer that never
    writes it. A linked word acronym ("MS") stays the focus rules' business."""
    question = "Which syndrome is associated to SAMHD1 gene mutations?"
    samhd1 = linked_gene("SAMHD1")
    assert unlinked_terms(question, [samhd1]) == []  # the KG knows it
    assert written_terms(question, [samhd1]) == ["SAMHD1"]
    assert written_terms("Is MS an autoimmune disease?", [linked("MS")]) == []
    sam = read("E:sam", "Here we describe a new syndrome (SAM syndrome) caused by DSG1 mutations.")
    ags = read("E:ags", "It is one of the genes mutated in Aicardi-Goutieres syndrome.")
    passages = {"E:ags": "SAMHD1 is a dNTP hydrolase. " + ags.text}
    assert on_asked_term([sam, ags], question, [samhd1], passages) == [ags]
    assert missing_term(question, [samhd1], [sam.text]) == "SAMHD1"
    assert missing_term(question, [samhd1], [passages["E:ags"]]) is None


def test_a_sentence_writing_the_questions_own_term_is_not_off_subject_for_its_pages_title(
    consultant: Consultant,
) -> None:
    """ "What is PSA?" links nothing; the slice KB's PSA sentences sit on prostate cancer pages, titled with a
    condition the question does not name. They showed nothing, and the turn was insufficient for "no shown
    sentence names PSA"; a sentence that writes the question's own term is on it."""
    answer = consultant.ask("What is PSA?").answer
    sentences = [s["text"] for s in answer["direct"].get("sentences", [])]
    assert sentences and all(term_pattern("PSA").search(t) for t in sentences[:2])
