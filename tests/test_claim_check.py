"""The reply check, claim by claim (issue 22): bad replies, a damaged checker, negation, and the verdict rule.

Real components throughout: the slice KB, the shipped int8 claim checker and reader, the real splitter.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from agent.consult import Consultant
from agent.nodes import claim_check
from agent.nodes.claim_check import REPLY_CHECK_HEADING, judge, reply_check_lines, reply_status
from agent.nodes.claim_kg import SPREAD_CUE, kg_verdict, kind_clash, names_target
from graphs.kb import KnowledgeBase
from graphs.vectors.claim_checker import (
    CONTRADICTED,
    SHIPPED_CLAIMS_DIR,
    SUPPORTED,
    ClaimChecker,
    ClaimThresholds,
    get_claim_checker,
)
from graphs.vectors.reader import ReaderUnavailable


def _check(consultant: Consultant, reply: str) -> dict:
    return consultant.ask(reply, task="check_reply").answer


def test_a_reply_that_is_only_a_question_is_said_to_be_one(consultant: Consultant) -> None:
    answer = _check(consultant, "Colleague asks: should we start allopurinol during a gout flare?")
    assert (
        answer["status"] in ("unverified", "insufficient") and answer["reply_check"]["problem"] == "question"
    )
    assert "**The reply is a question, not a claim**" in answer["text"].split("\n\n", 2)[1]


def test_a_reply_with_no_checkable_claim_says_so(consultant: Consultant) -> None:
    answer = _check(consultant, "Thanks, hope this helps!")
    assert answer["status"] in ("unverified", "insufficient")
    assert answer["reply_check"]["problem"] == "no_claim" and not answer["reply_check"]["claims"]
    assert "No checkable claim was found in the reply" in answer["text"]


def test_fifty_claims_check_the_first_eight_and_say_how_many_were_left(consultant: Consultant) -> None:
    facts = [f"Gout attack number {n} is caused by uric acid crystals in the joint." for n in range(1, 51)]
    answer = _check(consultant, "Colleague says: " + " ".join(facts))
    table = answer["reply_check"]
    assert len(table["claims"]) == claim_check.MAX_CLAIMS and table["left_out"] == 50 - claim_check.MAX_CLAIMS
    assert (
        f"_{50 - claim_check.MAX_CLAIMS} more claims were not checked: only the first 8 are."
        in answer["text"]
    )


def test_a_reply_in_another_language_is_not_judged(consultant: Consultant) -> None:
    answer = _check(
        consultant, "Mi colega dice: el alopurinol se debe iniciar durante el ataque agudo de gota."
    )
    assert answer["reply_check"]["problem"] == "not_english" and not answer["reply_check"]["claims"]
    assert "does not look like English" in answer["text"] and answer["status"] != "supported"


def test_a_damaged_checker_is_named_and_the_reply_left_unverified(
    consultant: Consultant, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    damaged = tmp_path / "claims"
    shutil.copytree(SHIPPED_CLAIMS_DIR, damaged)
    weights = damaged / "claims-minilm-int8.onnx"
    weights.write_bytes(weights.read_bytes()[:1000])
    with pytest.raises(ReaderUnavailable, match=r"claim checker .* is damaged .*git checkout -- data/claims"):
        ClaimChecker(damaged)
    monkeypatch.setattr(claim_check, "get_claim_checker", lambda: get_claim_checker(damaged))
    answer = _check(consultant, "Colleague says: gout is caused by uric acid crystals in the joint.")
    assert answer["status"] == "unverified" and answer["reply_check"]["method"] == "unavailable"
    assert "claim checker is unavailable" in answer["text"] and "is damaged" in answer["text"]


def test_a_verdict_needs_its_calibrated_threshold_and_the_stronger_direction() -> None:
    limits = ClaimThresholds(supported=0.8, contradicted=0.7)
    assert judge(0.79, 0.1, limits) is None
    assert judge(0.8, 0.1, limits) == SUPPORTED
    assert judge(0.1, 0.7, limits) == CONTRADICTED
    assert judge(0.85, 0.75, limits) == SUPPORTED  # both reach: the stronger direction
    assert judge(0.75, 0.8, limits) == CONTRADICTED
    never = ClaimThresholds()  # what the shipped file holds when calibration reached no precision target
    assert judge(1.0, 0.0, never) is None and judge(0.0, 1.0, never) is None


def test_the_shipped_thresholds_are_the_calibrated_ones() -> None:
    import json

    recorded = json.loads((SHIPPED_CLAIMS_DIR / "claims.json").read_text())["thresholds"]
    limits = get_claim_checker().thresholds
    assert (limits.supported, limits.contradicted) == (recorded["supported"], recorded["contradicted"])
    assert recorded["precision_target"] >= 0.9 and recorded["calibration_claims"] >= 300


def test_the_status_of_a_reply_check_is_its_verdicts() -> None:
    def table(*verdicts: str) -> dict:
        return {"claims": [{"verdict": v} for v in verdicts]}

    assert reply_status(table("supported", "contradicted")) == "contradicted"
    assert reply_status(table("supported", "supported")) == "supported"
    assert reply_status(table("supported", "no evidence found")) == "unverified"
    assert reply_status(table()) == "unverified"


def test_a_negated_claim_is_checked_as_its_positive_form_and_its_verdict_reversed(
    consultant: Consultant,
) -> None:
    positive = _check(consultant, "Colleague says: gout is caused by uric acid crystals in the joint.")
    negative = _check(consultant, "Colleague says: gout is not caused by uric acid crystals in the joint.")
    pos, neg = positive["reply_check"]["claims"][0], negative["reply_check"]["claims"][0]
    assert neg["negated"] and not pos["negated"] and neg["question"] == pos["question"]
    flipped = {
        "supported": "contradicted",
        "contradicted": "supported",
        "no evidence found": "no evidence found",
    }
    assert neg["verdict"] == flipped[pos["verdict"]]
    if neg["verdict"] != "no evidence found":
        assert "the answer reversed, as the claim denies it" in negative["text"]
    assert REPLY_CHECK_HEADING in negative["text"]


@pytest.mark.parametrize(
    ("claim", "negated", "verdict", "edge"),
    [
        (
            "Sickle cell anemia is inherited in an autosomal dominant pattern",
            False,
            "contradicted",
            "recessive",
        ),
        ("Sickle cell anemia is autosomal recessive", False, "supported", "recessive"),
        ("Prostate cancer is autosomal recessive", False, "contradicted", "dominant"),
        ("Cyclosporine is used to treat rheumatoid arthritis", False, "supported", "-treats->"),
        ("Cyclosporine is used to treat rheumatoid arthritis", True, "contradicted", "-treats->"),
        ("Folic acid is used to treat epilepsy syndrome", False, "contradicted", "not_indicated_for"),
    ],
)
def test_the_knowledge_graph_decides_inheritance_and_indication_claims(
    slice_kb: KnowledgeBase, claim: str, negated: bool, verdict: str, edge: str
) -> None:
    found = kg_verdict(slice_kb, claim, negated)
    assert found is not None and found.verdict == verdict
    assert any(edge in fact.text.lower() or edge in fact.relation for fact in found.facts), found.facts


@pytest.mark.parametrize(
    "claim",
    [
        "Cyclosporine is the first-line treatment for rheumatoid arthritis",  # the KG does not rank drugs
        "Cyclosporine alone is adequate for rheumatoid arthritis",
        "Sickle cell anemia causes pain crises",  # no inheritance pattern named
        "Cyclosporine is used to treat sickle cell anemia",  # no such edge: absence decides nothing
    ],
)
def test_the_knowledge_graph_decides_nothing_it_does_not_hold(slice_kb: KnowledgeBase, claim: str) -> None:
    assert kg_verdict(slice_kb, claim, False) is None


def test_a_kg_verdict_leads_the_answer_and_cites_a_retrieved_chain(consultant: Consultant) -> None:
    answer = _check(
        consultant, "Colleague says: sickle cell anemia is inherited in an autosomal dominant pattern."
    )
    claim = answer["reply_check"]["claims"][0]
    assert claim["verdict"] == "contradicted" and claim["decided_by"] == "knowledge graph"
    assert answer["status"] == "contradicted"
    line = next(line for line in answer["text"].splitlines() if line.startswith("1. "))
    assert line.startswith("1. ✗ **Contradicted**") and "by the knowledge graph" in line
    assert claim["chain_ids"] and set(claim["chain_ids"]) <= set(answer["chain_ids"])
    assert f"[{claim['chain_ids'][0]}]" in line


def test_a_restatement_the_kg_contradicts_is_no_verdict_and_shows_both(slice_kb: KnowledgeBase) -> None:
    """ "metformin is used to treat type 2 diabetes" was *contradicted* by the words of a sentence about
    preventing it; when a curated edge says the opposite of a restatement, neither is a verdict."""
    from agent.deps import ConsultDeps
    from agent.nodes.claim_check import DISAGREE, RESTATED, overruled_by_kg
    from graphs.text.claims import Claim

    text = "sickle cell anemia is inherited in an autosomal recessive pattern"
    claim = Claim(text=text, start=0, end=len(text), question=f"Is {text}?", negated=False, hedged=False)
    quote = "Sickle cell anemia is not inherited in an autosomal recessive pattern."
    record = {"text": text, "verdict": "contradicted", "decided_by": RESTATED}
    record |= {"quotes": [quote], "evidence_ids": ["E:x"]}
    chains = overruled_by_kg(ConsultDeps(slice_kb), claim, record)  # type: ignore[arg-type]
    assert chains and record["verdict"] == "no evidence found" and record["decided_by"] == DISAGREE
    assert record["chain_ids"] == [c["id"] for c in chains]
    line = next(line for line in reply_check_lines({"claims": [record]}) if line.startswith("1. "))  # type: ignore[list-item]
    assert "the evidence disagrees" in line and "read as contradicted" in line
    assert f"[{chains[0]['id']}]" in line and "[E:x]" in line
    agreeing = {"text": text, "verdict": "supported", "decided_by": RESTATED}
    assert overruled_by_kg(ConsultDeps(slice_kb), claim, agreeing) == []  # type: ignore[arg-type]
    assert agreeing["verdict"] == "supported"


def test_the_closest_quote_under_a_claim_is_about_the_condition_it_names(slice_kb: KnowledgeBase) -> None:
    """ "the flu is treated with antibiotics" was shown, as closest, "Bacterial pneumonia is treated with
    medicines called antibiotics": a quote about another condition under a claim reads as evidence for it."""
    from agent.nodes.claim_check import off_claim_subject
    from agent.nodes.claim_kg import claim_subject

    subject = claim_subject(slice_kb, "cystic fibrosis is treated with antibiotics")
    assert subject.entities
    texts = [
        "Bacterial pneumonia is treated with medicines called antibiotics.",
        "Antibiotics treat lung infections in people with cystic fibrosis.",
        "Treatment can include antibiotics for lung infections.",
    ]
    titles = [
        "What is (are) Pneumonia ?",
        "What is (are) Pneumonia ?",
        "What are the treatments for Cystic Fibrosis ?",
    ]
    assert off_claim_subject(subject, texts, titles, [False] * 3) == [True, False, False]
    assert off_claim_subject(subject, texts, titles, [False, True, False]) == [True, True, False]
    nothing_named = claim_subject(slice_kb, "it is treated with antibiotics")
    assert not nothing_named.entities
    assert off_claim_subject(nothing_named, texts, titles, [False] * 3) == [False] * 3


def test_a_sentence_naming_another_relation_of_the_claim_s_terms_restates_nothing() -> None:
    from agent.nodes.claim_restatement import restated

    sentence = (
        "No medication, including metformin, is approved by the U.S. Food and Drug Administration to treat "
        "insulin resistance or prediabetes or to prevent type 2 diabetes."
    )
    assert restated("Is metformin used to treat type 2 diabetes?", [sentence]) is None
    assert restated("Can metformin prevent type 2 diabetes?", ["Metformin can prevent type 2 diabetes."])
    # one relation affirmed against the claim's negated one is a contrast, and still decides
    contrast = (
        "The shingles vaccine is a preventive therapy and not a treatment for those who already have "
        "shingles or long-lasting nerve pain (postherpetic neuralgia)."
    )
    found = restated("Is the shingles vaccine used to treat postherpetic neuralgia?", [contrast])
    assert found is not None and found.affirms is False


def test_a_drug_and_disease_the_kg_does_not_connect_get_no_kg_verdict(slice_kb: KnowledgeBase) -> None:
    from agent.nodes.claim_kg import _linked

    claim = "Cyclosporine is used to treat sickle cell anemia"
    linked = _linked(slice_kb, claim)
    assert linked.get("Compound") and linked.get("Disease")  # both ends known: the edge is what is missing
    assert kg_verdict(slice_kb, claim, False) is None


def test_a_kg_verdict_follows_a_pronoun_to_the_subject_it_stands_for(consultant: Consultant) -> None:
    reply = (
        "Colleague says: sickle cell anemia is a blood disorder. "
        "It is inherited in an autosomal dominant pattern."
    )
    claims = _check(consultant, reply)["reply_check"]["claims"]
    assert claims[1]["question"].lower().startswith("is sickle cell anemia inherited")
    assert claims[1]["verdict"] == "contradicted" and claims[1]["decided_by"] == "knowledge graph"


def test_a_claim_that_names_no_disease_is_checked_as_about_the_one_the_reply_names(
    consultant: Consultant,
) -> None:
    reply = (
        "Colleague says: sickle cell anemia is a blood disorder, so antibiotics are the first-line "
        "treatment and steroids do not help."
    )
    answer = _check(consultant, reply)
    first, *rest = answer["reply_check"]["claims"]
    assert not first.get("context_carried") and "sickle cell anemia" in first["question"].lower()
    assert [c["question"] for c in rest] == [
        "Are antibiotics the first-line treatment in sickle cell anemia?",
        "Do steroids help in sickle cell anemia?",
    ]
    assert all(c["context_carried"] for c in rest) and [c["text"] for c in rest] == [
        "antibiotics are the first-line treatment",
        "steroids do not help",
    ]
    line = next(line for line in answer["text"].splitlines() if line.startswith("2. "))
    assert "the disease an earlier claim names" in line
    # The passages under the verdicts are what was retrieved, not necessarily about the reply's subject.
    assert "### Other passages retrieved for the reply" in answer["text"]


def test_a_claim_that_names_its_own_disease_keeps_its_question(consultant: Consultant) -> None:
    reply = "Colleague says: sickle cell anemia is a blood disorder. Gout is caused by uric acid crystals."
    claims = _check(consultant, reply)["reply_check"]["claims"]
    assert len(claims) == 2 and not any(c.get("context_carried") for c in claims)
    assert "gout" in claims[1]["question"].lower() and "sickle" not in claims[1]["question"].lower()


def test_the_closest_quote_is_on_the_claim_s_own_subject_when_the_checker_allows() -> None:
    """An undecided claim quotes the strongest window that shares a word with it ("NSAIDs"), not the
    strongest window overall ("This chemical … inflammation of gout"), unless the checker reads the
    sharing window as not bearing on the claim at all."""
    import numpy as np

    from graphs.text.claims import split_reply

    claim = split_reply("NSAIDs do not help at all.").claims[0]
    texts = [
        "This chemical plays a role in the inflammation of gout.",
        "Several NSAIDs are sold over the counter.",
    ]
    # columns: not enough, supported, contradicted (graphs.vectors.claim_checker)
    bearing = np.array([[0.50, 0.40, 0.10], [0.30, 0.35, 0.35]])
    assert claim_check.closest_window(claim, texts, bearing, [False, False]) == 1
    unrelated = np.array([[0.50, 0.40, 0.10], [0.90, 0.05, 0.05]])
    assert claim_check.closest_window(claim, texts, unrelated, [False, False]) == 0
    # a window about a sibling of the claim's condition is never quoted, however strong
    assert claim_check.closest_window(claim, texts, bearing, [False, True]) == 0
    assert claim_check.closest_window(claim, texts, bearing, [True, True]) is None


def test_a_claim_s_closest_quote_is_never_about_a_sibling_condition(slice_kb: KnowledgeBase) -> None:
    """ "hepatitis A usually becomes a chronic infection" was quoted against "Most hepatitis C infections
    become chronic"; here a type 1 diabetes claim against a type 2 sentence."""
    from agent.nodes.claim_kg import claim_subject
    from agent.nodes.other_condition import about_other_condition

    subject = claim_subject(slice_kb, "type 1 diabetes is usually treated with metformin")
    assert "DOID:9744" in subject.ids
    texts = ["Metformin is the first drug for type 2 diabetes.", "Type 1 diabetes is treated with insulin."]
    assert about_other_condition(slice_kb, subject, texts) == [True, False]


@pytest.mark.parametrize(
    ("claim", "target", "subject", "named"),
    [
        ("Is Lyme disease spread by ticks?", "blacklegged tick (Ixodes scapularis)", "Lyme disease", True),
        ("Is dengue spread by mosquitoes?", "Aedes mosquito bite", "dengue disease", True),
        (
            "Is dengue caused by a virus?",
            "Dengue virus [NCBITaxon:12637] with four serotypes",
            "dengue disease",
            True,
        ),
        # the disease's own name in the pathogen's is not the claim naming the pathogen
        (
            "Is dengue caused by bacteria?",
            "Dengue virus [NCBITaxon:12637] with four serotypes",
            "dengue disease",
            False,
        ),
        # general words are not a vector: the KG says saliva of an infected animal, the claim says blood
        (
            "Is rabies spread by contact with infected blood?",
            "contact of mucous membranes with saliva of an infected animal",
            "rabies",
            False,
        ),
        ("Does dengue spread from person to person?", "Aedes mosquito bite", "dengue disease", False),
    ],
)
def test_a_claim_names_a_vector_or_pathogen_only_by_a_word_of_its_own(
    claim: str, target: str, subject: str, named: bool
) -> None:
    assert names_target(claim, target, subject) is named


def test_one_shared_word_beside_another_agent_is_not_the_target() -> None:
    """ "gout is caused by calcium crystals" was supported by gout -> uric acid crystal deposits (calcium
    crystals are pseudogout's); a kind of agent, a general word or the bite that carries it are no other
    agent."""
    crystals = "uric acid crystal deposits"
    assert names_target("Is gout caused by calcium crystals?", crystals, "gout") is False
    assert names_target("Is gout caused by uric acid crystals in the joints?", crystals, "gout") is True
    strep = "Is strep throat caused by Streptococcus pneumoniae?"
    assert names_target(strep, "Streptococcus pyogenes", "strep throat") is False
    water = "Is hepatitis A spread through contaminated water?"
    assert names_target(water, "ingestion of contaminated food", "hepatitis A") is False
    assert (
        names_target("Is malaria caused by Plasmodium parasites?", "Plasmodium falciparum", "malaria") is True
    )
    bite = "Is Lyme disease spread by the bite of an infected tick?"
    assert names_target(bite, "blacklegged tick", "Lyme disease") is True


def test_a_pathogen_kind_the_kg_target_is_not_and_a_bite_decide_nothing() -> None:
    # "Tetanus is caused by Clostridium viruses" names the organism, but Clostridium tetani is no virus.
    assert kind_clash("Is tetanus caused by Clostridium viruses?", "Clostridium tetani")
    assert kind_clash("Is dengue a bacterial disease caused by dengue?", "Dengue virus [NCBITaxon:12637]")
    assert not kind_clash("Is dengue caused by a virus?", "Dengue virus [NCBITaxon:12637]")
    assert not kind_clash("Is tetanus caused by Clostridium tetani?", "Clostridium tetani")
    # A rash after a tick bite is about the rash, not how Lyme disease spreads.
    assert SPREAD_CUE.search("Is a bull's-eye rash after a tick bite the first sign of Lyme disease?") is None
    assert SPREAD_CUE.search("Is Lyme disease spread by ticks?")


def test_the_note_that_the_checker_decides_nothing_appears_only_under_an_undecided_claim() -> None:
    thresholds = {"supported": 1.01, "contradicted": 1.01}
    decided = {"text": "dengue spreads from person to person", "verdict": "contradicted"}
    decided |= {"decided_by": "restatement", "quotes": ["Dengue does not spread from person to person."]}
    decided |= {"evidence_ids": ["E:1"]}
    undecided = {"text": "aspirin alone is adequate", "verdict": "no evidence found"}
    all_decided = "\n".join(reply_check_lines({"claims": [decided], "thresholds": thresholds}))
    one_open = "\n".join(reply_check_lines({"claims": [decided, undecided], "thresholds": thresholds}))
    assert "decides no claim" not in all_decided and "without a checker probability" in all_decided
    assert "decides no claim" in one_open


def test_the_restatement_note_shows_the_counts_of_the_committed_claim_reports() -> None:
    """The note beside a restated verdict quotes its precision; it said "127 of 129" after the calibration
    report had moved to 127 of 128 (found in the session-21 newcomer trial). Shown = measured."""
    reports = Path(__file__).resolve().parent.parent / "evals" / "reports"
    counts = []
    for name in ("claim_check_calibration.md", "claim_check_benchmark.md"):
        text = (reports / name).read_text(encoding="utf-8")
        found = re.search(
            r"Of the calls, (\d+) were decided by a passage sentence restating the claim \S+; "
            r"(\d+) of them right",
            text,
        )
        assert found is not None, name
        counts.append((found.group(2), found.group(1)))
    (cal_right, cal_calls), (held_right, held_calls) = counts
    assert f"right on {cal_right} of {cal_calls} labelled calibration claims" in claim_check.RESTATED_NOTE
    assert f"{held_right} of {held_calls} held out" in claim_check.RESTATED_NOTE
