"""The consult agent, assembled: read the whole state machine here.

    START → start_turn → hypothesis → ner_link → hypergraph_walk → reasoning_chain → evidence_rank
          → sufficiency ─ sufficient, or round cap reached ─→ check_claims → answer → END
                        └ insufficient ─→ plan ─ calls ─→ execute_tools → evidence_rank → sufficiency …
                                               └ none ──→ check_claims

``check_claims`` acts on a reply check only (task ``check_reply``): the reply's claims, each retrieved for and
judged supported / contradicted / no evidence found; the answer leads with those verdicts.

``sufficiency`` and ``plan`` route with ``Command`` (their ``goto`` is declared where it happens); the
round counter lives in state and ``ConsultContext.max_rounds`` caps it. Nodes get the KB and the optional
chat model through ``ConsultDeps``; per-run knobs come as run context.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agent.context import ConsultContext
from agent.deps import ConsultDeps
from agent.nodes.answer import make_answer
from agent.nodes.claim_check import make_check_claims
from agent.nodes.hypothesis import make_hypothesis
from agent.nodes.planner import make_execute_tools, make_plan
from agent.nodes.rank import make_evidence_rank
from agent.nodes.retrieval import make_hypergraph_walk, make_ner_link, make_reasoning_chain
from agent.nodes.sufficiency import make_sufficiency
from agent.nodes.turn import start_turn
from agent.state import ConsultState

NODES_PER_ROUND = 4
"""plan, execute_tools, evidence_rank, sufficiency: what one extra retrieval round costs in graph steps."""


def recursion_limit(ctx: ConsultContext) -> int:
    """An explicit step budget: the first round, ``max_rounds`` follow-ups, and the answer, with slack."""
    return 8 + NODES_PER_ROUND * (ctx.max_rounds + 1)


def build_consult_graph(
    deps: ConsultDeps, checkpointer: BaseCheckpointSaver[Any] | None = None
) -> CompiledStateGraph[Any, Any, Any, Any]:
    graph = StateGraph(ConsultState, context_schema=ConsultContext)
    graph.add_node("start_turn", start_turn)
    graph.add_node("hypothesis", make_hypothesis(deps))
    graph.add_node("ner_link", make_ner_link(deps))
    graph.add_node("hypergraph_walk", make_hypergraph_walk(deps))
    graph.add_node("reasoning_chain", make_reasoning_chain(deps))
    graph.add_node("evidence_rank", make_evidence_rank(deps))
    graph.add_node("sufficiency", make_sufficiency(deps))
    graph.add_node("plan", make_plan(deps))
    graph.add_node("execute_tools", make_execute_tools(deps))
    graph.add_node("check_claims", make_check_claims(deps))
    graph.add_node("answer", make_answer(deps))

    graph.add_edge(START, "start_turn")
    graph.add_edge("start_turn", "hypothesis")
    graph.add_edge("hypothesis", "ner_link")
    graph.add_edge("ner_link", "hypergraph_walk")
    graph.add_edge("hypergraph_walk", "reasoning_chain")
    graph.add_edge("reasoning_chain", "evidence_rank")
    graph.add_edge("evidence_rank", "sufficiency")  # sufficiency → plan | check_claims (Command)
    graph.add_edge("execute_tools", "evidence_rank")  # plan → execute_tools | check_claims (Command)
    graph.add_edge("check_claims", "answer")
    graph.add_edge("answer", END)
    return graph.compile(checkpointer=checkpointer, name="evigraph-consult")
