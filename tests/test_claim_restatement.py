"""A claim a passage restates in its own words, affirmed or negated (agent/nodes/claim_restatement.py).

The unit tests read real sentence shapes (MedQuAD's own wording); the last test runs a reply through the
slice KB's real retrieval, claim checker and renderer.
"""

from __future__ import annotations

import pytest

from agent.consult import Consultant
from agent.nodes.claim_restatement import restated
from graphs.kb import KnowledgeBase
from graphs.text.negation import negated_spans
from graphs.text.paraphrases import one_form
from graphs.text.word_stems import claim_stem


@pytest.mark.parametrize(
    ("question", "sentence", "affirms"),
    [
        ("Does dengue spread from person to person?", "Dengue does not spread from person to person.", False),
        ("Do NSAIDs cause ulcers?", "Long-term NSAID use can cause peptic ulcers.", True),
        ("Do NSAIDs cause ulcers?", "NSAIDs do not cause ulcers in most people.", False),
        # "no cure" does not negate a mention of the disease, but it denies that it can be cured
        ("Can Crohn's disease be cured?", "There is no cure for Crohn's disease.", False),
        (
            "Can Lyme disease be cured with antibiotics?",
            "Antibiotics can cure most cases of Lyme disease.",
            True,
        ),
    ],
)
def test_a_sentence_holding_every_word_of_the_claim_decides_it_by_its_negation(
    question: str, sentence: str, affirms: bool
) -> None:
    found = restated(question, ["Unrelated text about something else.", sentence])
    assert (
        found is not None and found.affirms is affirms and found.passage == 1 and found.sentence == sentence
    )


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        # a negation over one mention of a word and not the other: ambiguous
        (
            "Is dengue spread by mosquitoes?",
            "Although dengue does not spread from person to person, mosquitoes spread it.",
        ),
        ("Does smoking cause bladder cancer?", "It is not known whether smoking causes bladder cancer."),
        ("Do NSAIDs cause ulcers?", "NSAIDs may cause ulcers."),  # a hedge the claim does not make
        ("Does smoking cause bladder cancer?", "Smoking is the main risk factor for bladder cancer."),
        ("Is aspirin safe?", "Aspirin is not safe for everyone."),  # too few words to be a restatement
    ],
)
def test_no_verdict_without_a_plain_restatement(question: str, sentence: str) -> None:
    assert restated(question, [sentence]) is None


@pytest.mark.parametrize(
    ("question", "sentence", "title"),
    [
        # every "anti-" word shared the four-letter stem "anti": a classic error was endorsed
        ("Is the flu treated with antibiotics?", "Antiviral Treatments for 2009 H1N1", "What is (are) Flu ?"),
        (
            "Is gout treated with antibiotics?",
            "The most common treatments for an attack of gout are non-steroidal anti-inflammatory drugs.",
            "",
        ),
        ("Is lupus treated with antibiotics?", "Antibodies attack the tissues in lupus and are treated.", ""),
    ],
)
def test_words_that_only_share_a_prefix_are_not_the_claim_s_words(
    question: str, sentence: str, title: str
) -> None:
    assert restated(question, [sentence], titles=[title], conditions=("flu",)) is None


@pytest.mark.parametrize(
    ("question", "sentence", "affirms"),
    [
        (
            "Can hepatitis C be prevented with a vaccine?",
            "Hepatitis A and hepatitis B can be prevented with vaccines.",
            None,
        ),
        (
            "Can hepatitis C be prevented with a vaccine?",
            "There is no vaccine to prevent infection with hepatitis C.",
            False,
        ),
        (
            "Is type 1 diabetes treated with insulin?",
            "Type 2 diabetes is treated with insulin.",
            None,
        ),
        ("Is type 1 diabetes treated with insulin?", "Type 1 diabetes is treated with insulin.", True),
    ],
)
def test_a_condition_s_type_letter_or_number_is_a_word_of_the_claim(
    question: str, sentence: str, affirms: bool | None
) -> None:
    """ "hepatitis C" lost its "C" (one letter) and "type 1" its "1": a sentence about hepatitis B's vaccine
    or about type 2 diabetes restated the claim."""
    found = restated(question, [sentence])
    assert (found.affirms if found else None) is affirms


@pytest.mark.parametrize(
    ("words", "same"),
    [
        (("cure", "cured", "curing", "cures"), True),
        (("cause", "caused", "causes", "causing"), True),
        (("treat", "treated", "treatment", "treatments"), True),
        (("prevent", "prevention", "prevents"), True),
        (("transmitted", "transmission", "transmit"), True),
        (("bleed", "bleeding", "bleeds"), True),
        (("antibiotics", "antiviral"), False),
        (("antibiotic", "antibodies"), False),
        (("antibiotics", "anti"), False),
        (("hypothyroidism", "hypotension"), False),
    ],
)
def test_a_claim_word_meets_its_inflections_not_its_neighbours(words: tuple[str, ...], same: bool) -> None:
    assert (len({claim_stem(w) for w in words}) == 1) is same


def test_a_hedged_claim_is_restated_by_a_hedged_sentence() -> None:
    found = restated("Do NSAIDs cause ulcers?", ["NSAIDs may cause ulcers."], claim_hedged=True)
    assert found is not None and found.affirms


def test_passages_that_say_both_decide_nothing() -> None:
    passages = ["NSAIDs cause ulcers in older patients.", "NSAIDs do not cause ulcers."]
    assert restated("Do NSAIDs cause ulcers?", passages) is None


def test_a_statement_s_negation_counts_what_a_mention_s_does_not() -> None:
    text = "NSAIDs do not cause ulcers."
    span = [(text.index("ulcers"), text.index("ulcers") + len("ulcers"))]
    assert negated_spans(text, span) == [False]  # "not cause" is a pseudo trigger for the mention
    assert negated_spans(text, span, statement=True) == [True]


def test_a_reply_the_slice_restates_negated_is_contradicted_and_cites_the_sentence(
    consultant: Consultant,
) -> None:
    answer = consultant.ask(
        "Colleague says: eating certain foods causes Crohn's disease.", task="check_reply"
    ).answer
    claim = answer["reply_check"]["claims"][0]
    assert claim["verdict"] == "contradicted" and claim["decided_by"] == "restatement", claim
    assert "do not cause Crohn's disease" in claim["quotes"][0]
    assert claim["evidence_ids"][0] in answer["evidence_ids"]
    assert "the passage says it in the claim's own words" in answer["text"]
    assert "A verdict above without a checker probability" in answer["text"]


def test_a_passage_titled_with_the_condition_may_leave_its_name_out_of_the_sentence() -> None:
    sentence = "Stress and spicy foods do not cause ulcers, but can make them worse."
    question = "Are peptic ulcers caused by spicy food?"
    on_its_page = restated(question, [sentence], False, ["What causes Peptic Ulcer ?"], ("peptic ulcers",))
    assert on_its_page is not None and not on_its_page.affirms
    # on another condition's page the sentence does not say "peptic", and the claim does
    assert restated(question, [sentence], False, ["What causes Gastritis ?"], ("peptic ulcers",)) is None
    assert restated(question, [sentence]) is None


def test_a_myth_reported_to_correct_it_restates_nothing_and_filler_verbs_are_not_required() -> None:
    myth = "Another common myth is that dirty skin causes acne; however, blackheads are not caused by dirt."
    assert restated("Is acne caused by dirty skin?", [myth]) is None
    vaccine = "The shingles vaccine is a preventive therapy and not a treatment for postherpetic neuralgia."
    found = restated("Is the shingles vaccine used to treat postherpetic neuralgia?", [vaccine])
    assert found is not None and not found.affirms


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        (
            "Is Wilson disease inherited in an autosomal dominant pattern?",
            "Wilson disease is inherited in an autosomal recessive pattern.",
        ),
        (
            "Does basal cell carcinoma usually spread to other parts of the body?",
            "Basal cell carcinoma rarely spreads to other parts of the body.",
        ),
        ("Does hyperthyroidism cause weight gain?", "Hyperthyroidism often causes weight loss."),
    ],
)
def test_a_sentence_saying_one_claim_word_the_other_way_round_denies_it(question: str, sentence: str) -> None:
    found = restated(question, [sentence])
    assert found is not None and not found.affirms and found.sentence == sentence


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        # the opposite is negated: a double denial decides nothing
        ("Is psoriasis common in children?", "Psoriasis is not rare in children."),
        # a contrast that is not exclusive: affecting women does not deny affecting men
        ("Does lupus affect men?", "Lupus affects women."),
        # both sides beside the claim's words: a comparison, not a restatement
        ("Is gout more common in women?", "Gout is more common in men than in women."),
        # hedged opposite
        ("Does the drug increase blood pressure?", "The drug may decrease blood pressure."),
        # two words differ: not the claim said the other way round
        (
            "Is Wilson disease inherited in an autosomal dominant pattern?",
            "Wilson disease is X-linked recessive.",
        ),
    ],
)
def test_no_opposite_verdict_from_a_negated_hedged_contrasting_or_distant_sentence(
    question: str, sentence: str
) -> None:
    assert restated(question, [sentence]) is None


def test_an_entity_the_sentence_names_by_another_kg_name_counts_as_said(slice_kb: KnowledgeBase) -> None:
    def entities_in(text: str) -> list[tuple[str, frozenset[str]]]:
        return [(m.surface, frozenset(m.entity_ids)) for m in slice_kb.matcher.find(text)]

    question = "Does high blood pressure damage the kidneys?"
    sentence = "Over time, hypertension can damage the kidneys."
    assert {i for _, ids in entities_in("high blood pressure") for i in ids} & {
        i for _, ids in entities_in("hypertension") for i in ids
    }, "the slice KB's linker no longer knows the synonym this test reads"
    assert restated(question, [sentence]) is None  # word by word, "high blood pressure" is not said
    found = restated(question, [sentence], entities_in=entities_in)
    assert found is not None and found.affirms and found.sentence == sentence


def test_a_sentence_about_stopping_the_cause_neither_affirms_nor_denies_it() -> None:
    question = "Does smoking increase the risk of bladder cancer?"
    assert restated(question, ["Quitting smoking decreases the risk of bladder cancer."]) is None
    assert (
        restated("Does smoking decrease life expectancy?", ["Quitting smoking decreases life expectancy."])
        is None
    )
    found = restated(question, ["Smoking decreases the risk of bladder cancer."])
    assert found is not None and not found.affirms and found.opposite == ("increase", "decreases")


def test_with_or_without_turns_nothing_round() -> None:
    """ "With or without treatment, most people … recover completely" (MedQuAD, Bell's palsy) restates
    "most people with Bell's palsy make a complete recovery"; its "without" is an idiom, not a reverser."""
    question = "Do most people with Bell's palsy make a complete recovery?"
    sentence = (
        "With or without treatment, most people with Bell's palsy begin to get better within 2 weeks and "
        "recover completely within 3 to 6 months."
    )
    found = restated(question, [sentence])
    assert found is not None and found.affirms
    assert (
        restated(question, ["Without treatment, most people with Bell's palsy recover completely."]) is None
    )


def test_a_reply_the_slice_says_the_other_way_round_is_contradicted_and_says_which_word(
    consultant: Consultant,
) -> None:
    answer = consultant.ask(
        "Colleague says: the chance of getting cancer decreases as you get older.", task="check_reply"
    ).answer
    claim = answer["reply_check"]["claims"][0]
    assert claim["verdict"] == "contradicted" and claim["decided_by"] == "restatement", claim
    assert claim["opposite"] == ["decreases", "increases"]
    assert "The chance of getting cancer increases as you get older." in claim["quotes"][0]
    assert (
        "the passage says it with \u201cincreases\u201d where the claim says \u201cdecreases\u201d"
        in answer["text"]
    )


def test_the_clause_after_a_contrast_decides_with_its_pronoun_carrying_the_condition() -> None:
    sentence = (
        "Basal cell carcinoma may spread to tissues around the cancer, but it usually does not spread to "
        "other parts of the body."
    )
    question = "Does basal cell carcinoma usually spread to other parts of the body?"
    found = restated(question, [sentence], conditions=("basal cell carcinoma",))
    assert found is not None and not found.affirms and found.sentence == sentence
    assert restated(question, [sentence]) is None  # without the condition named, nothing is carried
    # only a pronoun carries the subject: the second clause is about something else, so only the first
    # clause decides (it denies the claim), and a claim about the second clause's subject is not read
    other = "Dirt does not cause acne, but hormones cause acne in teenagers."
    found = restated("Does dirt cause acne?", [other], conditions=("acne",))
    assert found is not None and not found.affirms
    assert restated("Does dirt cause acne in teenagers?", [other], conditions=("acne",)) is None


def test_the_clause_before_a_contrast_decides_when_a_hedge_is_only_in_the_other() -> None:
    sentence = "Hives usually go away on their own, but if you have a serious case, you might need medicine."
    found = restated("Do hives usually clear up on their own?", [sentence])
    assert found is not None and found.affirms and found.sentence == sentence
    both = "Hives usually go away on their own, but they usually do not go away on their own in adults."
    hives = ("hives",)
    assert (
        restated("Do hives usually clear up on their own?", [both], conditions=hives) is None
    )  # they disagree


@pytest.mark.parametrize(
    ("question", "sentence", "affirms"),
    [
        # a comparison said the other way round denies the claim; the bag of words had supported it
        (
            "Is giant cell arteritis more common in men than in women?",
            "Giant cell arteritis is more common in women than in men.",
            False,
        ),
        (
            "Is giant cell arteritis more common in women than in men?",
            "Giant cell arteritis is more common in women than in men.",
            True,
        ),
        # the question rewriter carries the rest of the claim after what is compared
        (
            "Can you lose bone faster than you make bone after about age 20?",
            "After about age 20, you can lose bone faster than you make bone.",
            True,
        ),
    ],
)
def test_a_comparison_is_read_in_its_order(question: str, sentence: str, affirms: bool) -> None:
    found = restated(question, [sentence])
    assert found is not None and found.affirms is affirms


def test_a_comparative_claim_needs_a_sentence_that_compares() -> None:
    question = "Is giant cell arteritis more common in men than in women?"
    assert restated(question, ["Giant cell arteritis is more common in men and in women over 50."]) is None


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        # real MedlinePlus sentences against a colleague's wording of them
        (
            "Do hives usually clear up by themselves in adults?",
            "Hives usually go away by themselves in adults.",
        ),
        (
            "Does giant cell arteritis affect people over fifty?",
            "Giant cell arteritis affects people over 50.",
        ),
        ("Is impetigo mostly due to staph bacteria?", "Impetigo is usually caused by staph bacteria."),
        (
            "Do most people with a herniated disk get better with treatment?",
            "With treatment, most people with a herniated disk recover.",
        ),
        (
            "Are diabetes and high blood pressure the leading causes of kidney disease?",
            "Diabetes and high blood pressure are the most common causes of kidney disease.",
        ),
    ],
)
def test_common_paraphrases_meet_the_page_s_words(question: str, sentence: str) -> None:
    found = restated(question, [sentence])
    assert found is not None and found.affirms is True and found.sentence == sentence  # quoted as written


def test_a_near_synonym_that_changes_strength_is_not_a_paraphrase() -> None:
    # "often" is weaker than "usually": the page's sentence does not restate the claim
    assert (
        restated("Is impetigo usually caused by staph bacteria?", ["Impetigo is often caused by staph."])
        is None
    )


def test_number_words_become_digits_but_one_stays_a_word() -> None:
    assert one_form("No one over fifty is ill Two or three days.") == "No one over 50 is ill 2 or 3 days."
    assert one_form("It goes away; colds start later.") == "It resolve; colds begin later."


def test_a_viral_claim_meets_the_page_s_virus_and_its_bacteria() -> None:
    # "viral" was read as "virus" in the sentence but not in the claim, so no claim saying it was ever read
    page = ["The cause is usually a virus, often parainfluenza virus."]
    found = restated("Is croup usually viral?", page, titles=["What is (are) Croup ?"], conditions=("croup",))
    assert found is not None and found.affirms
    denied = restated(
        "Is impetigo a viral skin infection?", ["Impetigo is a skin infection caused by bacteria."]
    )
    assert denied is not None and not denied.affirms and denied.opposite == ("viral", "bacteria")
