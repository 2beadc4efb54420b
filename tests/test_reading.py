"""The turn's reading (agent/nodes/reading.py), the key sentences picked from it, the named answer and the
calibrated "answered" model — with the shipped reader and model, on the tiny KB built by the real builder.

The reader must put the sentence that names the answer above same-topic sentences that do not; the named
answer must name only the asked kind of thing and never the question's own subject; a missing model or
reader means the rule decides and the answer says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

import graphs.kb
from agent.consult import Consultant
from agent.nodes import answered, reading
from agent.nodes.answer_candidates import (
    abbreviates_question,
    asks_for_a_name,
    is_list_question,
    named_answers,
    vote,
    wanted_types,
)
from agent.nodes.answered import AnsweredModel, AnsweredModelUnavailable, answered_features, word_coverage
from agent.nodes.focus import focus_of
from agent.nodes.key_sentences import (
    ANAPHOR,
    MAX_WORDS,
    near_repeat,
    pick_read,
    shown_read,
)
from agent.nodes.reading import ReadSentence, read_evidence, with_antecedents
from agent.nodes.sentence_text import without_glued_heading
from agent.state import EvidenceRec
from graphs.building.builder import build_kb
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings
from tests.tiny_kb import tiny_config

CFTR = "Which disease is caused by mutations in the CFTR gene?"
CFTR_EVIDENCE: list[EvidenceRec] = [
    {
        "id": "E:cf",
        "text": "Cystic fibrosis is a disease that affects the lungs and the digestive system. People with "
        "CF have thick, sticky mucus. A defect in the CFTR gene causes cystic fibrosis (CF).",
        "label": "causes",
    },
    {"id": "E:other", "text": "Metformin lowers blood glucose and is taken with meals.", "label": "drug"},
]
POLYPILL = "Which drugs are included in the PolyIran polypill?"
POLYPILL_EVIDENCE: list[EvidenceRec] = [
    {
        "id": "E:trial",
        "text": "The PolyIran trial is a pragmatic cluster randomized trial nested within the Golestan "
        "Cohort Study. Subjects were randomized to minimal care or to a polypill comprising "
        "hydrochlorothiazide, aspirin, atorvastatin and enalapril.",
        "label": "research",
    },
    {
        "id": "E:other",
        "text": "Metformin lowers blood glucose and is taken with meals.",
        "label": "treatment",
    },
]


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reading")
    build_kb(root / "kb", tiny_config(root / "src"))
    return root / "kb"


@pytest.fixture(scope="module")
def tiny_kb(tiny_root: Path) -> Iterator[KnowledgeBase]:
    kb = KnowledgeBase.open(tiny_root)
    yield kb
    kb.close()


def read_of(text: str, logit: float, rank: int = 0, evidence_id: str = "E:x") -> ReadSentence:
    p = 1 / (1 + 2.718281828**-logit)
    return ReadSentence(evidence_id, text, 0, len(text), rank, logit, p, logit, "")


def test_the_sentence_naming_the_answer_is_read_first(tiny_kb: KnowledgeBase) -> None:
    read = read_evidence(tiny_kb, CFTR, CFTR_EVIDENCE)
    assert read is not None and len(read) == 4
    assert read[0].text == "A defect in the CFTR gene causes cystic fibrosis (CF).", [
        (r.logit, r.text) for r in read
    ]
    assert read == sorted(read, key=lambda r: -r.score)
    # Offsets cite the passage exactly.
    ev = {e["id"]: e["text"] for e in CFTR_EVIDENCE}
    assert all(ev[r.evidence_id][r.start : r.end] == r.text for r in read)
    # The same turn reads once: sufficiency and the answer node share it.
    assert read_evidence(tiny_kb, CFTR, CFTR_EVIDENCE) is read


def test_on_topic_sentences_outrank_off_topic_ones(tiny_kb: KnowledgeBase) -> None:
    # Known limit (evals/reports/answer_eval_bioasq_dev.md): the reader scores the trial's design sentence
    # (1.2) close to the one listing the drugs (1.4 alone, 0.8 in this passage) — it tells on-topic from
    # off-topic far better than "names the answer" from "is about it".
    read = read_evidence(tiny_kb, POLYPILL, POLYPILL_EVIDENCE)
    assert read is not None and len(read) == 3
    assert read[-1].evidence_id == "E:other" and read[-1].logit < read[0].logit - 3


HEPATITIS_C = (
    "Hepatitis is an inflammation of the liver. One type, hepatitis C, is caused by the hepatitis C virus "
    "(HCV). It usually spreads through contact with infected blood. There is no vaccine for HCV."
)


def test_a_sentence_opening_on_a_reference_back_is_read_with_the_one_before(tiny_kb: KnowledgeBase) -> None:
    """Read alone, "It usually spreads …" does not say what spreads (the reader gave it 0.29 for "How is
    hepatitis C transmitted?"); it is read, and cited, with the sentence before it, exactly as quoted."""
    read = read_evidence(tiny_kb, "How is hepatitis C transmitted?", [{"id": "E:hcv", "text": HEPATITIS_C}])
    assert read is not None
    texts = [r.text for r in read]
    assert (
        "One type, hepatitis C, is caused by the hepatitis C virus (HCV). It usually spreads through contact "
        "with infected blood." in texts
    ), texts
    assert not any(t.startswith("It usually") for t in texts)
    assert all(HEPATITIS_C[r.start : r.end] == r.text for r in read)
    spans = with_antecedents(HEPATITIS_C, [(0, 42), (43, 107), (108, 163)])
    assert spans == [(0, 42), (43, 107), (43, 163)]
    reading.READ_WITH_ANTECEDENT = False
    try:
        assert with_antecedents(HEPATITIS_C, [(0, 42), (43, 107), (108, 163)])[2] == (108, 163)
    finally:
        reading.READ_WITH_ANTECEDENT = True


def test_reading_bad_input(tiny_kb: KnowledgeBase) -> None:
    assert read_evidence(tiny_kb, "anything?", []) == []
    huge = "Gout is treated with colchicine. " + "word " * 5000  # one 25k-character "sentence": not read
    assert read_evidence(tiny_kb, "How is gout treated?", [{"id": "E:h", "text": huge}]) is not None
    out = read_evidence(
        tiny_kb, "¿Cómo se trata la gota?", POLYPILL_EVIDENCE
    )  # non-English: scored, no crash
    assert out is not None and len(out) == 3


def test_pick_read_keeps_the_word_budget_and_drops_repeats() -> None:
    long = " ".join(["word"] * (MAX_WORDS - 5)) + "."
    read = [
        read_of("Allopurinol lowers uric acid levels in gout.", 3.0),
        read_of("Allopurinol lowers uric acid levels in gout!", 2.9),  # a near repeat
        read_of(long, 2.0),  # would overflow the budget: skipped, not the end of the pick
        read_of("Interval or intercritical gout.", 1.5),  # a heading, not a sentence: never shown
        read_of("Colchicine treats acute gout attacks in adults.", 1.0),
        read_of("Unrelated sentence about the weather today.", -6.0),  # below the floor
    ]
    picked = pick_read(read)
    assert [p.text for p in picked] == [read[0].text, read[4].text]
    assert near_repeat(read[0].text, read[1].text) and not near_repeat(read[0].text, read[4].text)


@pytest.mark.parametrize(
    ("question", "name", "types"),
    [
        ("Which drugs are included in PolyIran?", True, {"Compound", "Drug"}),
        ("What nerve is affected in carpal tunnel syndrome?", True, {"Anatomy", "CellOrTissue"}),
        ("List MHC-I-associated inflammatory disorders.", True, {"Disease"}),
        ("Where is fatty acid binding protein 2 expressed?", True, set()),  # "protein" is the subject
        ("What is the cause of Kleefstra syndrome?", True, set()),
        ("Is metformin safe in pregnancy?", False, set()),
        ("How is gout treated?", False, set()),
        # The kind after "of/for which" and an indication (a disease), and a kind as the fourth word.
        ("What indication has FTY720 been approved for by the FDA?", True, {"Disease"}),
        ("Febrifugine could be repositioned for what diseases?", False, {"Disease"}),
        (
            "What are the classic signs of a basilar skull fracture?",
            True,
            {"Symptom", "Phenotype", "Finding", "SideEffect"},
        ),
    ],
)
def test_which_questions_ask_for_a_name_of_which_kind(question: str, name: bool, types: set[str]) -> None:
    assert asks_for_a_name(question) is name
    assert wanted_types(question) == types


def test_is_list_question() -> None:
    assert is_list_question("Which drugs are included in PolyIran?")
    assert is_list_question("List Mcl-1 inhibitors.")
    assert not is_list_question("Which drug is first-line for type 2 diabetes?")


def test_the_named_answer_votes_with_and_without_the_kg(tiny_kb: KnowledgeBase) -> None:
    question = "Which drug is used for type 1 diabetes?"
    read = [
        read_of("Metformin is sometimes tried as well.", 1.8, evidence_id="E:1"),
        read_of("Insulin is the drug used for type 1 diabetes.", 1.5, evidence_id="E:2"),
    ]
    subject = {"DOID:9744"}  # the question's entity: type 1 diabetes mellitus (Insulin -treats-> it)
    with_kg = vote(tiny_kb, question, subject, read, use_kg=True)
    without = vote(tiny_kb, question, subject, read, use_kg=False)
    assert [c.name.lower() for c in without] == ["metformin", "insulin"]
    assert [c.name.lower() for c in with_kg] == ["insulin", "metformin"]
    insulin = with_kg[0]
    assert insulin.facts and insulin.facts[0].chain_id.startswith("C:") and "treats" in insulin.facts[0].text
    assert insulin.votes == pytest.approx(without[1].votes + 0.5)
    # A factoid question shows a name only when it leads clearly: here only the KG edge separates them.
    assert [c.name for c in named_answers(with_kg, list_question=False)] == [insulin.name]
    assert named_answers(without, list_question=False) == []
    # The question's own subject is never its answer.
    assert all("diabetes" not in c.name.lower() for c in with_kg)


def test_tied_names_keep_the_order_the_evidence_gives_them(tiny_kb: KnowledgeBase) -> None:
    """One sentence naming two drugs gives both the same votes: they are listed as the source lists them
    (alphabetical order led hypothyroidism's symptoms with "depression" in a newcomer trial)."""
    for first, second in (("Metformin", "Insulin"), ("Insulin", "Metformin")):
        read = [read_of(f"{first} and {second} are drugs used in diabetes.", 2.0)]
        names = [c.name.lower() for c in vote(tiny_kb, "Which drugs are used in diabetes?", set(), read)]
        assert names == [first.lower(), second.lower()]


def test_no_name_when_the_question_names_no_kind(tiny_kb: KnowledgeBase) -> None:
    read = [read_of("Metformin is the first-line drug for type 2 diabetes.", 3.0)]
    assert vote(tiny_kb, "What is the cause of type 2 diabetes?", set(), read) == []


def test_word_coverage_sees_a_word_the_kb_lacks() -> None:
    passages: list[EvidenceRec] = [{"id": "E:1", "text": "HIV is treated with antiretroviral therapy."}]
    assert word_coverage("What disease can be treated with lenacapavir?", passages) < 0.5
    assert word_coverage("How is HIV treated with antiretroviral therapy?", passages) == 1.0


def test_the_shipped_answered_model_loads_and_orders_evidence() -> None:
    model = AnsweredModel.load()
    assert 0.5 < model.threshold < 1.0 and set(model.features) == set(answered.FEATURES)
    rule = {"best": 0.8, "best_answering": 0.8, "answering": 4, "focus": 1}
    strong = answered_features("q", [], [read_of("s", 3.0)], rule, True)
    weak = answered_features(
        "q", [], [read_of("s", -3.0)], {**rule, "best": 0.3, "best_answering": 0.0}, False
    )
    assert model.probability(strong) > model.threshold > model.probability(weak)


def test_a_damaged_answered_model_is_named(tmp_path: Path) -> None:
    with pytest.raises(AnsweredModelUnavailable, match="missing"):
        AnsweredModel.load(tmp_path / "answered.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"features": ["a"], "means": [], "scales": [], "weights": [], "bias": 0}))
    with pytest.raises(AnsweredModelUnavailable, match=r"unreadable|mismatched"):
        AnsweredModel.load(bad)


def test_without_the_model_or_the_reader_the_rule_decides_and_says_so(
    tiny_kb: KnowledgeBase, tiny_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(kb_dir=tiny_root, data_dir=tmp_path, llm_enabled=False)
    answered.use_answered_model(None, "the answered/insufficient verdict used the offline rule alone: test")
    try:
        consultant = Consultant(settings, kb=tiny_kb, checkpointer=InMemorySaver(), use_llm=False)
        result = consultant.ask("How is type 2 diabetes treated?")
        assert result.answer["verdict"]["method"] == "rule"
        assert any("offline rule alone" in w for w in result.answer["warnings"])
    finally:
        answered.use_answered_model(None)
    monkeypatch.setattr(graphs.kb, "SHIPPED_READER_DIR", tmp_path / "no-reader")
    kb = KnowledgeBase.open(tiny_root)
    try:
        reading.forget()
        consultant = Consultant(settings, kb=kb, checkpointer=InMemorySaver(), use_llm=False)
        result = consultant.ask("How is type 2 diabetes treated?")
        assert result.answer["verdict"]["method"] == "rule"
        assert any("evidence reader is unavailable" in w for w in result.answer["warnings"])
    finally:
        kb.close()


def test_with_the_model_the_verdict_says_which_sentence_answers(
    tiny_kb: KnowledgeBase, tiny_root: Path, tmp_path: Path
) -> None:
    settings = Settings(kb_dir=tiny_root, data_dir=tmp_path, llm_enabled=False)
    consultant = Consultant(settings, kb=tiny_kb, checkpointer=InMemorySaver(), use_llm=False)
    result = consultant.ask("How is type 2 diabetes treated?")
    verdict = result.answer["verdict"]
    assert verdict["method"].startswith("calibrated model")
    assert 0.0 <= verdict["answered_probability"] <= 1.0
    assert (verdict["answered_probability"] >= AnsweredModel.load().threshold) is verdict["sufficient"]
    assert "E:" in verdict["reasons"][0]  # the best sentence, cited


def test_an_acronym_of_the_question_s_own_words_is_not_the_answer() -> None:
    """ "FAP" (also a gene, fibroblast activation protein) was shown as the answer to "Which gene is mutated
    in familial adenomatous polyposis?" — it abbreviates the question's subject, it does not answer it."""
    asked = "which gene is most often mutated in familial adenomatous polyposis"
    assert abbreviates_question("FAP", asked)
    assert not abbreviates_question("APC", asked)
    assert not abbreviates_question("Fap", asked)  # an acronym is written in capitals
    assert abbreviates_question("CF", "what gene causes cystic fibrosis")
    assert not abbreviates_question("CFTR", "what gene causes cystic fibrosis")


def test_a_mention_naming_what_the_next_word_is_about_is_not_a_name(tiny_kb: KnowledgeBase) -> None:
    """ "Which drugs treat Parkinson's disease?" was answered "dopamine; bromocriptine; …", dopamine's votes
    coming from "direct dopamine agonists"; "Insulin receptors" is not insulin."""
    question = "Which drugs are used in diabetes?"
    modifier = [read_of("Insulin receptors and metformin are studied in diabetes.", 2.0)]
    assert [c.name.lower() for c in vote(tiny_kb, question, set(), modifier)] == ["metformin"]
    itself = [read_of("Insulin and metformin are used in diabetes.", 2.0)]
    assert [c.name.lower() for c in vote(tiny_kb, question, set(), itself)] == ["insulin", "metformin"]


def test_research_under_way_is_shown_only_when_research_is_asked(tiny_kb: KnowledgeBase) -> None:
    """ "Researchers continue to evaluate medications to treat refractory celiac disease." led the answer
    to "How is celiac disease treated?"; a finding, or a sentence going on to a fact, stays."""
    under_way = read_of(
        "Researchers continue to evaluate medications to treat refractory celiac disease.", 2.0
    )
    trials = read_of("Clinical trials are underway to test new drugs for the disease.", 1.9)
    finding = read_of("Researchers have found that a gluten-free diet heals the intestine.", 1.5)
    fact = read_of(
        "The drug is being investigated for other infections and in June 2017 received approval.", 1.4
    )
    titled = read_of(
        "New Diagnostic Methods Being Studied Researchers are exploring new ways to diagnose it earlier.", 1.3
    )
    institute = read_of("Through studies with patients, NEI is seeking better ways to treat glaucoma.", 1.2)
    read = [under_way, trials, finding, fact, titled, institute]
    treated = focus_of(tiny_kb, [], "How is celiac disease treated?")
    assert shown_read(tiny_kb, read, treated, []) == [finding, fact]
    studied = focus_of(tiny_kb, [], "What research is being done on celiac disease?")
    assert "research" in studied.asked
    assert shown_read(tiny_kb, read, studied, []) == read


def test_a_run_in_heading_before_with_is_cut_and_in_others_refers_back() -> None:
    assert without_glued_heading(
        "Symptoms Can Be Controlled With proper treatment, most people with gout control their symptoms."
    ).startswith("With proper treatment")
    assert ANAPHOR.match("In others, however, doctors may not be able to identify the cause.")
    assert ANAPHOR.match("For example, if you have a bleeding ulcer, your doctor may prescribe antibiotics.")
    assert ANAPHOR.match("He or she can find out whats causing these problems.")
    from agent.nodes.key_sentences import UNRESOLVED_PERSON

    assert UNRESOLVED_PERSON.match("He or she can find out whats causing these problems.")
    assert ANAPHOR.match("Others require oral medications or insulin.")
    assert ANAPHOR.match("In most people, this raises blood sugar.")
    assert ANAPHOR.match("That is why early diagnosis is important.")  # led "How is glaucoma diagnosed?"
    assert ANAPHOR.match("Thats why a comprehensive dilated eye exam is very important.")
    assert ANAPHOR.match("Likewise, having these symptoms doesn't always mean that you have asthma.")
    assert not ANAPHOR.match("That drug is given at night.")
    assert not ANAPHOR.match("In most people, the infection clears up on its own.")
    assert not ANAPHOR.match("In older adults, the disease is milder.")


def test_a_sentence_too_short_to_show_does_not_take_the_aspect_check_s_free_place(
    tiny_kb: KnowledgeBase,
) -> None:
    """The aspect check keeps the first sentence whatever it says and the rest only with a cue of the asked
    aspect: "Malaria can be prevented." (too short to show) took that place, the prevention advice after it
    ("See your doctor for medicines that protect you …") had no cue then, and an "answered" reply showed no
    key sentence. Too-short sentences leave first; "protect" is a prevention cue."""
    from agent.nodes.focus import Focus
    from agent.nodes.key_sentences import pick_key_read

    text = (
        "Malaria can be prevented. You get it when an infected mosquito bites you. See your doctor for "
        "medicines that protect you and sleep under mosquito netting."
    )
    spans = [(0, 25), (26, 74), (75, len(text))]
    read = [
        ReadSentence("E:m", text[s:e], s, e, 0, logit, 0.5, logit, "overview")
        for (s, e), logit in zip(spans, (0.9, -1.3, -2.1), strict=True)
    ]
    evidence: list[EvidenceRec] = [{"id": "E:m", "text": text, "label": "overview"}]
    picked = pick_key_read(tiny_kb, read, Focus([], ["prevention"]), evidence)
    assert [r.text for r in picked] == [text[26:74], text[75:]]


def test_a_question_ruling_out_medicines_is_not_answered_with_them(tiny_kb: KnowledgeBase) -> None:
    """ "What is the best way to lower cholesterol without drugs?" was answered "Statins work well at lowering
    LDL cholesterol." second; a sentence naming a class of medicine, or about medicines in general, is left
    out when the question rules medicines out — one naming them beside the other way stays."""
    from agent.nodes.focus import Focus
    from agent.nodes.key_sentences import pick_key_read
    from graphs.text.medicine_classes import rules_out_medicines

    assert rules_out_medicines("What is the best way to lower cholesterol without drugs?")
    assert rules_out_medicines("Is there a treatment for insomnia that isn't sleeping pills?")
    assert rules_out_medicines("How can I lower my blood pressure naturally?")
    assert not rules_out_medicines("Which of the following is not a controlled drug?")
    assert not rules_out_medicines("She does not take any medications. What is the most likely diagnosis?")
    assert not rules_out_medicines("Is there a role for natural killer T cells in lupus?")
    text = (
        "There are two main ways to lower your cholesterol: lifestyle changes and medicines. Statins work "
        "well at lowering LDL cholesterol. Medicines can help control high blood cholesterol, but they do "
        "not cure it. Eating less saturated fat lowers LDL cholesterol for most people."
    )
    spans, start = [], 0
    for piece in text.split(". "):
        end = start + len(piece) + (0 if piece.endswith(".") else 1)
        spans.append((start, end))
        start = end + 1
    read = [
        ReadSentence("E:c", text[s:e], s, e, 0, 1.0 - 0.1 * i, 0.5, 1.0 - 0.1 * i, "treatment")
        for i, (s, e) in enumerate(spans)
    ]
    evidence: list[EvidenceRec] = [{"id": "E:c", "text": text, "label": "treatment"}]
    asked = "What is the best way to lower cholesterol without drugs?"
    shown = [r.text for r in pick_key_read(tiny_kb, read, Focus([], []), evidence, question=asked)]
    assert shown == [read[0].text, read[3].text], shown
    everything = pick_key_read(tiny_kb, read, Focus([], []), evidence, question="How is cholesterol lowered?")
    assert len(everything) == 4
