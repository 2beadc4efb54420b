"""The general case leads the key sentences, its exceptions follow (agent/nodes/sentence_order.py)."""

from __future__ import annotations

from agent.nodes.reading import ReadSentence
from agent.nodes.sentence_order import general_first, opens_on_exception


def said(text: str, logit: float = 1.0) -> ReadSentence:
    return ReadSentence("E:x", text, 0, len(text), 0, logit, 0.7, logit, "treatment")


def test_an_exception_does_not_lead_when_the_general_case_is_shown() -> None:
    """ "How is celiac disease treated?" led with the people a gluten-free diet does not help."""
    exception = said(
        "In some cases, people continue to have difficulty absorbing nutrients despite the diet."
    )
    general = said("For most people, following a gluten-free diet will stop symptoms.")
    later = said("Depending on age at diagnosis, some complications will not improve.")
    assert general_first([exception, general, later]) == [general, exception, later]
    assert general_first([general, exception, later]) == [general, exception, later]  # already first
    only_exceptions = [exception, said("Rarely, the diet fails altogether.")]
    assert general_first(only_exceptions) == only_exceptions  # nothing general to lead with
    assert general_first([]) == []


def test_an_exception_the_reader_prefers_keeps_the_lead() -> None:
    """ "Can you die from shingles?": the rare outcome is what is asked, and the reader scores it highest."""
    rare = said("Very rarely, shingles can also lead to pneumonia, brain inflammation, or death.", 1.59)
    general = said("The shingles virus can take advantage of this and become active again.", 0.81)
    assert general_first([rare, general]) == [rare, general]
    # The celiac case: the passage-rank prior put the exception first; the reader scored the diet higher.
    exception = said("In some cases, people continue to have difficulty despite the diet.", -1.98)
    diet = said("For most people, following a gluten-free diet will stop symptoms.", -1.61)
    assert general_first([exception, diet]) == [diet, exception]


def test_what_opens_on_an_exception() -> None:
    for text in (
        "In some cases, exposure to lead can cause gout.",
        "Sometimes, a urinary tract infection can cause kidney stones.",
        "Some people with shingles have pain for years.",
        "Rarely, shingles can lead to pneumonia.",
        "In rare cases, chelation therapy is used.",
    ):
        assert opens_on_exception(text), text
    for text in (
        "For most people, a gluten-free diet stops symptoms.",
        "Some foods may cause kidney stones in certain people.",  # foods, not a minority of people
        "Sometimes called the kissing disease, mononucleosis spreads through saliva.",
    ):
        assert not opens_on_exception(text), text


def labelled(text: str, label: str) -> ReadSentence:
    return ReadSentence("E:x", text, 0, len(text), 0, 1.0, 0.7, 1.0, label)


def test_after_the_lead_only_sentences_on_the_asked_aspect_fill_the_budget() -> None:
    """ "What tests are used to diagnose multiple sclerosis?" filled its budget with "Physical and
    occupational therapy may also help." and "Depression is another common feature of MS." """
    from agent.nodes.sentence_order import on_asked_aspect

    lead = labelled(
        "Doctors use a medical history, physical exam, MRI and other tests to diagnose it.", "overview"
    )
    therapy = labelled("Physical and occupational therapy may also help.", "overview")
    depression = labelled("Depression is another common feature of MS.", "overview")
    cue = labelled("A physician may diagnose MS in some patients soon after onset.", "prognosis")
    section = labelled("An MRI shows the scars in the brain.", "diagnosis")
    snippet = labelled("Oligoclonal bands were found in 90% of the patients.", "general")
    read = [lead, therapy, depression, cue, section, snippet]
    assert on_asked_aspect(read, ["diagnosis"]) == [lead, cue, section, snippet]
    assert on_asked_aspect(read, ["overview"]) == read  # nothing specific asked
    assert on_asked_aspect([therapy, lead], ["diagnosis"]) == [
        therapy,
        lead,
    ]  # lead stays


def test_what_causes_the_subject_leads_over_what_the_subject_causes() -> None:
    """ "What causes glaucoma?" led with "… glaucoma, a leading cause of blindness"."""
    import re

    from agent.nodes.sentence_order import asked_direction_first, says_other_effect

    glaucoma = re.compile(r"\bglaucoma\b", re.IGNORECASE)
    inverse = said(
        "Nearly 2.7 million people have glaucoma, a leading cause of blindness in the United States."
    )
    also = said("Glaucoma is a group of diseases. It is a leading cause of blindness in the United States.")
    cause = said("Another risk factor for optic nerve damage in glaucoma relates to blood pressure.")
    asked = "What causes glaucoma?"
    assert asked_direction_first([inverse, also, cause], ["causes"], asked, glaucoma) == [
        cause,
        inverse,
        also,
    ]
    assert asked_direction_first([inverse, cause], ["treatment"], asked, glaucoma) == [inverse, cause]
    assert asked_direction_first([inverse, cause], ["causes"], "What can glaucoma lead to?", glaucoma) == [
        inverse,
        cause,
    ]  # what the subject causes is what is asked
    assert asked_direction_first([inverse, also], ["causes"], asked, glaucoma) == [inverse, also]  # no other
    gout = re.compile(r"\bgout\b", re.IGNORECASE)
    assert not says_other_effect("Renal insufficiency is a common cause of gout in older people.", gout)
    assert not says_other_effect("Gout is caused by uric acid, a cause of crystals in joints.", gout)
    assert not says_other_effect("Eating too many foods rich in purines can cause or aggravate gout.", gout)
    assert not says_other_effect("Mutations in the HFE gene cause this condition.", gout)  # refers back
    assert not says_other_effect("Gout is a form of arthritis.", gout)  # says nothing causal
    osteoporosis = re.compile("osteoporosis", re.I)
    assert says_other_effect("Osteoporosis can be the cause of bone fractures.", osteoporosis)
    assert says_other_effect(
        "People may not know that they have osteoporosis until a fall causes a bone to break.", osteoporosis
    )
    assert says_other_effect("Usually CLL does not cause any symptoms.", re.compile(r"\bCLL\b"))


def test_what_the_subject_causes_is_not_shown_for_what_causes_it() -> None:
    """ "What causes chronic lymphocytic leukemia?" was answered with "This may cause infection, anemia, and
    easy bleeding." and "Usually CLL does not cause any symptoms." from its overview pages; a sentence of a
    page with the asked label (its "What causes" or "Who is at risk" page) stays, whatever its grammar."""
    import re

    from agent.nodes.reading import ReadSentence
    from agent.nodes.sentence_order import on_asked_direction

    def on(label: str, text: str) -> ReadSentence:
        return ReadSentence("E:x", text, 0, len(text), 0, 1.0, 0.7, 1.0, label)

    cll = re.compile(r"\b(?:CLL|chronic lymphocytic leukemia)\b", re.IGNORECASE)
    inverse = on("overview", "Usually CLL does not cause any symptoms.")
    effect = on("overview", "This may cause infection, anemia, and easy bleeding.")
    risk = on("risk factors", "Older age can affect the risk of developing chronic lymphocytic leukemia.")
    medicines = on("risk factors", "Some commonly used medicines can cause loss of bone mass.")
    asked = ["causes", "risk factors"]
    question = "What causes chronic lymphocytic leukemia?"
    assert on_asked_direction([inverse, effect, risk, medicines], asked, question, cll) == [risk, medicines]
    assert on_asked_direction([inverse, risk], ["symptoms"], "What are the symptoms of CLL?", cll) == [
        inverse,
        risk,
    ]  # not a causes question
    assert on_asked_direction([inverse, risk], asked, "What can CLL lead to?", cll) == [inverse, risk]
    assert on_asked_direction([inverse, risk], asked, question, None) == [inverse, risk]  # no subject
    from agent.nodes.sentence_order import asked_direction_first

    common = on("overview", "CLL is the second most common type of leukemia in adults.")
    assert asked_direction_first([common, risk], asked, question, cll) == [risk, common]  # says how it comes
    assert asked_direction_first([risk, common], asked, question, cll) == [risk, common]
    assert asked_direction_first([common, risk], ["symptoms"], question, cll) == [common, risk]
    # "causes" read from the cue word "mutations": the question asks what the mutations cause
    samhd1 = re.compile(r"\bSAMHD1\b")
    ags = on("general", "Mutations in the SAMHD1 gene cause the severe autoimmune disease, AGS.")
    asks_effect = "Which syndrome is associated to SAMHD1 gene mutations?"
    assert on_asked_direction([ags], ["causes"], asks_effect, samhd1) == [ags]
    assert on_asked_direction([ags], ["causes"], "What causes SAMHD1 loss?", samhd1) == []
    # "why" asks the reason for a treatment as often as a cause
    af = re.compile(r"\batrial fibrillation\b", re.IGNORECASE)
    clot = on("treatment", "Blood thinners prevent the clots that can cause a stroke.")
    why = "Why does my cardiologist want me on a blood thinner for my atrial fibrillation?"
    assert on_asked_direction([clot], ["causes", "treatment"], why, af) == [clot]


def test_the_noun_causes_naming_no_effect_is_not_read_as_an_effect() -> None:
    """ "Identification and analysis of the genetic causes in nine unrelated probands …" says what was
    studied, not what something causes."""
    import re

    from agent.nodes.sentence_order import says_other_effect

    cranio = re.compile(r"\bcraniostenosis\b", re.IGNORECASE)
    assert not says_other_effect(
        "Analysis of the genetic causes in nine probands with craniosynostosis.", cranio
    )
    assert not says_other_effect("Its causes include trauma and infection.", cranio)
    assert says_other_effect("Craniostenosis causes raised intracranial pressure.", cranio)


def test_a_cause_of_the_subject_in_other_words_is_not_read_as_another_effect() -> None:
    """ "What causes Parkinson's disease?" lost "This shortage of dopamine causes the movement problems of
    people with Parkinson's." (the effect names the subject by its distinctive word), and "What causes
    hypothyroidism?" lost "Hypothyroidism has several causes, including Hashimoto's disease …"."""
    import re

    from agent.nodes.focus import Focus
    from agent.nodes.sentence_order import says_other_effect

    names = ["PD", "Parkinson disease", "Parkinson's disease"]
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in names) + r")\b", re.IGNORECASE)
    focus = Focus([], ["causes"], {"DOID:14330": names}, pattern)
    loose = focus.word_pattern()
    assert loose is not None
    dopamine = "This shortage of dopamine causes the movement problems of people with Parkinson's."
    assert says_other_effect(dopamine, pattern)  # the strict names miss "Parkinson's" alone
    assert not says_other_effect(dopamine, loose)
    assert says_other_effect("Parkinson's disease can cause depression and sleep problems.", loose)
    assert Focus([], [], {}, None).word_pattern() is None
    hypothyroidism = re.compile(r"\bhypothyroidism\b", re.IGNORECASE)
    several = "Hypothyroidism has several causes, including Hashimoto's disease and thyroiditis."
    assert not says_other_effect(several, hypothyroidism)


def test_a_kind_word_of_the_name_does_not_name_the_subject() -> None:
    """ "What causes breast cancer?" led with "Breast cancer is the second leading cause of death from cancer
    in American women.": the loose pattern took "cancer" (of "breast cancer") as naming the subject, so the
    sentence's effect ("death from cancer …") read as the subject and the sentence as a cause of it."""
    import re

    from agent.nodes.focus import Focus
    from agent.nodes.sentence_order import says_other_effect

    names = ["breast cancer", "malignant neoplasm of breast", "mammary tumor"]
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in names) + r")\b", re.IGNORECASE)
    loose = Focus([], ["causes"], {"DOID:1612": names}, pattern).word_pattern()
    assert loose is not None and loose.search("cancers of the breast")
    death = "Breast cancer is the second leading cause of death from cancer in American women."
    assert says_other_effect(death, loose)
    assert not says_other_effect("Some gene changes cause breast tumors.", loose)
