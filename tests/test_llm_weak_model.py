"""The LLM loop against a llama-server-like weak model (tests/llama_like.py), through the real ChatOpenAI.

Each test pins one behaviour issue 14 asks for: structured output per endpoint (auto probe once per
process), the rule check as a second opinion, no repeated planner calls, the compact answer prompt,
max_tokens per call, ≤ 3 calls for a one-round question, prose and never-stopping models, the shared
turn deadline and the circuit breaker.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.consult import Consultant, TurnResult
from agent.context import ConsultContext
from agent.llm import MAX_TOKENS, forget_probes
from agent.llm_guard import OFFLINE_FINISH_S, offline_reserve, reset_breakers, start_turn_deadline
from agent.verdict_check import second_opinion
from graphs.kb import KnowledgeBase
from graphs.model.settings import Settings
from tests.llama_like import LlamaLike, schema_name, token_cap
from tests.openai_stub import StubServer, error_reply, openai_stub, stall_reply, user_prompt

GOUT_Q = "What is the treatment for gout?"


@pytest.fixture()
def stub() -> Iterator[StubServer]:
    forget_probes()
    reset_breakers()
    with openai_stub() as server:
        yield server
    forget_probes()  # an ephemeral port may be reused by a later test's server: leave no state behind
    reset_breakers()


def consultant(stub: StubServer, kb: KnowledgeBase, root: Path, tmp: Path, **over: Any) -> Consultant:
    values: dict[str, Any] = {
        "kb_dir": root,
        "data_dir": tmp,
        "llm_base_url": stub.base_url,
        "llm_api_key": "test",
        "llm_model": "qwen-like",
        "llm_timeout_s": 30.0,
        "llm_max_retries": 0,
        "llm_structured": "json_schema",
        **over,
    }
    return Consultant(Settings(**values), kb=kb, checkpointer=InMemorySaver())


def fallbacks(result: TurnResult) -> dict[str, str]:
    return {s["step"]: s["fallback"] for s in result.trace if s.get("fallback")}


def names(stub: StubServer) -> list[str]:
    return ["answer" if r.get("stream") else schema_name(r) for r in stub.requests]


def test_auto_probes_once_per_process_and_then_uses_json_schema(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    stub.responder = LlamaLike()
    first = consultant(stub, slice_kb, slice_kb_root, tmp_path, llm_structured="auto")
    first.ask(GOUT_Q)
    # function calling was tried once and came back as fenced JSON text; JSON schema parsed
    assert names(stub)[:2] == ["_Probe", "_Probe"]
    assert "tools" in stub.requests[0] and stub.requests[1]["response_format"]["type"] == "json_schema"
    probes = len(stub.requests)
    stub.requests.clear()
    again = consultant(stub, slice_kb, slice_kb_root, tmp_path, llm_structured="auto")
    result = again.ask(GOUT_Q)
    assert "_Probe" not in names(stub) and probes > 2  # remembered for the endpoint, not asked again
    structured = [r for r in stub.requests if not r.get("stream")]
    assert structured and all(
        "tools" not in r and r["response_format"]["type"] == "json_schema" for r in structured
    )
    assert "hypothesis" not in fallbacks(result) and "sufficiency" not in fallbacks(result)


def test_function_calling_against_llama_like_server_reads_the_fenced_json(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    stub.responder = LlamaLike(always_insufficient=False)
    result = consultant(stub, slice_kb, slice_kb_root, tmp_path, llm_structured="function_calling").ask(
        GOUT_Q
    )
    assert (
        "tools" in stub.requests[0]
        and stub.requests[0]["tool_choice"]["function"]["name"] == "HypothesisOutput"
    )
    hyp = next(s for s in result.trace if s["step"] == "hypothesis")
    assert not hyp.get("fallback") and "treatment" in hyp["detail"]["search_terms"]
    assert result.answer["verdict"]["method"] == "llm" and result.answer["verdict"]["completeness"] == 9


def test_a_weak_insufficient_verdict_is_overruled_and_one_round_costs_three_calls(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    stub.responder = LlamaLike()  # "insufficient 7/10", naming the question's own entities as missing
    result = consultant(stub, slice_kb, slice_kb_root, tmp_path).ask(GOUT_Q)
    assert names(stub) == ["HypothesisOutput", "LLMVerdict", "answer"] and result.llm_calls == 3
    verdict = result.answer["verdict"]
    assert verdict["sufficient"] and verdict["method"] == "llm, overruled by the rule check"
    assert "is covered or not asked" in verdict["reasons"][-1] and result.answer["status"] == "answered"
    assert result.answer["mode"] == "llm" and result.answer["claims"]


def test_a_verdict_parroting_labels_relations_and_its_own_guesses_is_overruled(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    # The real 1.5B run: every verdict "7/10, missing: <question entities>, <a drug it guessed>, treatment,
    # symptoms, causes, treats, has_symptom" — none of which this treatment question lacks.
    stub.responder = LlamaLike(parrots=True)
    result = consultant(stub, slice_kb, slice_kb_root, tmp_path).ask(GOUT_Q)
    assert names(stub) == ["HypothesisOutput", "LLMVerdict", "answer"] and result.llm_calls == 3
    verdict = result.answer["verdict"]
    assert verdict["method"] == "llm, overruled by the rule check" and not verdict["missing_labels"]
    assert "Orphenadrine" in verdict["reasons"][-1]
    assert result.answer["mode"] == "llm" and result.answer["status"] == "answered"
    # The verdict prompt states the asked aspect and no longer lists example labels to copy.
    prompt = user_prompt(next(r for r in stub.requests if schema_name(r) == "LLMVerdict"))
    assert "What the question asks about: treatment" in prompt and "prognosis, prevention" not in prompt


def test_a_parroting_verdict_stands_when_the_rule_finds_no_answer(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    stub.responder = LlamaLike(parrots=True)
    result = consultant(stub, slice_kb, slice_kb_root, tmp_path).ask("What is the capital of France?")
    assert not result.answer["verdict"]["sufficient"] and result.answer["status"] == "insufficient"
    assert "overruled by the rule check" not in result.answer["verdict"].get("method", "")


def test_a_verbose_verdict_is_bounded_by_its_schema_and_not_cut_at_its_cap(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    # A real 1.5B model listed "missing" items until max_tokens cut its JSON: every verdict fell back.
    stub.responder = LlamaLike(verbose_verdict=True, always_insufficient=False)
    result = consultant(stub, slice_kb, slice_kb_root, tmp_path).ask(GOUT_Q)
    schema = next(r for r in stub.requests if schema_name(r) == "LLMVerdict")["response_format"]
    props = schema["json_schema"]["schema"]["properties"]
    assert props["missing_entities"]["maxItems"] == 4 and props["reasons"]["items"]["maxLength"] == 80
    assert "sufficiency" not in fallbacks(result) and result.answer["verdict"]["method"].startswith("llm")
    assert len(result.answer["verdict"]["missing_entities"]) <= 4
    unbounded = LlamaLike(verbose_verdict=True).arguments("LLMVerdict", "Entities linked so far: Gout")
    assert len(json.dumps(unbounded)) // 4 > MAX_TOKENS["verdict"]  # without the bounds it would be cut


def test_a_model_that_declines_despite_answering_evidence_falls_back_to_the_cited_evidence(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    stub.responder = LlamaLike(declines=True, always_insufficient=False)
    result = consultant(stub, slice_kb, slice_kb_root, tmp_path).ask(GOUT_Q)
    assert result.answer["verdict"]["sufficient"]
    # never "answered" above a text that says "Insufficient evidence": the calibrated extract instead
    assert result.answer["mode"] == "offline" and result.answer["status"] == "answered"
    assert "declined to answer" in fallbacks(result)["answer"]
    assert "insufficient evidence" not in result.answer["text"].lower()


def test_a_faithful_answer_without_ids_is_cited_by_the_checker_and_an_invented_sentence_removed(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    stub.responder = LlamaLike(forgets_citations=True, always_insufficient=False)
    result = consultant(stub, slice_kb, slice_kb_root, tmp_path).ask(GOUT_Q)
    answer = result.answer
    assert answer["mode"] == "llm" and answer["status"] == "answered", fallbacks(result)
    assert [c.get("attributed") for c in answer["claims"]] == [True]
    assert set(answer["claims"][0]["citations"]) <= set(answer["evidence_ids"])
    assert answer["removed_claims"] == ["Gout is best cured by drinking seawater every morning."]
    assert "seawater" not in answer["text"]
    prompt = user_prompt(next(r for r in stub.requests if r.get("stream")))
    assert "The question asks about: treatment." in prompt and "that answer this question" in prompt


def test_the_answer_prompt_leads_with_the_kg_facts_for_the_asked_relation(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    stub.responder = LlamaLike(always_insufficient=False)
    offline = Consultant(
        Settings(kb_dir=slice_kb_root, data_dir=tmp_path / "off"), kb=slice_kb, checkpointer=InMemorySaver()
    ).ask(GOUT_Q)
    facts = list(dict.fromkeys(c for f in offline.answer["direct"]["facts"] for c in f["chain_ids"]))
    assert facts, offline.answer["direct"]
    result = consultant(stub, slice_kb, slice_kb_root, tmp_path).ask(GOUT_Q)
    chains_block = user_prompt(stub.requests[-1]).split("Knowledge-graph chains", 1)[1]
    listed = [line.split("]")[0].lstrip("[") for line in chains_block.splitlines() if line.startswith("[C:")]
    assert set(listed[: len(facts)]) == set(facts)  # the facts first, then the consult's top chains
    assert set(facts) <= set(result.answer["chain_ids"])  # and citable in the answer


def test_every_call_carries_its_max_tokens_and_the_answer_prompt_is_compact(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    stub.responder = LlamaLike()
    ask = consultant(stub, slice_kb, slice_kb_root, tmp_path)
    result = ask.ask(GOUT_Q)
    caps = [token_cap(r) for r in stub.requests]
    assert caps == [MAX_TOKENS["hypothesis"], MAX_TOKENS["verdict"], MAX_TOKENS["answer"]]
    answer_prompt = user_prompt(stub.requests[-1])
    assert "Key evidence sentences" in answer_prompt
    sentence_lines = [line for line in answer_prompt.splitlines() if line.startswith("[E:")]
    assert 0 < len(sentence_lines) <= 8 and all(len(line) < 360 for line in sentence_lines)
    # the old prompt quoted every ranked passage whole; the compact one quotes a few sentences of them
    block = answer_prompt.split("Key evidence sentences", 1)[1].split("Knowledge-graph chains", 1)[0]
    passages = ask.evidence_texts(result.answer["evidence_ids"])
    assert len(block) < sum(len(t) for t in passages.values()) / 3


def test_the_planner_never_repeats_a_call(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    weak = LlamaLike()
    stub.responder = weak
    # A verdict naming an entity the question names and the evidence lacks keeps "insufficient", so the
    # loop plans.
    original = weak.arguments

    def arguments(name: str, prompt: str) -> dict[str, Any]:
        out = original(name, prompt)
        if name == "LLMVerdict":
            out["missing_entities"] = ["tetrodotoxin"]
        return out

    weak.arguments = arguments  # type: ignore[method-assign]
    question = "What is the treatment for gout after tetrodotoxin exposure?"
    result = consultant(stub, slice_kb, slice_kb_root, tmp_path).ask(question)
    plans = [s for s in result.trace if s["step"] == "plan"]
    executed = [c for p in plans for c in p["detail"]["calls"]]
    keys = [(c["name"], repr(sorted(c["args"].items()))) for c in executed]
    assert len(keys) == len(set(keys))  # nothing executed twice
    assert names(stub).count("PlanOutput") == 2  # the second plan only repeated the first: offline planner
    assert "repeated" in plans[1]["fallback"]
    assert result.answer["status"] == "insufficient" and result.trace[-1]["step"] == "answer"


def test_a_model_that_answers_in_prose_falls_back_step_by_step(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    stub.responder = LlamaLike(prose=True)
    result = consultant(stub, slice_kb, slice_kb_root, tmp_path).ask(GOUT_Q)
    found = fallbacks(result)
    assert "answered in text instead of writing the requested JSON" in found["hypothesis"]
    assert found["sufficiency"].startswith("LLM verdict failed (the model answered in text")
    assert found["answer"].startswith("LLM answer failed (the answer had no claim with a valid citation)")
    assert result.answer["mode"] == "offline" and result.answer["evidence_ids"]


def test_a_model_that_never_stops_is_cut_at_max_tokens(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    stub.responder = LlamaLike(never_stops=True)
    result = consultant(stub, slice_kb, slice_kb_root, tmp_path).ask(GOUT_Q)
    answer_request = next(r for r in stub.requests if r.get("stream"))
    assert token_cap(answer_request) == MAX_TOKENS["answer"]
    assert set(fallbacks(result)) == {"hypothesis", "sufficiency", "answer"}
    assert result.answer["mode"] == "offline" and result.trace[-1]["step"] == "answer"


def test_a_hung_endpoint_ends_at_the_turn_deadline_without_further_requests(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    stub.responder = lambda body: stall_reply(30)
    result = consultant(stub, slice_kb, slice_kb_root, tmp_path, llm_turn_deadline_s=1.0).ask(GOUT_Q)
    found = fallbacks(result)
    assert "deadline" in found["hypothesis"] and "deadline" in found["sufficiency"]
    assert len(stub.requests) == 1  # later steps did not wait for the hung endpoint again
    assert result.answer["mode"] == "offline" and result.answer["status"] == "answered"


def test_the_deadline_counts_from_when_the_user_began_waiting(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    """A turn whose wait began 5 s ago (a CLI's start-up, a queued request) under a 2 s deadline never
    calls the endpoint: the LLM's share of the turn is gone, and the offline answer is given at once."""
    stub.responder = lambda body: stall_reply(30)
    ask = consultant(stub, slice_kb, slice_kb_root, tmp_path, llm_turn_deadline_s=2.0)
    result = ask.ask(GOUT_Q, context=ConsultContext(started_at=time.monotonic() - 5))
    assert stub.requests == []
    assert "deadline" in fallbacks(result)["hypothesis"]
    assert result.answer["mode"] == "offline" and result.answer["status"] == "answered"


def test_the_llm_share_of_a_turn_leaves_time_for_the_offline_finish() -> None:
    began = time.monotonic()
    assert start_turn_deadline(10, began) == pytest.approx(began + 10 - OFFLINE_FINISH_S)
    assert offline_reserve(10, turns_running=1, cores=2) == OFFLINE_FINISH_S
    # 20 turns on 2 cores queue their offline finishes; the LLM still gets half the turn.
    assert offline_reserve(10, turns_running=6, cores=2) == pytest.approx(3 * OFFLINE_FINISH_S)
    assert offline_reserve(10, turns_running=20, cores=2) == 5.0


def test_the_circuit_breaker_skips_a_failing_endpoint(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    stub.responder = lambda body: error_reply(500)
    ask = consultant(stub, slice_kb, slice_kb_root, tmp_path, llm_breaker_cooldown_s=300.0)
    first = ask.ask(GOUT_Q)
    assert len(stub.requests) == 2  # hypothesis and verdict failed; the answer was skipped
    assert "LLM skipped" in fallbacks(first)["answer"]
    second = ask.ask("What are the symptoms of gout?")
    assert len(stub.requests) == 2 and "LLM skipped" in fallbacks(second)["hypothesis"]
    assert second.answer["mode"] == "offline" and second.answer["evidence_ids"]


def test_second_opinion_keeps_a_gap_the_evidence_really_lacks() -> None:
    rule: Any = {"sufficient": True, "completeness": 9, "missing_entities": []}
    evidence = "Colchicine treats gout flares."
    # a drug the question names and no passage mentions: a real gap
    q = "Is febuxostat used for gout?"
    named: Any = {"sufficient": False, "completeness": 7, "missing_entities": ["febuxostat"], "reasons": []}
    assert second_opinion(named, rule, q, ["gout"], evidence, []) is named
    # the same drug as the model's own guess for a question that never named it: not a gap
    q = "What is the treatment for gout?"
    out = second_opinion(named, rule, q, ["gout"], evidence, [])
    assert out["sufficient"] and out["method"] == "llm, overruled by the rule check"
    covered: Any = {**named, "missing_entities": ["Gout", "colchicine"]}
    assert second_opinion(covered, rule, q, ["gout"], evidence, [])["sufficient"]
    # the rule itself finds no answer: the LLM's verdict stands
    assert second_opinion(covered, {**rule, "sufficient": False}, q, ["gout"], "…", []) is covered
    # an asked aspect no answering passage carries keeps it; a label the question did not ask does not
    q2 = "What are the symptoms and treatment of gout?"
    labelled: Any = {**covered, "missing_labels": ["symptoms"]}
    assert second_opinion(labelled, rule, q2, ["gout"], evidence, ["symptoms"]) is labelled
    assert second_opinion(labelled, rule, q, ["gout"], evidence, [])["sufficient"]
    # relation types alone are answered by the aspect the rule checked
    related: Any = {**covered, "missing_relations": ["treats", "has_symptom"]}
    assert second_opinion(related, rule, q, ["gout"], evidence, [])["sufficient"]


def test_the_probes_verdict_is_kept_on_disk_so_a_new_process_does_not_probe_again(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    """Issue 23: every `evigraph ask` is a new process and paid the probe (two test questions) again."""
    import json as _json

    stub.responder = LlamaLike()
    consultant(stub, slice_kb, slice_kb_root, tmp_path, llm_structured="auto").ask(GOUT_Q)
    cached = _json.loads((tmp_path / "llm_probe.json").read_text())
    assert cached == {f"{stub.base_url}|qwen-like": "json_schema"}
    forget_probes()  # as in a new process: only the file remembers
    stub.requests.clear()
    consultant(stub, slice_kb, slice_kb_root, tmp_path, llm_structured="auto").ask(GOUT_Q)
    assert "_Probe" not in names(stub)
    (tmp_path / "llm_probe.json").write_text("{not json")  # damaged: probe again, never fail
    forget_probes()
    stub.requests.clear()
    consultant(stub, slice_kb, slice_kb_root, tmp_path, llm_structured="auto").ask(GOUT_Q)
    assert names(stub)[:2] == ["_Probe", "_Probe"]


def test_a_probe_against_a_hung_endpoint_ends_at_the_deadline_counts_for_the_breaker_and_is_not_cached(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    stub.responder = lambda body: stall_reply(60)
    result = consultant(
        stub, slice_kb, slice_kb_root, tmp_path, llm_structured="auto", llm_turn_deadline_s=2.0
    ).ask(GOUT_Q)
    assert result.answer["mode"] == "offline"
    assert "hypothesis" in fallbacks(result)
    assert not (tmp_path / "llm_probe.json").exists()
    assert len(stub.requests) == 1  # the probe's first request timed out; nothing was retried


def test_an_endpoint_that_answers_the_probe_but_hangs_on_the_real_call_ends_at_the_deadline(
    stub: StubServer, slice_kb: KnowledgeBase, slice_kb_root: Path, tmp_path: Path
) -> None:
    """Issue 23's bad input: the probe's quick answer must not let a later call outlive the turn."""
    answers_probes = LlamaLike()
    stub.responder = lambda body: answers_probes(body) if schema_name(body) == "_Probe" else stall_reply(60)
    started = time.monotonic()
    result = consultant(
        stub, slice_kb, slice_kb_root, tmp_path, llm_structured="auto", llm_turn_deadline_s=3.0
    ).ask(GOUT_Q)
    assert time.monotonic() - started < 30  # far below the 60 s the hung call would take
    assert result.answer["mode"] == "offline" and result.answer["evidence_ids"]
    assert "deadline" in fallbacks(result)["hypothesis"]
    assert names(stub).count("HypothesisOutput") == 1  # the hung call was not retried
    assert (tmp_path / "llm_probe.json").exists()  # the probe's verdict was real, so it is kept
