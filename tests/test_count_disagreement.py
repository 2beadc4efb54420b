"""Key sentences that disagree on a count of the question's subject are flagged
(agent/nodes/count_disagreement.py), on MedQuAD's own sentences."""

from agent.nodes.count_disagreement import count_disagreements


def test_key_sentences_that_disagree_on_a_count_of_the_subject_are_flagged() -> None:
    """ "What is hemochromatosis?" showed "There are two types of hemochromatosis." [MedlinePlus] and "The
    three types of hemochromatosis are …" [NIDDK] with nothing saying they disagree."""
    two = {"evidence_id": "E:mplus", "text": "There are two types of hemochromatosis."}
    three = {
        "evidence_id": "E:niddk",
        "text": "The three types of hemochromatosis are primary hemochromatosis, also called hereditary "
        "hemochromatosis; secondary hemochromatosis; and neonatal hemochromatosis.",
    }
    subjects = ["Hemochromatosis", "iron overload"]
    assert count_disagreements([two, three], subjects) == [
        "- Note — the sources differ on how many types of hemochromatosis there are: two [E:mplus]; "
        "three [E:niddk]."
    ]
    assert count_disagreements([two, {**three, "evidence_id": "E:mplus"}], subjects) == []  # one source
    assert count_disagreements([two, {**two, "evidence_id": "E:niddk"}], subjects) == []  # they agree
    kinds = {
        "evidence_id": "E:a",
        "text": "There are three main kinds of diabetes: type 1, type 2, and gestational.",
    }
    types = {"evidence_id": "E:b", "text": "The two main types of diabetes are type 1 and type 2."}
    assert "two [E:b]; three [E:a]" in count_disagreements([kinds, types], ["diabetes mellitus"])[0]
    # Counts of what is not the subject depend on their page (two cancers' PDQ pages).
    treatments = [
        {"evidence_id": "E:c1", "text": "Four types of standard treatment are used."},
        {"evidence_id": "E:c2", "text": "Five types of standard treatment are used."},
    ]
    assert count_disagreements(treatments, ["breast cancer"]) == []
