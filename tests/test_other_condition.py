"""A sentence about a sibling of the question's subject is not shown as answering it
(agent/nodes/other_condition.py): "hepatitis C … 1 to 3 months" was the second line of a hepatitis A
answer."""

from __future__ import annotations

from agent.consult import Consultant
from agent.nodes.focus import question_focus
from agent.nodes.other_condition import (
    about_other_condition,
    closest_first,
    off_subject_pages,
    qualified_subject_passages,
    titled_off_question,
)
from agent.state import ConsultState, EvidenceRec
from graphs.kb import KnowledgeBase


def focus_on(kb: KnowledgeBase, entity_id: str, question: str) -> ConsultState:
    entity = kb.store.get_entities([entity_id])[entity_id]
    return {
        "question": question,
        "entities": [{"id": entity_id, "name": entity.name, "type": entity.type}],
        "turn_entity_ids": [entity_id],
    }


def test_a_sibling_condition_is_another_subject_a_broader_name_is_not(slice_kb: KnowledgeBase) -> None:
    state = focus_on(slice_kb, "DOID:9744", "How is type 1 diabetes treated?")
    focus = question_focus(slice_kb, state)
    texts = [
        "People with type 2 diabetes often take metformin by mouth.",  # a sibling: not this subject
        "Type 1 diabetes is treated with insulin.",  # the subject
        "Diabetes means that blood glucose is too high.",  # a broader name: still about the subject
        "Over the years it can lead to kidney disease.",  # another disease sharing no distinctive word
        "Insulin is taken several times a day.",  # no disease named
    ]
    assert about_other_condition(slice_kb, focus, texts) == [True, False, False, False, False]
    assert about_other_condition(slice_kb, question_focus(slice_kb, {"question": "x"}), texts[:1]) == [False]


def test_no_key_sentence_is_about_a_sibling_of_the_subject(consultant: Consultant) -> None:
    """On the slice KB this answer led with "The signs and symptoms of type 2 diabetes can be so mild that
    you might not even notice them." """
    answer = consultant.ask("What are the symptoms of type 1 diabetes?").answer
    assert answer["direct"]["focus"] and answer["direct"]["sentences"], answer["text"][:300]
    for sentence in answer["direct"]["sentences"]:
        assert "type 2" not in sentence["text"].lower(), sentence["text"]


def test_a_sentence_from_a_page_that_never_names_the_subject_is_off_it(slice_kb: KnowledgeBase) -> None:
    """ "How is Lyme disease diagnosed?" showed, as its third key sentence, "Thus, they may not be
    diagnosed unless they have heavy bleeding after surgery or some other trauma." from a von Willebrand
    disease page."""
    state = focus_on(slice_kb, "DOID:11729", "How is Lyme disease diagnosed?")
    focus = question_focus(slice_kb, state)
    evidence: list[EvidenceRec] = [
        {
            "id": "E:vwd",
            "title": "How to diagnose Type 1 Diabetes ?",  # stands in for the von Willebrand disease page
            "text": "Thus, they may not be "
            "diagnosed unless they have heavy bleeding after surgery or some other trauma.",
        },
        {
            "id": "E:lyme",
            "title": "What is (are) Lyme Disease ?",
            "text": "Lyme disease can be hard to diagnose. A lab test can confirm it.",
        },
        {
            "id": "E:tick",
            "title": "Tick bites",
            "text": "Blood tests for Lyme disease antibodies are done weeks "
            "after the bite. The test is not useful in the first weeks.",
        },
    ]
    texts = [
        ("E:vwd", evidence[0]["text"]),  # off the subject: neither it nor its page names Lyme disease
        ("E:lyme", "A lab test can confirm it."),  # its page is about the subject
        ("E:tick", "The test is not useful in the first weeks."),  # its passage names the subject
        ("E:other", "Lyme disease is diagnosed from the rash."),  # names the subject itself
        ("E:abstract", "The antibodies rise after four weeks."),  # another snippet of its abstract names it
        ("E:snippet", "We used the data of a national registry."),  # no other disease's page: kept
    ]
    evidence += [
        {
            "id": "E:snippet",
            "document_id": "PMID:2",
            "title": "PubMed 2",
            "text": "We used the data of a national registry.",
        },
        {
            "id": "E:abstract",
            "document_id": "PMID:1",
            "title": "PubMed 1",
            "text": "The antibodies rise later.",
        },
        {"id": "E:title", "document_id": "PMID:1", "title": "PubMed 1", "text": "Serology in Lyme disease."},
    ]
    ids, said = [i for i, _ in texts], [t for _, t in texts]
    assert off_subject_pages(slice_kb, focus, ids, said, evidence) == [
        True,
        False,
        False,
        False,
        False,
        False,
    ]
    no_focus = question_focus(slice_kb, {"question": "How is it diagnosed?"})
    # No linked subject: a page titled with a condition the question does not name is off it
    # (titled_off_question); a page titled with none, or a PubMed snippet, never is.
    assert off_subject_pages(slice_kb, no_focus, ids, said, evidence) == [
        True,
        True,
        False,
        False,
        False,
        False,
    ]


def test_an_abbreviation_the_question_defines_names_the_subject(slice_kb: KnowledgeBase) -> None:
    """ "Which genetic susceptibility loci are implicated in irritable bowel syndrome (IBS)?": its snippets
    say "IBS", which the KG's synonyms lack, and were read as not naming the subject."""
    state = focus_on(slice_kb, "DOID:11729", "Which tests diagnose Lyme disease (LYMD) early?")
    focus = question_focus(slice_kb, state)
    assert focus.named_in("Serology for LYMD is negative in the first weeks.")
    plain = question_focus(
        slice_kb, focus_on(slice_kb, "DOID:11729", "Which tests diagnose Lyme disease early?")
    )
    assert not plain.named_in("Serology for LYMD is negative in the first weeks.")


def test_a_page_on_a_qualified_form_of_the_subject_is_not_about_it(slice_kb: KnowledgeBase) -> None:
    """ "What are the treatments for hypertension?" was answered from "What are the treatments for Pulmonary
    Hypertension ?" ("Pulmonary hypertension (PH) has no cure.", "Oxygen therapy. …") above the high blood
    pressure page: the sentences name "hypertension" inside the longer name."""
    focus = question_focus(
        slice_kb, focus_on(slice_kb, "DOID:10763", "What are the treatments for hypertension?")
    )
    evidence: list[EvidenceRec] = [
        {"id": "E:ph", "keyword_entity": "DOID:6432", "text": "Pulmonary hypertension (PH) has no cure."},
        {"id": "E:hbp", "keyword_entity": "DOID:10763", "text": "Diuretics flush excess sodium."},
        {"id": "E:pubmed", "keyword_entity": "", "text": "Pulmonary hypertension in a cohort."},
    ]
    assert qualified_subject_passages(slice_kb, focus, evidence) == {"E:ph"}
    # Only pages on the qualified form found: they are what the KB has on the question, and stay.
    assert qualified_subject_passages(slice_kb, focus, [evidence[0], evidence[2]]) == set()
    diabetes = question_focus(slice_kb, focus_on(slice_kb, "DOID:9351", "What are the symptoms of diabetes?"))
    keyed = [
        {"id": "E:t1", "keyword_entity": "DOID:9744", "text": "Type 1 diabetes symptoms come on fast."},
        {"id": "E:dm", "keyword_entity": "DOID:9351", "text": "Diabetes makes you thirsty."},
    ]
    assert qualified_subject_passages(slice_kb, diabetes, keyed) == {"E:t1"}  # type: ignore[arg-type]


def test_a_page_titled_with_another_condition_is_not_about_the_subject_it_names_in_passing(
    slice_kb: KnowledgeBase,
) -> None:
    """ "What are the symptoms of lupus?" showed "If you have changes in your vision …, call 911" from
    "What are the symptoms of Sarcoidosis ?", whose passage names "lupus pernio": the passage mentions the
    subject, its page is about another condition."""
    state = focus_on(slice_kb, "DOID:11729", "How is Lyme disease diagnosed?")
    focus = question_focus(slice_kb, state)
    text = "A rash is not Lyme disease itself. See a doctor for eye changes."
    evidence: list[EvidenceRec] = [
        {"id": "E:other", "title": "How to diagnose Type 1 Diabetes ?", "text": text},
        {"id": "E:both", "title": "What is (are) Lyme Disease and Type 1 Diabetes ?", "text": text},
    ]
    said = ["See a doctor for eye changes."] * 2
    assert off_subject_pages(slice_kb, focus, ["E:other", "E:both"], said, evidence) == [True, False]


def test_a_page_about_a_subject_the_kg_lacks_is_another_subject(slice_kb: KnowledgeBase) -> None:
    """ "How can I prevent malaria when travelling?" was answered from "How to prevent Parasites -
    Leishmaniasis ?" — "No vaccines or drugs to prevent infection are available." That page's subject is
    the corpus's own focus node (a "Concept" the KG does not type as a disease), so it was not seen as
    another condition. A page whose focus holds the subject's name stays about the subject."""
    assert "FOCUS:parasites_ascariasis" in slice_kb.store.get_entities(["FOCUS:parasites_ascariasis"])
    state = focus_on(slice_kb, "DOID:11729", "How is Lyme disease prevented?")
    focus = question_focus(slice_kb, state)
    said = "The best way for travelers to prevent infection is to avoid contaminated soil."
    evidence: list[EvidenceRec] = [
        {"id": "E:parasite", "title": "How to prevent Parasites - Ascariasis ?", "text": said},
        {"id": "E:lyme", "title": "How to prevent Lyme Disease ?", "text": said},
    ]
    assert off_subject_pages(slice_kb, focus, ["E:parasite", "E:lyme"], [said] * 2, evidence) == [True, False]
    hepatitis = slice_kb.matcher.entity_ids("hepatitis B")
    assert hepatitis
    state = focus_on(slice_kb, hepatitis[0], "Who should get the hepatitis B vaccine?")
    page = "What is (are) Hepatitis B: What Asian and Pacific Islander Americans Need to Know ?"
    evidence = [{"id": "E:hbv", "title": page, "text": said}]
    assert off_subject_pages(slice_kb, question_focus(slice_kb, state), ["E:hbv"], [said], evidence) == [
        False
    ]


def test_without_a_linked_subject_a_page_titled_with_an_unnamed_condition_is_off(
    slice_kb: KnowledgeBase,
) -> None:
    """ "What is the treatment for a broken wrist?" links no KG entity, and was answered from "What are the
    treatments for Broken Heart Syndrome ?" and a carpal tunnel page. A page is off such a question when its
    title names a condition and the question names none of its title's conditions; a question naming the
    condition in another form ("anemic", "MS") keeps its page, and a differential keeps every page."""
    said = "Initial treatment is rest and a splint."
    titles = {
        "E:other": "What are the treatments for Bell's palsy ?",  # a condition the question does not name
        "E:none": "Wrist pain",  # no KG condition in the title
        "E:pubmed": "PubMed 123",
    }
    evidence: list[EvidenceRec] = [{"id": i, "title": t, "text": said} for i, t in titles.items()]
    wrist = question_focus(slice_kb, {"question": "What is the treatment for a broken wrist?"})
    assert not wrist.entities
    ids = list(titles)
    assert off_subject_pages(slice_kb, wrist, ids, [said] * 3, evidence) == [True, False, False]
    assert titled_off_question(slice_kb, "What is the treatment for a broken wrist?", evidence) == {"E:other"}
    # Named in another word form (five-letter stems), or by an abbreviation the question writes.
    anemia: list[EvidenceRec] = [{"id": "E:a", "title": "What causes Sideroblastic anemia ?", "text": said}]
    assert titled_off_question(slice_kb, "Why would someone get sideroblastic anemia?", anemia) == set()
    assert titled_off_question(slice_kb, "What makes a person anemic?", anemia) == {"E:a"}  # a kind of it
    bells: list[EvidenceRec] = [
        {"id": "E:b", "title": "What are the treatments for Bell's palsy ?", "text": said}
    ]
    assert titled_off_question(slice_kb, "my face droops, is it bells palsy?", bells) == set()
    # An upper-case abbreviation the linker leaves unlinked as too short ("MS") names its condition too.
    ms: list[EvidenceRec] = [
        {"id": "E:ms", "title": "What are the treatments for Multiple Sclerosis ?", "text": said}
    ]
    assert (
        titled_off_question(slice_kb, "Are there drugs that cut down how often MS attacks happen?", ms)
        == set()
    )
    assert titled_off_question(slice_kb, "Are there drugs that cut down how often attacks happen?", ms) == {
        "E:ms"
    }
    # A differential asks for a condition it does not name.
    assert titled_off_question(slice_kb, "Half my face droops. What could it be?", bells) == set()


def test_closest_passages_lead_with_the_subject_and_leave_out_pages_on_another_condition(
    slice_kb: KnowledgeBase,
) -> None:
    """ "How is Lyme disease treated?" (insufficient) listed a von Willebrand disease treatment passage among
    its closest passages."""
    focus = question_focus(slice_kb, focus_on(slice_kb, "DOID:11729", "How is Lyme disease treated?"))
    other: EvidenceRec = {
        "id": "E:other",
        "title": "What are the treatments for Type 1 Diabetes ?",  # stands in for the VWD page
        "text": "Treatment is based on the type you have and how severe it is.",
    }
    neutral: EvidenceRec = {"id": "E:ticks", "title": "Tick bites", "text": "Remove the tick with tweezers."}
    lyme: EvidenceRec = {
        "id": "E:lyme",
        "title": "What is (are) Lyme Disease ?",
        "text": "Antibiotics can cure most cases of Lyme disease.",
    }
    evidence = [other, neutral, lyme]
    assert [e["id"] for e in closest_first(slice_kb, focus, evidence, [lyme])] == ["E:lyme", "E:ticks"]
    # Nothing about the subject: everything stays, the other condition's page last.
    assert [e["id"] for e in closest_first(slice_kb, focus, evidence, [])] == ["E:ticks", "E:lyme", "E:other"]
    assert closest_first(slice_kb, focus, [], []) == []


def test_a_page_on_the_subject_in_a_population_is_not_a_qualified_form() -> None:
    """ "Why do people get kidney stones?" was *answered* with no sentence shown: its pages are keyed to
    "Kidney Stones in Adults", "Kidney Stones in Children" and "What I need to know about Kidney Stones",
    and each was read as a qualified form of kidney stones (like pulmonary hypertension of hypertension)."""
    from agent.nodes.other_condition import qualifies, words

    stones = words("kidney stones")
    assert not qualifies(stones, "Kidney Stones in Adults")
    assert not qualifies(stones, "Kidney Stones in Children")
    assert not qualifies(stones, "What I need to know about Kidney Stones")
    assert qualifies(words("hypertension"), "pulmonary hypertension")
    assert qualifies(words("diabetes"), "type 1 diabetes")  # "1" is distinctive
    assert not qualifies(stones, "kidney stones")  # the subject itself
