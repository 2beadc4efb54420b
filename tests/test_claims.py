"""Splitting a colleague's reply into checkable claims, and claim <-> yes/no question rewriting
(graphs/text/claims.py, claim_questions.py, claim_statements.py, claim_words.py). Real replies and real
BioASQ/PubMedQA questions."""

from __future__ import annotations

import json
import time

import pytest
from pydantic import ValidationError

from graphs.model.settings import load_settings
from graphs.text.claims import Claim, question_form, split_reply, statement_from_question

AF_REPLY = (
    "Colleague says: for a patient with atrial fibrillation and CHA2DS2-VASc of 3, aspirin alone is adequate "
    "stroke prevention."
)


def _spans_match(reply: str, claims: list[Claim]) -> None:
    for claim in claims:
        assert reply[claim.start : claim.end] == claim.text
    assert [c.start for c in claims] == sorted(c.start for c in claims)


def test_af_aspirin_reply_is_one_positive_claim_with_the_adverbial_moved_to_the_end() -> None:
    result = split_reply(AF_REPLY)
    assert result.problem is None and result.left_out == 0 and result.not_checkable == []
    (claim,) = result.claims
    assert claim.text == (
        "for a patient with atrial fibrillation and CHA2DS2-VASc of 3, "
        "aspirin alone is adequate stroke prevention"
    )
    assert claim.question == (
        "Is aspirin alone adequate stroke prevention "
        "for a patient with atrial fibrillation and CHA2DS2-VASc of 3?"
    )
    assert not claim.negated and claim.negation_cue is None and not claim.hedged
    _spans_match(AF_REPLY, result.claims)
    assert (
        AF_REPLY[: claim.start] == "Colleague says: "
    )  # the reported-speech prefix is not part of the claim


def test_semicolon_and_but_split_three_claims_the_third_negated() -> None:
    reply = (
        "Metformin is first-line for type 2 diabetes; "
        "sulfonylureas cause weight loss, but insulin is never needed."
    )
    claims = split_reply(reply).claims
    assert [c.text for c in claims] == [
        "Metformin is first-line for type 2 diabetes",
        "sulfonylureas cause weight loss",
        "insulin is never needed",
    ]
    assert [c.negated for c in claims] == [False, False, True]
    assert claims[2].negation_cue == "never"
    assert [c.question for c in claims] == [
        "Is metformin first-line for type 2 diabetes?",
        "Do sulfonylureas cause weight loss?",
        "Is insulin ever needed?",
    ]
    _spans_match(reply, claims)


def test_a_semicolon_after_an_instruction_still_splits_off_the_statement() -> None:
    """An imperative has no verb the lexicon knows ("start"), but a semicolon still ends a statement: the
    newcomer's gout reply was checked as one claim, so "NSAIDs do not help" got no verdict of its own."""
    reply = "Colleague says: for an acute gout attack, start allopurinol during the flare; NSAIDs do not help"
    claims = split_reply(reply).claims
    assert [c.text for c in claims] == [
        "for an acute gout attack, start allopurinol during the flare",
        "NSAIDs do not help",
    ]
    assert [c.negated for c in claims] == [False, True]
    _spans_match(reply, claims)
    # a semicolon before a fragment with no subject of its own still joins it to the clause before
    assert [c.text for c in split_reply("Use ibuprofen; and rest.").claims] == ["Use ibuprofen; and rest"]


def test_a_second_reported_clause_is_checked_without_its_that() -> None:
    """ "told the family that X and that Y": Y is the claim, not "that Y" (it was asked as "Do that
    antibiotics cure it?")."""
    reply = "The registrar told them that cystic fibrosis is caused by a virus and that antibiotics cure it."
    assert [(c.text, c.question) for c in split_reply(reply).claims] == [
        ("cystic fibrosis is caused by a virus", "Is cystic fibrosis caused by a virus?"),
        ("antibiotics cure it", "Do antibiotics cure cystic fibrosis?"),
    ]
    demonstrative = split_reply("Aspirin is safe and that drug causes no rash.").claims
    assert demonstrative[-1].text == "that drug causes no rash"  # not a complementizer: kept


def test_it_stands_for_the_last_singular_subject_and_they_for_the_last_plural_one() -> None:
    """After "antibiotics cure it", "it is inherited …" is about cystic fibrosis, not the antibiotics; a
    disease ending in -s stays singular ("diabetes … it")."""
    reply = (
        "The registrar said cystic fibrosis is caused by a virus and that antibiotics cure it. "
        "She also said it is inherited in an autosomal recessive pattern. They are also safe in pregnancy. "
        "Diabetes is curable; it only needs diet."
    )
    questions = [c.question for c in split_reply(reply).claims]
    assert questions[2] == "Is cystic fibrosis inherited in an autosomal recessive pattern?"
    assert questions[3] == "Are antibiotics also safe in pregnancy?"
    assert questions[5] == "Does diabetes only need diet?"


def test_coordinated_subject_is_one_claim() -> None:
    (claim,) = split_reply("Statins and aspirin reduce cardiovascular events.").claims
    assert claim.text == "Statins and aspirin reduce cardiovascular events"
    assert claim.question == "Do statins and aspirin reduce cardiovascular events?"


def test_and_splits_only_between_clauses_with_their_own_subject_and_verb() -> None:
    two = split_reply(
        "Beta blockers improve survival in heart failure and ACE inhibitors reduce hospitalisation."
    )
    assert [c.question for c in two.claims] == [
        "Do beta blockers improve survival in heart failure?",
        "Do ACE inhibitors reduce hospitalisation?",
    ]
    # A second predicate of the same subject is a second claim, checked about that subject: as one claim,
    # "Lyme disease is spread by ticks and cannot be cured with antibiotics" was called supported by the
    # KG's tick edge, its false half included.
    lyme = split_reply(
        "Colleague says: Lyme disease is spread by ticks and cannot be cured with antibiotics."
    )
    assert [(c.text, c.question, c.negated) for c in lyme.claims] == [
        ("Lyme disease is spread by ticks", "Is lyme disease spread by ticks?", False),
        ("cannot be cured with antibiotics", "Can lyme disease be cured with antibiotics?", True),
    ]
    meals = split_reply("Metformin is first-line, and should be given with meals.")
    assert [c.question for c in meals.claims] == [
        "Is metformin first-line?",
        "Should metformin be given with meals?",
    ]
    weight = split_reply("Metformin lowers glucose and reduces weight.")  # two words are a claim here
    assert [c.question for c in weight.claims] == [
        "Does metformin lower glucose?",
        "Does metformin reduce weight?",
    ]
    treated = split_reply("Gout is caused by uric acid and treated with colchicine.")  # "is treated": one
    assert len(treated.claims) == 1
    adjectives = split_reply("Ciprofloxacin is effective and well tolerated in cystitis.")
    assert len(adjectives.claims) == 1


def test_a_counted_noun_is_no_verb_so_a_long_subject_is_not_cut_at_its_and() -> None:
    """ "younger than 60 years" once read "years" as a verb ("-s after a noun"), so the subject "… who have no
    signs or symptoms" looked like a clause and "an acceptable platelet count is usually watchful waiting"
    became a claim of its own — which its page's own sentence then "contradicted" (NegEx's "no" reaches the
    platelet count). One claim, as written."""
    (claim,) = split_reply(
        "Colleague says: Treatment of essential thrombocythemia in patients younger than 60 years who have "
        "no signs or symptoms and an acceptable platelet count is usually watchful waiting."
    ).claims
    assert claim.question.startswith("Is treatment of essential thrombocythemia in patients younger than 60")
    assert claim.question.endswith("an acceptable platelet count usually watchful waiting?")
    # a number before an "-s" word outside the lexicon blocks only the guess; lexicon verbs still count
    assert [c.question for c in split_reply("Aspirin for 3 months reduces stroke.").claims] == [
        "Does aspirin for 3 months reduce stroke?"
    ]


def test_a_pronoun_subject_takes_the_previous_claims_subject_in_the_question() -> None:
    reply = (
        "My colleague said that metformin reduces mortality in type 2 diabetes, "
        "and it should be given at night."
    )
    claims = split_reply(reply).claims
    assert [c.text for c in claims] == [
        "metformin reduces mortality in type 2 diabetes",
        "it should be given at night",
    ]
    assert [c.question for c in claims] == [
        "Does metformin reduce mortality in type 2 diabetes?",
        "Should metformin be given at night?",
    ]


def test_not_effective_is_negated_and_asked_positively() -> None:
    (claim,) = split_reply("Ibuprofen is not effective for fever.").claims
    assert claim.negated and claim.negation_cue == "is not"
    assert claim.question == "Is ibuprofen effective for fever?"


def test_no_inside_the_subject_does_not_negate_the_claim() -> None:
    (claim,) = split_reply("Patients with no history of bleeding should receive warfarin.").claims
    assert not claim.negated and claim.negation_cue is None
    assert claim.question == "Should patients with no history of bleeding receive warfarin?"


@pytest.mark.parametrize(
    ("claim_text", "question", "cue"),
    [
        (
            "Aspirin has no benefit in primary prevention",
            "Does aspirin have any benefit in primary prevention?",
            "has no",
        ),
        (
            "There is no evidence that vitamin C prevents colds",
            "Does vitamin C prevent colds?",
            "there is no evidence that",
        ),
        ("Warfarin doesn't work in AF", "Does warfarin work in AF?", "doesn't"),
        ("Ibuprofen is ineffective for fever", "Is ibuprofen effective for fever?", "ineffective"),
        ("Metformin fails to reduce mortality", "Does metformin reduce mortality?", "fails to"),
        (
            "Aspirin never causes Reye syndrome in adults",
            "Does aspirin ever cause Reye syndrome in adults?",
            "never",
        ),
        (
            "Neither aspirin nor clopidogrel reduces mortality",
            "Does either aspirin or clopidogrel reduce mortality?",
            "neither",
        ),
        ("No antibiotics are needed for viral colds", "Are any antibiotics needed for viral colds?", "no"),
        (
            "Aspirin should not be used in children under 16",
            "Should aspirin be used in children under 16?",
            "should not",
        ),
        (
            "There's no role for antibiotics in viral colds",
            "Is there any role for antibiotics in viral colds?",
            "is no",
        ),
        ("Homeopathy lacks efficacy for asthma", "Does homeopathy have efficacy for asthma?", "lacks"),
        ("Don't give NSAIDs in CKD", "Is it recommended to give NSAIDs in CKD?", "don't"),
    ],
)
def test_negations_of_the_predicate(claim_text: str, question: str, cue: str) -> None:
    assert question_form(claim_text) == (question, True, cue)


@pytest.mark.parametrize(
    "claim_text",
    [
        "Insulin is not only effective but also safe in pregnancy",
        "Patients not on anticoagulation should receive aspirin",
        "Warfarin is recommended for patients with no contraindication",
    ],
)
def test_negation_words_outside_the_predicate_do_not_negate(claim_text: str) -> None:
    assert question_form(claim_text)[1] is False


def test_hedged_claims_keep_their_cue_and_are_asked_without_the_hedge() -> None:
    (claim,) = split_reply("Antibiotics may shorten a viral cold.").claims
    assert claim.hedged and claim.hedge_cue == "may" and not claim.negated
    assert claim.question == "Can antibiotics shorten a viral cold?"
    (probably,) = split_reply("Aspirin probably reduces colorectal cancer risk.").claims
    assert (
        probably.hedge_cue == "probably"
        and probably.question == "Does aspirin reduce colorectal cancer risk?"
    )
    (framed,) = split_reply("Some evidence suggests that vitamin D prevents falls.").claims
    assert framed.hedge_cue == "some evidence suggests" and framed.question == "Does vitamin D prevent falls?"
    (plain,) = split_reply("Amiodarone can cause thyroid dysfunction.").claims
    assert not plain.hedged and plain.hedge_cue is None


@pytest.mark.parametrize(
    ("claim_text", "question"),
    [
        ("Metformin reduces mortality", "Does metformin reduce mortality?"),
        ("Statins reduce LDL cholesterol", "Do statins reduce LDL cholesterol?"),
        ("Aspirin reduced mortality in ISIS-2", "Did aspirin reduce mortality in ISIS-2?"),
        ("Warfarin therapy carries a bleeding risk", "Does warfarin therapy carry a bleeding risk?"),
        ("Metformin potentiates lactic acidosis", "Does metformin potentiate lactic acidosis?"),
        ("Apixaban has been shown to reduce stroke", "Has apixaban been shown to reduce stroke?"),
        ("Vitamin K should be given at night", "Should vitamin K be given at night?"),
        ("Amiodarone can cause thyroid dysfunction", "Can amiodarone cause thyroid dysfunction?"),
        ("HbA1c targets should be individualised", "Should HbA1c targets be individualised?"),
        ("ACE inhibitors (ACEi) reduce proteinuria", "Do ACE inhibitors (ACEi) reduce proteinuria?"),
        ("Patients who take warfarin should avoid NSAIDs", "Should patients who take warfarin avoid NSAIDs?"),
        (
            "If the patient is pregnant, warfarin is contraindicated",
            "Is warfarin contraindicated if the patient is pregnant?",
        ),
        ("Studies show that statins reduce mortality after MI", "Do statins reduce mortality after MI?"),
        ("Give aspirin 300 mg now", "Is it recommended to give aspirin 300 mg now?"),
        ("Aspirin for everyone over fifty", "Is it true that aspirin for everyone over fifty?"),
    ],
)
def test_question_form_of_positive_claims(claim_text: str, question: str) -> None:
    assert question_form(claim_text) == (question, False, None)


def test_a_reply_that_only_asks_is_a_question_problem() -> None:
    result = split_reply("Is aspirin enough for stroke prevention in AF? What about apixaban?")
    assert result.problem == "question" and result.claims == []
    assert result.not_checkable == ["Is aspirin enough for stroke prevention in AF?", "What about apixaban?"]


@pytest.mark.parametrize(
    "reply", ["Thanks!", "", "   \n ", "Ok. I'm not sure.", "Yes.", "...", "Hope this helps!"]
)
def test_nothing_checkable_is_no_claim(reply: str) -> None:
    result = split_reply(reply)
    assert result.problem == "no_claim" and result.claims == [] and result.left_out == 0


def test_greetings_and_questions_are_skipped_but_the_claims_kept() -> None:
    reply = "Hi Anna, aspirin is fine for this patient. Why would you give warfarin? Hope this helps!"
    result = split_reply(reply)
    assert [c.text for c in result.claims] == ["aspirin is fine for this patient"]
    assert result.not_checkable == ["Why would you give warfarin?", "Hope this helps!"]
    assert result.problem is None
    _spans_match(reply, result.claims)


def test_fifty_sentences_give_eight_claims_and_forty_two_left_out() -> None:
    drugs = [f"Drug{i}" for i in range(50)]
    reply = " ".join(f"{drug} is used for hypertension in adults." for drug in drugs)
    result = split_reply(reply, max_claims=8)
    assert len(result.claims) == 8 and result.left_out == 42
    assert [c.text.split()[0] for c in result.claims] == drugs[:8]  # in reply order
    _spans_match(reply, result.claims)


@pytest.mark.parametrize(
    "reply",
    [
        "Para un paciente con fibrilación auricular y CHA2DS2-VASc de 3, la aspirina sola es una prevención "
        "adecuada del ictus.",
        "Bei einem Patienten mit Vorhofflimmern und einem CHA2DS2-VASc von 3 ist Aspirin allein eine "
        "ausreichende "
        "Schlaganfallprophylaxe.",
        "对于房颤且CHA2DS2-VASc评分为3的患者，单用阿司匹林足以预防卒中。",
        "Pour un patient avec une fibrillation auriculaire, l'aspirine seule est une prévention suffisante.",
    ],
)
def test_foreign_replies_are_not_english_but_still_split(reply: str) -> None:
    result = split_reply(reply)
    assert result.problem == "not_english"
    assert len(result.claims) == 1
    _spans_match(reply, result.claims)


@pytest.mark.parametrize(
    "reply",
    [
        "CAPIRI regimen includes capecitabine plus irinotecan.",  # "plus" is also French
        "Capmatinib binds MET.",  # "met" is also Dutch
        "Apixaban 5 mg BID.",
        "Hereditary hemochromatosis (HH) is a common autosomal recessive disorder characterized by systemic "
        "iron "
        "overload with consequent tissue damage.",
    ],
)
def test_english_replies_full_of_names_are_english(reply: str) -> None:
    assert split_reply(reply).problem != "not_english"


def test_abbreviations_and_decimals_do_not_split_sentences() -> None:
    reply = (
        "Apixaban is preferred over warfarin, e.g. in elderly patients. "
        "The usual dose is 2.5 mg twice daily vs. "
        "5 mg in most patients. Dr. Smith agrees with this approach, i.e. dose reduction by approx. 50%."
    )
    claims = split_reply(reply).claims
    assert [c.text for c in claims] == [
        "Apixaban is preferred over warfarin, e.g. in elderly patients",
        "The usual dose is 2.5 mg twice daily vs. 5 mg in most patients",
        "Dr. Smith agrees with this approach, i.e. dose reduction by approx. 50%",
    ]
    _spans_match(reply, claims)


def test_reported_speech_suffix_is_not_part_of_the_claim() -> None:
    reply = '"Aspirin is enough for stroke prevention in AF," my colleague said.'
    (claim,) = split_reply(reply).claims
    assert claim.text == "Aspirin is enough for stroke prevention in AF"
    assert claim.question == "Is aspirin enough for stroke prevention in AF?"


def test_spans_map_back_through_prefix_quotes_bullets_and_brackets() -> None:
    quoted = 'Dr Smith says "Aspirin is enough for AF. Warfarin is not needed in this patient."'
    result = split_reply(quoted)
    assert [c.text for c in result.claims] == [
        "Aspirin is enough for AF",
        "Warfarin is not needed in this patient",
    ]
    _spans_match(quoted, result.claims)
    bullets = "Their answer:\n- Apixaban is preferred in CKD\n- Warfarin needs INR monitoring\n"
    result = split_reply(bullets)
    assert [c.text for c in result.claims] == [
        "Apixaban is preferred in CKD",
        "Warfarin needs INR monitoring",
    ]
    _spans_match(bullets, result.claims)
    bracket = "However, aspirin reduces stroke risk by approx. 20% (cf. warfarin 60%)."
    (claim,) = split_reply(bracket).claims
    assert claim.text == "aspirin reduces stroke risk by approx. 20% (cf. warfarin 60%)"
    _spans_match(bracket, [claim])


@pytest.mark.parametrize(
    "reply",
    [
        ("Metformin is first-line for type 2 diabetes. " * 4500)[:200_000],
        "." * 200_000,
        " " * 200_000 + "x",
        "(" * 200_000,
        "aspirin and " * 16_000,
        "For a, " * 28_000 + "aspirin is good.",
        "Patients who " * 15_000 + "take aspirin",
        "\n" * 200_000,
        "Aspirin is enough." + " " * 200_000,
    ],
)
def test_huge_input_returns_quickly(reply: str) -> None:
    started = time.perf_counter()
    result = split_reply(reply)
    assert time.perf_counter() - started < 10
    assert len(result.claims) <= 8
    _spans_match(reply, result.claims)


def test_huge_reply_counts_what_it_leaves_out() -> None:
    reply = ("Metformin is first-line for type 2 diabetes. " * 4500)[:200_000]
    result = split_reply(reply)
    assert (
        len(result.claims) == 8 and result.left_out == reply.count(". ") + 1 - 8
    )  # the cut last one counts too


def test_claims_are_frozen() -> None:
    (claim,) = split_reply("Ibuprofen is not effective for fever.").claims
    with pytest.raises(ValidationError):
        claim.negated = False


BIOASQ_STATEMENTS = [
    ("Is baloxavir effective for influenza?", "Baloxavir is effective for influenza"),
    ("Does vesatolimod inhibit TLR7?", "Vesatolimod inhibits TLR7"),
    ("Can bergapten cause phototoxicity?", "Bergapten can cause phototoxicity"),
    ("Is colistin an antibiotic?", "Colistin is an antibiotic"),
    ("Is FTY720 FDA approved?", "FTY720 is FDA approved"),
    ("Can miR-122 target RUNX2?", "miR-122 can target RUNX2"),
    ("Does αCGRP have amyloidogenic properties?", "αCGRP has amyloidogenic properties"),
    ("Are there microbes in human breast milk?", "There are microbes in human breast milk"),
    (
        "Has Hesperidin any role as a Neuroprotective Agent?",
        "Hesperidin has a role as a Neuroprotective Agent",
    ),
    (
        "Have apolipoprotein mimetics been used in clinical trials?",
        "Apolipoprotein mimetics have been used in clinical trials",
    ),
    (
        "Should cerebrolysin be used for aneurysmal subarachnoid hemorrhage?",
        "Cerebrolysin should be used for aneurysmal subarachnoid hemorrhage",
    ),
    ("Does the royal jelly contain proteins?", "The royal jelly contains proteins"),
    (
        "Do polycomb group proteins (PcG) mediate the formation of chromatin loops?",
        "Polycomb group proteins (PcG) mediate the formation of chromatin loops",
    ),
    (
        "Is overexpression of LY6K associated with better prognosis for non-small cell lung cancer patients?",
        "Overexpression of LY6K is associated with better prognosis for non-small cell lung cancer patients",
    ),
    (
        "Is the FIP virus thought to be a mutated strain for the Feline enteric Coronavirus?",
        "The FIP virus is thought to be a mutated strain for the Feline enteric Coronavirus",
    ),
    (
        "As of Feb 2019, are major brain gangliosides a target for the treatment of Alzheimer's disease?",
        "As of Feb 2019, major brain gangliosides are a target for the treatment of Alzheimer's disease",
    ),
    (
        "Double balloon enteroscopy: is it efficacious and safe in a community setting?",
        "Double balloon enteroscopy is efficacious and safe in a community setting",
    ),
    (
        "Orthostatic myoclonus: an underrecognized cause of unsteadiness?",
        "Orthostatic myoclonus is an underrecognized cause of unsteadiness",
    ),
    (
        "Does early migraine treatment shorten time to headache peak and reduce its severity?",
        "Early migraine treatment shortens time to headache peak and reduces its severity",
    ),
]


@pytest.mark.parametrize(("question", "statement"), BIOASQ_STATEMENTS)
def test_statement_from_question(question: str, statement: str) -> None:
    assert statement_from_question(question) == statement


@pytest.mark.parametrize(
    "question",
    [
        "What does the pembrolizumab companion diagnostic test assess?",
        "Are bacteria in the genus Clostridium facultative anaerobes?",  # no confident subject boundary
        "Risk factors for major depression during midlife: are they the same or different?",  # a choice
        "Transient tachypnea of the newborn (TTN): a role for polymorphisms in adrenergic receptor genes?",
        "x" * 5000 + "?",
    ],
)
def test_statement_from_question_says_none_when_unsure(question: str) -> None:
    assert statement_from_question(question) is None


@pytest.mark.parametrize("question", [q for q, _ in BIOASQ_STATEMENTS[:11] if q.split()[0] != "Has"])
def test_question_and_statement_round_trip(question: str) -> None:
    statement = statement_from_question(question)
    assert statement is not None
    asked, negated, _ = question_form(statement)
    assert asked.lower() == question.lower() and not negated


def test_statement_coverage_on_the_yes_no_question_sets() -> None:
    eval_dir = load_settings().shared_data_dir / "eval"
    bioasq, pubmedqa = eval_dir / "bioasq_taskb_golden_7b_10b.jsonl", eval_dir / "pubmedqa_pqal.jsonl"
    missing = [str(path) for path in (bioasq, pubmedqa) if not path.is_file()]
    assert not missing, (
        f"shared evaluation data missing: {', '.join(missing)} -- point EVIGRAPH_SHARED_DATA_DIR "
        "(load_settings().shared_data_dir) at the directory whose eval/ holds the BioASQ and PubMedQA files"
    )
    with bioasq.open() as handle:
        yes_no = [row["question"] for row in map(json.loads, handle) if row["type"] == "yesno"]
    with pubmedqa.open() as handle:
        pqal = [row["question"] for row in map(json.loads, handle)]
    assert len(yes_no) == 532 and len(pqal) == 1000
    assert sum(statement_from_question(q) is not None for q in yes_no) / len(yes_no) >= 0.9
    assert sum(statement_from_question(q) is not None for q in pqal) / len(pqal) >= 0.85


def _only_claim(reply: str) -> Claim:
    result = split_reply(reply)
    assert len(result.claims) == 1, result.claims
    claim = result.claims[0]
    assert reply[claim.start : claim.end] == claim.text
    return claim


@pytest.mark.parametrize(
    ("reply", "text", "question", "negated"),
    [
        (
            "Cardiology fellow: statins reduce cardiovascular events.",
            "statins reduce cardiovascular events",
            "Do statins reduce cardiovascular events?",
            False,
        ),
        (
            "Discharge summary from the ward team: warfarin is not safe in pregnancy.",
            "warfarin is not safe in pregnancy",
            "Is warfarin safe in pregnancy?",
            True,
        ),
        (
            "Our renal registrar wrote: lithium damages the kidneys.",
            "lithium damages the kidneys",
            "Does lithium damage the kidneys?",
            False,
        ),
        (
            "Thanks. Ward round summary: most febrile seizures stop on their own.",
            "most febrile seizures stop on their own",
            "Do most febrile seizures stop on their own?",
            False,
        ),
    ],
)
def test_speaker_prefix_before_a_colon_is_stripped(
    reply: str, text: str, question: str, negated: bool
) -> None:
    claim = _only_claim(reply)
    assert (claim.text, claim.question, claim.negated) == (text, question, negated)


def test_colon_after_a_clause_is_no_speaker_prefix() -> None:
    claim = split_reply("Metformin is the first choice: it lowers glucose.").claims[0]
    assert claim.text.startswith("Metformin is the first choice")


@pytest.mark.parametrize(
    ("reply", "text", "question", "negated"),
    [
        (
            "Our pharmacist told the family that penicillin allergy is lifelong.",
            "penicillin allergy is lifelong",
            "Is penicillin allergy lifelong?",
            False,
        ),
        (
            "The night nurse believes that measles cannot be prevented.",
            "measles cannot be prevented",
            "Can measles be prevented?",
            True,
        ),
        (
            "According to the ward pharmacist, metformin causes lactic acidosis.",
            "metformin causes lactic acidosis",
            "Does metformin cause lactic acidosis?",
            False,
        ),
        (
            "The endocrinologist advised he stop metformin before the CT scan.",
            "he stop metformin before the CT scan",
            "Should he stop metformin before the CT scan?",
            False,
        ),
    ],
)
def test_reporting_frames_are_stripped(reply: str, text: str, question: str, negated: bool) -> None:
    claim = _only_claim(reply)
    assert (claim.text, claim.question, claim.negated) == (text, question, negated)


def test_own_hedging_frame_is_not_a_speaker() -> None:
    claim = _only_claim("I think aspirin reduces colorectal cancer risk.")
    assert claim.text.startswith("I think")
    assert claim.question == "Does aspirin reduce colorectal cancer risk?"


@pytest.mark.parametrize(
    ("reply", "text", "question", "negated"),
    [
        (
            "Told her to avoid dairy, since dairy worsens eczema.",
            "dairy worsens eczema",
            "Does dairy worsen eczema?",
            False,
        ),
        (
            "We should stop his statin because statins cause diabetes.",
            "statins cause diabetes",
            "Do statins cause diabetes?",
            False,
        ),
        (
            "His chest pain cannot be cardiac, because troponin does not rise in angina.",
            "troponin does not rise in angina",
            "Does troponin rise in angina?",
            True,
        ),
        (
            "You can reassure him, most febrile seizures stop on their own.",
            "most febrile seizures stop on their own",
            "Do most febrile seizures stop on their own?",
            False,
        ),
        (
            "Her sore throat is viral, so she just needs fluids and rest.",
            "Her sore throat is viral",
            "Is her sore throat viral?",
            False,
        ),
        (
            "Stop the ibuprofen — it worsens kidney function.",
            "it worsens kidney function",
            "Does the ibuprofen worsen kidney function?",
            False,
        ),
        (
            "Started him on amoxicillin for the otitis media.",
            "Started him on amoxicillin for the otitis media",
            "Is amoxicillin used for the otitis media?",
            False,
        ),
    ],
)
def test_actions_are_dropped_beside_the_fact_they_rest_on(
    reply: str, text: str, question: str, negated: bool
) -> None:
    claim = _only_claim(reply)
    assert (claim.text, claim.question, claim.negated) == (text, question, negated)


def test_two_facts_around_a_comma_stay_two_claims_and_lists_stay_whole() -> None:
    claims = split_reply("Antibiotics do not cure colds, they only cause side effects.").claims
    assert [c.question for c in claims] == [
        "Do antibiotics cure colds?",
        "Do antibiotics only cause side effects?",
    ]
    listed = _only_claim("Smoking, obesity and diabetes increase the risk of stroke.")
    assert listed.question == "Do smoking, obesity and diabetes increase the risk of stroke?"


def test_a_labelled_statement_split_in_two_is_scored_by_the_claim_that_decides_the_reply() -> None:
    """evals/claim_eval.py labels a whole statement; once the splitter cuts it in two, the claim scored is
    the one the reply's status follows (any contradicted, else any not supported, else the first)."""
    from evals.claim_eval import deciding_claim

    true_half = {"question": "Are some people born with weak abdominal muscles?", "verdict": "supported"}
    false_half = {"question": "Can some people be less likely to get a hernia?", "verdict": "contradicted"}
    open_half = {"question": "Does it recur?", "verdict": "no evidence found"}
    assert deciding_claim([true_half, false_half]) == false_half
    assert deciding_claim([true_half, open_half]) == open_half
    assert deciding_claim([true_half, dict(true_half)]) == true_half
    assert deciding_claim([]) == {}


def test_a_negation_does_not_run_on_past_a_comma_and_into_the_next_clause_of_a_statement() -> None:
    """ "Rebleeding from a cavernous angioma is common, it is not predictable, and individuals frequently have
    multiple CCMs found via magnetic resonance imaging." — the consumer page's own sentence — called the
    claim "individuals frequently have multiple CCMs" contradicted: the "not" of the clause before ran on."""
    from graphs.text.negation import negated_spans

    text = (
        "Rebleeding from a cavernous angioma is common, it is not predictable, and individuals frequently "
        "have multiple CCMs found via magnetic resonance imaging."
    )
    later, own = text.index("individuals"), text.index("predictable")
    assert negated_spans(text, [(later, later + 11), (own, own + 11)], statement=True) == [False, True]
    assert negated_spans(text, [(later, later + 11)]) == [True]  # a mention's scope (NegEx's) is unchanged
