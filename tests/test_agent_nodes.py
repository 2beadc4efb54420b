"""Node-level tests of the consult agent: each step run on its own against the real slice KB.

Nodes are plain functions ``(state, runtime)``; a ``Runtime`` with the run's context and a list as stream
writer is all they need, so each test builds the state a step would see and checks what the step decides.
LLM steps get :class:`tests.fake_llm.ScriptedChatModel`, which replays scripted ``AIMessage``s.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from agent.citations import ANSWER_OPTION, check_citations
from agent.consult import Consultant
from agent.context import ConsultContext
from agent.deps import ConsultDeps
from agent.llm import LLMStepFailed, Usage, structured_call, tool_call_plan
from agent.nodes.hypothesis import HypothesisOutput, make_hypothesis
from agent.nodes.planner import drop_repeated, make_execute_tools, make_plan, offline_plan
from agent.nodes.retrieval import carried_entities, make_ner_link, search_question
from agent.nodes.sufficiency import make_sufficiency
from agent.nodes.turn import detect_task, start_turn
from agent.state import ConsultState, EntityRec
from graphs.kb import KnowledgeBase
from tests.fake_llm import ScriptedChatModel, hypothesis, tool_calls, verdict

GOUT = "DOID:13189"
GOUT_ENTITY: EntityRec = {"id": GOUT, "name": "gout", "type": "Disease", "score": 1.0, "turn": 1}
MCQ = """Which drug lowers uric acid in patients with repeated gout attacks?
A. Allopurinol
B. Ibuprofen
C. Prednisone
D. Colchicine"""


def runtime(events: list[dict[str, Any]] | None = None, **ctx: Any) -> Runtime[ConsultContext]:
    sink = events if events is not None else []
    return Runtime(context=ConsultContext(**ctx), stream_writer=sink.append)


def gout_state(**extra: Any) -> ConsultState:
    state: dict[str, Any] = {
        "question": "What is the treatment for gout?",
        "task": "clinical",
        "turn": 1,
        "round": 1,
        "entities": [GOUT_ENTITY],
        "turn_entity_ids": [GOUT],
        "unlinked_terms": [],
        "topics": [],
        "trace": [],
        **extra,
    }
    return state  # type: ignore[return-value]


# --- start_turn ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "task"),
    [
        (MCQ, "mcq"),
        ("My doctor said: take aspirin for gout. Is this right?", "check_reply"),
        ("We decided to stop allopurinol during a gout flare; was it right to do so?", "audit"),
        ("What is the treatment for gout?", "clinical"),
        ("Options A and B were discussed for gout.", "clinical"),
    ],
)
def test_detect_task(question: str, task: str) -> None:
    assert detect_task(question) == task


def test_start_turn_resets_the_turn_and_warns_about_a_cut_question() -> None:
    events: list[dict[str, Any]] = []
    long_question = "What is the treatment for gout? " + "The patient reports joint pain. " * 400
    previous = gout_state(turns=[{"question": "earlier"}], round=3, verdict={"sufficient": True})
    out = start_turn({**previous, "question": long_question}, runtime(events))
    assert out["turn"] == 2 and out["round"] == 0 and out["verdict"] == {} and out["evidence"] == []
    assert len(out["question"]) <= 6000 and out["question"].startswith("What is the treatment for gout?")
    assert out["warnings"] == [
        f"input truncated from {len(long_question.strip()):,} to {len(out['question']):,} characters"
    ]
    assert out["trace"].value[0]["round"] == 0  # the new turn's trace starts at round 0, not the old round
    assert events == [{"step": "start", "task": "clinical", "turn": 2}]


# --- follow-up questions ------------------------------------------------------------------------------


def test_a_follow_up_without_entities_continues_with_the_previous_turns_entities(
    slice_kb: KnowledgeBase,
) -> None:
    state = gout_state(
        question="What are its symptoms?", turn=2, turn_entity_ids=[], turns=[{"question": "q1"}]
    )
    assert carried_entities(state) == [GOUT_ENTITY]
    out = make_ner_link(ConsultDeps(slice_kb))(state, runtime())
    assert out["entities"] == [] and out["turn_entity_ids"] == [GOUT]
    assert out["trace"][0]["detail"]["carried"] == [GOUT]
    assert search_question({**state, "turn_entity_ids": [GOUT]}) == "What are the symptoms of gout?"


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("How is it treated?", "How is gout treated?"),  # the pronoun becomes the subject
        ("Is it inherited?", "Is gout inherited?"),
        ("and what are its complications?", "and what are the complications of gout?"),
        ("How are its symptoms treated?", "How are its symptoms treated? (gout)"),  # a possessive inside
        ("Is it worse than it was?", "Is it worse than it was? (gout)"),  # two pronouns: which is which?
        ("What about children?", "What about children? (gout)"),  # no pronoun: the names in brackets
    ],
)
def test_a_follow_up_names_its_subject_where_the_pronoun_stands(question: str, asked: str) -> None:
    """The reader was trained on questions that name their subject: on "How is it treated? (chronic
    obstructive pulmonary disease)" it scored the COPD treatment sentence below the answered threshold (12
    diseases × 4 follow-ups on the default KB: 41/48 answered in brackets, 48/48 with the subject named in
    place, as the same questions asked outright)."""
    state = gout_state(question=question, turn=2, turn_entity_ids=[GOUT], turns=[{"question": "q1"}])
    assert search_question(state) == asked


def test_a_follow_up_names_its_subject_as_the_consult_wrote_it() -> None:
    entity = {**GOUT_ENTITY, "name": "herpes zoster", "surface": "shingles", "turn": 1}
    state = gout_state(question="How is it treated?", turn=2, turn_entity_ids=[GOUT], entities=[entity])
    assert search_question(state) == "How is shingles treated?"  # the consumer pages' word, not the KG's


def test_a_question_naming_an_entity_does_not_carry_the_previous_ones(slice_kb: KnowledgeBase) -> None:
    state = gout_state(question="What are the symptoms of hemochromatosis?", turn=2, turn_entity_ids=[])
    out = make_ner_link(ConsultDeps(slice_kb))(state, runtime())
    assert GOUT not in out["turn_entity_ids"] and out["turn_entity_ids"]
    assert "hemochromatosis" in {e["name"].lower() for e in out["entities"]}
    assert search_question({**state, "turn_entity_ids": out["turn_entity_ids"]}) == state["question"]


# --- planning -----------------------------------------------------------------------------------------


def test_offline_plan_asks_exactly_for_the_missing_label() -> None:
    state = gout_state(verdict={"sufficient": False, "missing_labels": ["treatment"], "missing_entities": []})
    calls = offline_plan(state, ConsultContext())
    walks = [c for c in calls if c["name"] == "hypergraph_walk"]
    assert len(walks) == 1
    assert walks[0]["args"]["labels"] == ["treatment"] and walks[0]["args"]["entity_ids"] == [GOUT]
    assert not [c for c in calls if c["name"] == "ner_link"]  # nothing was unlinked


def test_offline_plan_links_unlinked_terms_and_walks_from_missing_entities() -> None:
    hemo: EntityRec = {"id": "DOID:2352", "name": "hemochromatosis", "type": "Disease", "score": 1.0}
    state = gout_state(
        entities=[GOUT_ENTITY, hemo],
        unlinked_terms=["purine diet"],
        verdict={"sufficient": False, "missing_labels": [], "missing_entities": ["Hemochromatosis"]},
    )
    calls = offline_plan(state, ConsultContext(max_tool_calls_per_round=6))
    assert calls[0]["name"] == "ner_link" and calls[0]["args"]["extra_terms"] == ["purine diet"]
    assert {"name": "hypergraph_walk", "ids": ["DOID:2352"]} in [
        {"name": c["name"], "ids": c["args"].get("entity_ids")} for c in calls
    ]
    assert len(offline_plan(state, ConsultContext(max_tool_calls_per_round=1))) == 1


def test_execute_tools_runs_the_planned_walk_restricted_to_the_label(slice_kb: KnowledgeBase) -> None:
    events: list[dict[str, Any]] = []
    call = {"name": "hypergraph_walk", "args": {"entity_ids": [GOUT], "labels": ["treatment"], "mode": "ppr"}}
    state = gout_state(pending_calls=[call, {"name": "evidence_rank", "args": {}}])
    out = make_execute_tools(ConsultDeps(slice_kb))(state, runtime(events))
    assert out["topics"] and {t["label"] for t in out["topics"]} == {"treatment"}
    assert out["candidates"] and out["pending_calls"] == []
    detail = out["trace"][0]["detail"]
    assert detail["ran"] == ["hypergraph_walk"] and detail["rejected"][0].startswith(
        "evidence_rank: unknown tool"
    )
    assert events[-1]["step"] == "execute_tools"


def test_execute_tools_rejects_invalid_arguments_instead_of_failing(slice_kb: KnowledgeBase) -> None:
    state = gout_state(pending_calls=[{"name": "reasoning_chain", "args": {"entity_ids": [], "k": 9}}])
    out = make_execute_tools(ConsultDeps(slice_kb))(state, runtime())
    assert out["trace"][0]["detail"]["ran"] == []
    assert out["trace"][0]["detail"]["rejected"] == ["reasoning_chain: invalid arguments (2 error(s))"]


def test_repeated_calls_are_dropped_and_an_empty_plan_goes_to_the_answer(slice_kb: KnowledgeBase) -> None:
    walk = {"name": "hypergraph_walk", "args": {"entity_ids": [GOUT], "labels": ["treatment"]}}
    earlier = {"step": "plan", "detail": {"calls": [{**walk, "why": "round 1"}]}}
    state = gout_state(trace=[earlier], verdict={"sufficient": False, "missing_labels": ["treatment"]})
    fresh, dropped = drop_repeated(state, [walk, {"name": "ner_link", "args": {"texts": ["x"]}}])  # type: ignore[list-item]
    assert dropped == 1 and [c["name"] for c in fresh] == ["ner_link"]

    offline_walk = offline_plan(state, ConsultContext())[0]
    state = gout_state(
        trace=[{"step": "plan", "detail": {"calls": [offline_walk]}}],
        verdict={"sufficient": False, "missing_labels": ["treatment"]},
    )
    command = make_plan(ConsultDeps(slice_kb))(state, runtime())
    assert command.goto == "check_claims" and command.update["pending_calls"] == []


def test_llm_plan_executes_the_scripted_calls_and_records_them(slice_kb: KnowledgeBase) -> None:
    scripted = [("hypergraph_walk", {"entity_ids": [GOUT], "labels": ["treatment"]})]
    llm = ScriptedChatModel(script=[tool_calls(*scripted)])
    state = gout_state(verdict={"sufficient": False, "missing_labels": ["treatment"]})
    command = make_plan(ConsultDeps(slice_kb, llm))(state, runtime())
    assert command.goto == "execute_tools"
    assert [(c["name"], c["args"]) for c in command.update["pending_calls"]] == scripted
    assert llm.bound == [{"tools": ["ner_link", "hypergraph_walk", "reasoning_chain"], "tool_choice": None}]
    prompt = llm.prompts[0][-1].content
    assert "What is missing: treatment" in prompt and f"{GOUT}: gout" in prompt


def test_llm_plan_with_no_tool_call_falls_back_to_the_offline_planner(slice_kb: KnowledgeBase) -> None:
    llm = ScriptedChatModel(script=["I would rather not call any tool."])
    state = gout_state(verdict={"sufficient": False, "missing_labels": ["treatment"]})
    command = make_plan(ConsultDeps(slice_kb, llm))(state, runtime())
    assert command.goto == "execute_tools"
    rec = command.update["trace"][0]
    assert rec["fallback"] == "the LLM asked for no tool call; used the offline planner"
    assert rec["detail"]["calls"] == [dict(c) for c in offline_plan(state, ConsultContext())]


# --- LLM call guards ----------------------------------------------------------------------------------


def test_structured_call_parses_function_calling_output() -> None:
    llm = ScriptedChatModel(script=[hypothesis(["gout", "allopurinol", "colchicine", "uric acid", "NSAID"])])
    usage = Usage()
    out = structured_call(llm, HypothesisOutput, "prompt", usage)
    assert out.search_terms[0] == "gout" and len(out.features) == 3 and usage.calls == 1
    assert llm.bound == [{"tools": ["HypothesisOutput"], "tool_choice": "any"}]
    assert llm.prompts[0][0].type == "system" and llm.prompts[0][1].content == "prompt"


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (AIMessage(content="As an AI I cannot give medical advice."), "answered in text instead of calling"),
        (
            AIMessage(
                content="",
                invalid_tool_calls=[
                    {"name": "HypothesisOutput", "args": '{"hypothesis": ', "id": "1", "error": "bad json"}
                ],
            ),
            "not valid JSON (HypothesisOutput)",
        ),
        (
            AIMessage(content="", tool_calls=[{"name": "HypothesisOutput", "args": {"x": 1}, "id": "1"}]),
            "unparseable",
        ),
    ],
)
def test_structured_call_failures_become_a_reason(reply: AIMessage, reason: str) -> None:
    usage = Usage()
    with pytest.raises(LLMStepFailed, match=re.escape(reason)):
        structured_call(ScriptedChatModel(script=[reply]), HypothesisOutput, "prompt", usage)
    assert usage.calls == 1 and reason in usage.failures[0]


def test_tool_call_plan_reports_malformed_arguments() -> None:
    bad = AIMessage(
        content="", invalid_tool_calls=[{"name": "hypergraph_walk", "args": "{oops", "id": "1", "error": "x"}]
    )
    with pytest.raises(LLMStepFailed, match="not valid JSON"):
        tool_call_plan(ScriptedChatModel(script=[bad]), [], "prompt", Usage())


# --- hypothesis and sufficiency -------------------------------------------------------------------------


def test_hypothesis_node_stores_terms_or_records_the_fallback(slice_kb: KnowledgeBase) -> None:
    terms = ["gout", "allopurinol", "colchicine", "uric acid", "NSAID"]
    llm = ScriptedChatModel(script=[hypothesis(terms, "NSAIDs and colchicine."), "No."])
    node = make_hypothesis(ConsultDeps(slice_kb, llm))
    out = node(gout_state(), runtime())
    assert (
        out["search_terms"] == terms
        and out["hypothesis"] == "NSAIDs and colchicine."
        and out["llm_calls"] == 1
    )
    failed = node(gout_state(), runtime())
    assert "hypothesis" not in failed and "answered in text" in failed["trace"][0]["fallback"]
    offline = node(gout_state(), runtime(llm_enabled=False))
    assert offline["trace"][0]["summary"] == "skipped (offline mode)" and llm.calls == 2


@pytest.mark.parametrize(("round_", "goto"), [(0, "plan"), (2, "check_claims")])
def test_insufficient_llm_verdict_loops_until_the_round_cap(
    slice_kb: KnowledgeBase, round_: int, goto: str
) -> None:
    llm = ScriptedChatModel(script=[verdict(3, missing_labels=["treatment"])])
    command = make_sufficiency(ConsultDeps(slice_kb, llm))(gout_state(round=round_), runtime(max_rounds=3))
    assert command.goto == goto
    update: dict[str, Any] = command.update
    assert update["round"] == round_ + 1 and update["verdict"]["missing_labels"] == ["treatment"]
    assert update["verdict"]["sufficient"] is False and update["verdict"]["method"] == "llm"


# --- citations --------------------------------------------------------------------------------------------


def test_check_citations_keeps_cited_claims_and_removes_the_rest() -> None:
    text = (
        "## Treatment\nAnswer: B\nNSAIDs treat gout flares [E:aa11]. Colchicine works too [E:ff00, E:aa11]. "
        "Steroids cure gout forever [E:ff00]. The moon is made of cheese.\n"
        "Insufficient evidence: no data on dosing."
    )
    checked = check_citations(text, {"E:aa11"})
    assert checked.claims == [
        {"text": "NSAIDs treat gout flares.", "citations": ["E:aa11"]},
        {"text": "Colchicine works too.", "citations": ["E:aa11"]},
    ]
    assert checked.removed == ["Steroids cure gout forever.", "The moon is made of cheese."]
    assert sorted(set(checked.invalid_ids)) == ["E:ff00"]
    assert "Colchicine works too [E:aa11]." in checked.text and "E:ff00" not in checked.text
    assert checked.text.startswith("## Treatment\nAnswer: B") and "Insufficient evidence" in checked.text
    assert checked.cited_ids == ["E:aa11"]


def test_an_uncited_sentence_one_passage_holds_is_cited_to_it_and_an_invented_one_is_not() -> None:
    sources = {
        "E:aa11": "Some common symptoms of hypothyroidism are fatigue, weight gain, cold intolerance and "
        "constipation.",
        "E:bb22": "Hypothyroidism is treated with levothyroxine taken once a day.",
    }
    text = (
        "The symptoms of hypothyroidism include fatigue, weight gain and cold intolerance. "
        "Hypothyroidism is cured by iodine supplements and surgery. Symptoms vary."
    )
    checked = check_citations(text, set(sources), sources)
    assert checked.claims == [
        {
            "text": "The symptoms of hypothyroidism include fatigue, weight gain and cold intolerance.",
            "citations": ["E:aa11"],
            "attributed": True,
        }
    ]
    assert checked.removed == ["Hypothyroidism is cured by iodine supplements and surgery.", "Symptoms vary."]
    # only retrieved texts can be cited, and without sources nothing is attributed
    assert not check_citations(text, {"E:bb22"}, sources).claims
    assert not check_citations(text, set(sources)).claims


@pytest.mark.parametrize("line", ["Answer: C", "**Answer:** C", "Answer: (C)", "answer: C."])
def test_mcq_answer_line_is_recognised(line: str) -> None:
    checked = check_citations(f"{line}\nAllopurinol lowers uric acid [E:aa11].", {"E:aa11"})
    match = ANSWER_OPTION.search(checked.text)
    assert match is not None and match.group(1) == "C" and not checked.removed


def test_every_labelled_task_wording_and_hand_written_reply_is_read_as_labelled() -> None:
    """evals/data/task_wordings.jsonl (issue 22: "Colleague says: …" was answered as a clinical question; a
    consumer question quoting a doctor was checked as a reply) and the 30 hand-written reply-check replies;
    evals/reports/task_detection.md is the same measurement, with the false alarms on the question sets."""
    from evals.task_detection import REPLIES, WORDINGS, misread, rows

    labelled = list(rows(WORDINGS))
    assert len(labelled) >= 20 and {"check_reply", "clinical", "audit"} <= {r["task"] for r in labelled}
    assert not misread(labelled)
    replies = [r["reply"] for r in rows(REPLIES)]
    assert len(replies) == 30 and all(detect_task(q) == "check_reply" for q in replies)


def test_closest_passages_never_show_the_same_text_twice() -> None:
    """MedQuAD files one paragraph under several questions: the same DBS paragraph was shown twice among
    three closest passages of "What are the side effects of levodopa?"."""
    from agent.nodes.answer import extractive_text

    dbs = "DBS is primarily used to stimulate one of three brain regions: the subthalamic nucleus. " * 5
    evidence = [
        {"id": "E:a", "text": dbs + "It is used when drugs fail.", "label": "treatment"},
        {"id": "E:b", "text": dbs + "Researchers are exploring settings.", "label": "overview"},
        {"id": "E:c", "text": "Carbidopa is usually given along with levodopa.", "label": "treatment"},
    ]
    state = {"question": "What are the side effects of levodopa?", "evidence": evidence, "verdict": {}}
    text = extractive_text(state, None)  # type: ignore[arg-type]
    assert "[E:a]" in text and "[E:c]" in text and "[E:b]" not in text


def test_an_answer_with_no_passage_about_a_subject_shows_no_empty_supporting_heading() -> None:
    """ "Which gene is mutated in hereditary hemochromatosis?" was answered (HFE) with a "Supporting passages"
    heading and nothing under it: no passage was about a linked subject, so the supporting list was empty."""
    from agent.nodes.answer import extractive_text

    evidence = [{"id": "E:a", "text": "Mutations in the HFE gene cause most cases.", "label": "causes"}]
    state = {"question": "Which gene is mutated?", "evidence": evidence, "verdict": {"sufficient": True}}
    text = extractive_text(state, None, supporting=[])  # type: ignore[arg-type]
    assert "Supporting passages" not in text
    shown = extractive_text(state, None, supporting=evidence)  # type: ignore[arg-type]
    assert "### Supporting passages" in shown and "[E:a]" in shown


def test_the_hfe_answer_shows_the_passages_its_key_sentences_quote(consultant: Consultant) -> None:
    """The whole consult of the question above, on the slice KB: the "Supporting passages" heading is never
    left empty, and the passages the key sentences quote are among those shown under it."""
    answer = consultant.ask("Which gene is mutated in hereditary hemochromatosis?").answer
    text = answer["text"]
    assert "HFE" in text
    if "### Supporting passages" in text:
        after = text.split("### Supporting passages", 1)[1].lstrip()
        assert after.startswith("**"), after[:200]  # a label group follows, with its passages
    quoted = {s["evidence_id"] for s in answer["direct"]["sentences"]}
    assert answer["status"] == "answered" and quoted, answer["direct"]
    assert "### Supporting passages" in text
    shown = text.split("### Supporting passages", 1)[1]
    assert any(f"[{i}]" in shown for i in quoted), shown[:400]


@pytest.mark.parametrize(
    ("name", "entity_type", "aspect"),
    [
        ("side effects", "Phenotype", True),
        ("medicine", "Concept", True),
        ("genetic disease", "Disease", True),  # a cue and a category word: nothing names a subject
        ("hereditary hemochromatosis", "Disease", False),
        ("hereditary angioedema", "Disease", False),
        ("drug-induced hepatitis", "Disease", False),
        ("Genetic Testing", "Concept", True),  # not a disease: read as the asked aspect, as before
    ],
)
def test_a_disease_named_with_an_aspect_cue_is_a_subject(name: str, entity_type: str, aspect: bool) -> None:
    from agent.nodes.focus import is_aspect_word

    entity: EntityRec = {"id": "X:1", "name": name, "type": entity_type, "score": 1.0}
    assert is_aspect_word(entity) is aspect


def test_cue_words_are_blanked_whole() -> None:
    from graphs.model.labels import without_cue_words

    assert without_cue_words("Treatments of hereditary angioedema").split() == ["of", "angioedema"]
