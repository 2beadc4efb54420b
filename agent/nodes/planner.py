"""``plan`` and ``execute_tools``: follow-up retrieval for exactly what the sufficiency check found missing.

LLM mode: the four tools are bound to the model, which chooses the calls (EbmKG/HyKGE-style agentic
retrieval). Offline: a rule-based planner makes the same kinds of calls —

1. link the terms that could not be linked, with a relaxed embedding threshold;
2. walk from the question's entities restricted to the missing labels (e.g. only "treatment" topics);
3. walk from the entities the sufficiency check says are missing, and widen the chain search by one hop;
4. walk from entities newly reached by the previous walk.

``execute_tools`` validates every call against the tool's request model, runs at most
``max_tool_calls_per_round`` of them, and folds the results into state like the first-round nodes do.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, Field, ValidationError

from agent.context import ConsultContext
from agent.deps import ConsultDeps
from agent.llm import LLMStepFailed, Usage, structured_call, structured_method, tool_call_plan
from agent.nodes.common import emit, llm_on, question_in_context, step, usage_update
from agent.nodes.retrieval import fold_chains, fold_entities, fold_topics, walk_seeds
from agent.state import ConsultState, ToolCallRec
from prompts import render_prompt
from tools.common import ToolInputError
from tools.hypergraph_walk import HypergraphWalkRequest, hypergraph_walk, hypergraph_walk_tool
from tools.ner_link import DEFAULT_DELTA, NerLinkRequest, ner_link, ner_link_tool
from tools.reasoning_chain import ReasoningChainRequest, reasoning_chain, reasoning_chain_tool

PLANNABLE = ("ner_link", "hypergraph_walk", "reasoning_chain")
"""evidence_rank always runs after the follow-up calls, so the planner does not need to ask for it."""


class PlannedCall(BaseModel):
    """One follow-up call in the JSON-schema form of planning (for endpoints without tool calling)."""

    tool: Literal["ner_link", "hypergraph_walk", "reasoning_chain"]
    entity_ids: list[str] = Field(default_factory=list, description="Entity ids from the linked list.")
    labels: list[str] = Field(default_factory=list, description="Evidence labels to restrict a walk to.")
    terms: list[str] = Field(default_factory=list, description="Terms to link (ner_link only).")


class PlanOutput(BaseModel):
    """The follow-up calls, most useful first."""

    calls: list[PlannedCall] = Field(default_factory=list)


def schema_plan(
    deps: ConsultDeps, state: ConsultState, ctx: ConsultContext, prompt: str, usage: Usage
) -> list[ToolCallRec]:
    """Planning as one JSON-schema object (llama.cpp-style servers), turned into validated tool calls.

    Why: a model that cannot call tools can still fill a small grammar-constrained form; entity ids it
    invents are dropped here, so only entities this consult linked are walked."""
    assert deps.llm is not None
    out = structured_call(deps.llm, PlanOutput, prompt, usage, step="plan")
    known = {e["id"] for e in state.get("entities", [])}
    calls: list[ToolCallRec] = []
    for c in out.calls[: ctx.max_tool_calls_per_round]:
        ids = [i for i in c.entity_ids if i in known][:8]
        if c.tool == "ner_link" and c.terms:
            args: dict[str, Any] = {"texts": [state["question"]], "extra_terms": c.terms[:8], "n_m": ctx.n_m}
        elif c.tool == "hypergraph_walk" and ids:
            args = {"entity_ids": ids, "n_t": ctx.n_t, "mode": ctx.walk_mode, "seed": ctx.seed}
            if c.labels:
                args["labels"] = c.labels[:4]
        elif c.tool == "reasoning_chain" and len(ids) >= 2:
            args = {"entity_ids": ids, "k": min(4, ctx.k + 1)}
        else:
            continue
        calls.append({"name": c.tool, "args": args, "why": "planned by the LLM"})
    return calls


def offline_plan(state: ConsultState, ctx: ConsultContext) -> list[ToolCallRec]:
    verdict = state.get("verdict", {})
    calls: list[ToolCallRec] = []
    seeds = walk_seeds(state)
    unlinked = state.get("unlinked_terms", [])[:8]
    if unlinked:
        calls.append(
            {
                "name": "ner_link",
                "args": {
                    "texts": [state["question"]],
                    "extra_terms": unlinked,
                    "delta": round(max(0.3, DEFAULT_DELTA - 0.1), 2),
                    "n_m": ctx.n_m,
                },
                "why": f"link unlinked terms with a relaxed threshold: {', '.join(unlinked)}",
            }
        )
    labels = verdict.get("missing_labels", [])
    if labels and seeds:
        calls.append(
            {
                "name": "hypergraph_walk",
                "args": {
                    "entity_ids": seeds,
                    "labels": labels,
                    "n_t": ctx.n_t,
                    "mode": ctx.walk_mode,
                    "seed": ctx.seed,
                },
                "why": f"find {', '.join(labels)} evidence for the question's entities",
            }
        )
    names = {e["name"].lower(): e["id"] for e in state.get("entities", [])}
    missing_ids = [names[n.lower()] for n in verdict.get("missing_entities", []) if n.lower() in names]
    if missing_ids:
        calls.append(
            {
                "name": "hypergraph_walk",
                "args": {"entity_ids": missing_ids, "n_t": ctx.n_t, "mode": ctx.walk_mode, "seed": ctx.seed},
                "why": "evidence about entities not yet covered",
            }
        )
    if len(seeds) >= 2 and ctx.k + state.get("round", 0) <= 4:
        calls.append(
            {
                "name": "reasoning_chain",
                "args": {"entity_ids": seeds[:8], "k": min(4, ctx.k + 1)},
                "why": "widen the chain search by one hop",
            }
        )
    reached = [t["entity_id"] for t in state.get("topics", []) if t["entity_id"] not in seeds][:3]
    if reached and not labels:
        calls.append(
            {
                "name": "hypergraph_walk",
                "args": {"entity_ids": reached, "n_t": ctx.n_t, "mode": ctx.walk_mode, "seed": ctx.seed},
                "why": "walk from entities reached in the previous round",
            }
        )
    return calls[: ctx.max_tool_calls_per_round]


def call_key(call: ToolCallRec) -> str:
    return json.dumps({"name": call.get("name"), "args": call.get("args", {})}, sort_keys=True, default=str)


def drop_repeated(state: ConsultState, calls: list[ToolCallRec]) -> tuple[list[ToolCallRec], int]:
    """Calls not already made in this turn (the trace holds this turn's plans), and how many were dropped.

    Why: the same call on the same KB returns the same result, so repeating it spends a round and finds
    nothing; when every proposed call is a repeat the loop goes to the answer instead.
    """
    done = {
        call_key(c)
        for rec in state.get("trace", [])
        if rec.get("step") == "plan"
        for c in rec.get("detail", {}).get("calls", [])
    }
    fresh: list[ToolCallRec] = []
    for call in calls:
        key = call_key(call)
        if key not in done:
            done.add(key)
            fresh.append(call)
    return fresh, len(calls) - len(fresh)


def make_plan(deps: ConsultDeps):  # type: ignore[no-untyped-def]
    def plan(
        state: ConsultState, runtime: Runtime[ConsultContext]
    ) -> Command[Literal["execute_tools", "check_claims"]]:
        ctx = runtime.context
        usage = Usage()
        fallback = ""
        calls: list[ToolCallRec] = []
        if llm_on(deps, runtime) and deps.llm is not None:
            verdict = state.get("verdict", {})
            missing = (
                verdict.get("missing_entities", [])
                + verdict.get("missing_labels", [])
                + verdict.get("missing_relations", [])
            )
            prompt = render_prompt(
                "planner",
                max_calls=ctx.max_tool_calls_per_round,
                question=question_in_context(state),
                missing=", ".join(missing) or "; ".join(verdict.get("reasons", [])) or "unspecified",
                entities=", ".join(f"{e['id']}: {e['name']}" for e in state.get("entities", [])[:20])
                or "(none)",
                unlinked=", ".join(state.get("unlinked_terms", [])) or "(none)",
            )
            tools = [ner_link_tool(deps.kb), hypergraph_walk_tool(deps.kb), reasoning_chain_tool(deps.kb)]
            try:
                if structured_method(deps.llm, usage) == "json_schema":
                    calls = schema_plan(deps, state, ctx, prompt, usage)
                else:
                    planned = tool_call_plan(deps.llm, tools, prompt, usage)
                    calls = [
                        {"name": c["name"], "args": c["args"], "why": "planned by the LLM"} for c in planned
                    ]
            except LLMStepFailed as exc:
                fallback = f"LLM planning failed ({exc}); used the offline planner"
                calls = offline_plan(state, ctx)
            calls, repeated = drop_repeated(state, calls)
            if not calls and not fallback:
                fallback = (
                    "the LLM only repeated earlier calls; used the offline planner"
                    if repeated
                    else "the LLM asked for no tool call; used the offline planner"
                )
                calls = offline_plan(state, ctx)
        else:
            calls = offline_plan(state, ctx)
        calls, repeated = drop_repeated(state, calls)
        calls = calls[: ctx.max_tool_calls_per_round]
        emit(runtime, "plan", calls=[f"{c['name']}: {c.get('why', '')}" for c in calls])
        summary = f"{len(calls)} follow-up call(s)" + (
            "" if calls else ": nothing new to search, answering with what was found"
        )
        update = {
            **usage_update(state, usage),
            "pending_calls": calls,
            "trace": [step(state, "plan", summary, fallback, calls=[dict(c) for c in calls])],
        }
        return Command(goto="execute_tools" if calls else "check_claims", update=update)

    return plan


def make_execute_tools(deps: ConsultDeps):  # type: ignore[no-untyped-def]
    def execute_tools(state: ConsultState, runtime: Runtime[ConsultContext]) -> dict[str, Any]:
        entities: list[Any] = []
        topics: list[Any] = []
        chains: list[Any] = []
        candidates: dict[str, float] = {}
        done: list[str] = []
        rejected: list[str] = []
        turn_ids = list(state.get("turn_entity_ids", []))
        for call in state.get("pending_calls", [])[: runtime.context.max_tool_calls_per_round]:
            name, args = call.get("name", ""), dict(call.get("args", {}))
            try:
                if name == "ner_link":
                    args.setdefault("texts", [state["question"]])
                    res = ner_link(deps.kb, NerLinkRequest.model_validate(args))
                    new = fold_entities(res, state.get("turn", 1))
                    entities += new
                    turn_ids += [e["id"] for e in new if e["id"] not in turn_ids]
                elif name == "hypergraph_walk":
                    t, c = fold_topics(hypergraph_walk(deps.kb, HypergraphWalkRequest.model_validate(args)))
                    topics += t
                    candidates.update({k: max(v, candidates.get(k, 0.0)) for k, v in c.items()})
                elif name == "reasoning_chain":
                    ch, c = fold_chains(reasoning_chain(deps.kb, ReasoningChainRequest.model_validate(args)))
                    chains += ch
                    candidates.update({k: max(v, candidates.get(k, 0.0)) for k, v in c.items()})
                else:
                    rejected.append(f"{name}: unknown tool (allowed: {', '.join(PLANNABLE)})")
                    continue
                done.append(name)
            except ValidationError as exc:
                rejected.append(f"{name}: invalid arguments ({exc.error_count()} error(s))")
            except ToolInputError as exc:
                rejected.append(f"{name}: {exc}")
        emit(runtime, "execute_tools", ran=done, rejected=rejected)
        return {
            "entities": entities,
            "topics": topics,
            "chains": chains,
            "candidates": candidates,
            "turn_entity_ids": turn_ids,
            "pending_calls": [],
            "trace": [
                step(
                    state,
                    "execute_tools",
                    f"ran {len(done)} call(s), rejected {len(rejected)}",
                    ran=done,
                    rejected=rejected,
                )
            ],
        }

    return execute_tools
