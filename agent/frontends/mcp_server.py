"""``evigraph mcp``: EviGraph's evidence for any MCP client (Claude Desktop, IDE agents, other LLM apps).

It exposes, over the Model Context Protocol (the official ``mcp`` SDK, stdio or streamable HTTP):
- the four retrieval tools — ``ner_link``, ``hypergraph_walk``, ``reasoning_chain``, ``evidence_rank`` —
  with the same names, descriptions and argument schemas the agent's own LLM sees (taken from their
  LangChain tools), and their pydantic result models as MCP output schemas;
- ``consult``: a whole consult turn (the answer with citations, the cited passages, sources, KB version and
  safety note), continuing a consult when ``consult_id`` is given.

Why the tools' arguments are flattened: MCP clients show and fill a tool's top-level parameters, so each
request model's fields become the tool's parameters (constraints and descriptions kept), and the model
itself validates the call again (its cross-field checks included) before the tool runs.

Work runs in the consult service the HTTP API uses (``agent.service_runner``), waited for on a worker thread
so the event loop stays free for other MCP requests: ``consult`` calls on different consults run side by
side (each consult one turn at a time, across processes), and the retrieval tools read the newest published
KB build without waiting for any turn.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Annotated, Any

import anyio
import anyio.from_thread
import anyio.to_thread
from langchain_core.tools import BaseTool
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field, ValidationError

from agent.citations import cited_ids
from agent.consult import Event
from agent.errors import UserError
from agent.frontends.render import event_line
from agent.service_runner import ServiceRunner
from agent.serving import UnknownConsult
from graphs.kb import KnowledgeBase
from tools.common import ToolInputError
from tools.evidence_rank import EvidenceRankResult, evidence_rank, evidence_rank_tool
from tools.hypergraph_walk import HypergraphWalkResult, hypergraph_walk, hypergraph_walk_tool
from tools.ner_link import NerLinkResult, ner_link, ner_link_tool
from tools.reasoning_chain import ReasoningChainResult, reasoning_chain, reasoning_chain_tool

log = logging.getLogger("evigraph.mcp")

SERVER_NAME = "evigraph"
MCP_PATH = "/mcp"
INSTRUCTIONS = (
    "EviGraph answers clinical questions only from evidence it can cite. Call `consult` for a cited answer "
    "(pass consult_id to ask a follow-up), or use the retrieval tools step by step: ner_link (question -> "
    "entity ids), hypergraph_walk (entity ids -> topics and evidence ids), reasoning_chain (entity ids -> "
    "typed KG chains), evidence_rank (query -> ranked, citable passages). Cite evidence as [E:id]. "
    "Answers support, and never replace, a clinician's assessment."
)

ToolFn = Callable[[KnowledgeBase, Any], BaseModel]
RETRIEVAL_TOOLS: tuple[tuple[Callable[[KnowledgeBase], BaseTool], ToolFn, type[BaseModel]], ...] = (
    (ner_link_tool, ner_link, NerLinkResult),
    (hypergraph_walk_tool, hypergraph_walk, HypergraphWalkResult),
    (reasoning_chain_tool, reasoning_chain, ReasoningChainResult),
    (evidence_rank_tool, evidence_rank, EvidenceRankResult),
)


class ConsultReply(BaseModel):
    """What ``consult`` returns: the turn as ``evigraph ask --json`` prints it, plus the cited passages."""

    consult_id: str = Field(description="Pass it back as consult_id to ask a follow-up in this consult.")
    status: str = Field(
        description="answered; insufficient when the evidence does not support an answer. A reply check "
        "(task check_reply) takes its status from its claim verdicts: contradicted when the evidence "
        "contradicts any claim, supported when it supports every claim, otherwise unverified (see "
        "answer.reply_check)."
    )
    text: str = Field(description="The answer; every claim cites [E:…] evidence or [C:…] KG chains.")
    cited_passages: dict[str, str] = Field(description="The text of each evidence id the answer text cites.")
    answer: dict[str, Any] = Field(description="The full answer: claims, sources, verdict, KB version, …")
    llm_calls: int
    seconds: float


def build_mcp_server(runner: ServiceRunner) -> MCPServer:
    """An MCP server over ``runner``'s consult service: the four retrieval tools and ``consult``."""
    server: MCPServer = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING")
    for make_tool, fn, result_model in RETRIEVAL_TOOLS:
        described = make_tool(runner.kb)  # names, descriptions and schemas only
        request_model = described.args_schema
        assert isinstance(request_model, type) and issubclass(request_model, BaseModel)
        server.add_tool(
            retrieval_tool(runner, fn, request_model, result_model, described.name),
            name=described.name,
            description=described.description,
            structured_output=True,
        )

    async def consult(
        question: str, ctx: Context, consult_id: str | None = None, task: str = "auto"
    ) -> ConsultReply:
        """A cited answer to a clinical question from EviGraph's knowledge base (one consult turn).

        task: auto (detected), clinical, mcq (exam question with options), check_reply (check a colleague's
        reply) or audit (audit a decision). consult_id: continue that consult (a follow-up question)."""
        return await run_consult(runner, question, consult_id, task, ctx)

    server.add_tool(consult, name="consult", structured_output=True)
    return server


def retrieval_tool(
    runner: ServiceRunner,
    fn: ToolFn,
    request_model: type[BaseModel],
    result_model: type[BaseModel],
    name: str,
) -> Callable[..., Any]:
    """An async tool function whose parameters are ``request_model``'s fields, running ``fn`` on the KB in use
    (a pure read: it waits for no turn)."""

    async def call(**arguments: Any) -> BaseModel:
        try:
            request = request_model.model_validate(arguments)
        except ValidationError as exc:
            raise ToolError(f"Invalid arguments for {name}: {exc}") from None

        def run() -> BaseModel:
            return runner.use_kb(lambda kb: fn(kb, request))

        try:
            return await anyio.to_thread.run_sync(run)
        except ToolInputError as exc:
            raise ToolError(str(exc)) from None

    call.__name__ = name
    call.__signature__ = flat_signature(request_model, result_model)  # type: ignore[attr-defined]
    return call


def flat_signature(request_model: type[BaseModel], result_model: type[BaseModel]) -> inspect.Signature:
    """Keyword parameters from the model's fields (type, constraints, description, default)."""
    empty = inspect.Parameter.empty
    parameters = []
    for field_name, field in request_model.model_fields.items():
        info = Field(description=field.description)
        annotation: Any = Annotated.__class_getitem__((field.annotation, *field.metadata, info))  # type: ignore[attr-defined]
        default = empty if field.is_required() else field.get_default(call_default_factory=True)
        kind = inspect.Parameter.KEYWORD_ONLY
        parameters.append(inspect.Parameter(field_name, kind, default=default, annotation=annotation))
    return inspect.Signature(parameters, return_annotation=result_model)


async def run_consult(
    runner: ServiceRunner, question: str, consult_id: str | None, task: str, ctx: Context
) -> ConsultReply:
    """One turn, waited for in a worker thread; its steps are sent to the client as progress notifications."""
    steps = 0

    def progress(event: Event) -> None:
        nonlocal steps
        if event.get("step") == "token":
            return
        steps += 1
        try:
            anyio.from_thread.run(ctx.report_progress, steps, None, event_line(event))
        except Exception as exc:  # progress is a courtesy: it must never fail the turn
            log.debug("progress not sent: %s", exc)

    def turn() -> ConsultReply:
        result = runner.ask(question, consult_id=consult_id, task=task, on_event=progress)
        text = str(result.answer.get("text", ""))
        # The passages the answer's text cites (all retrieved ones when it cites none, e.g. an empty answer):
        # a client shows them beside the text, so they must be what the text points at.
        in_text = [i for i in dict.fromkeys(cited_ids(text)) if i.startswith("E:")]
        cited = runner.evidence_texts(in_text or list(result.answer.get("evidence_ids", [])))
        return ConsultReply(
            consult_id=result.consult_id,
            status=str(result.answer.get("status", "")),
            text=text,
            cited_passages=cited,
            answer=result.answer,
            llm_calls=result.llm_calls,
            seconds=result.seconds,
        )

    try:
        return await anyio.to_thread.run_sync(turn)
    except UnknownConsult:  # the service's message names the HTTP route
        raise ToolError(f"No consult '{consult_id}'. Call consult without consult_id to start one.") from None
    except UserError as exc:  # bad input: the message says what to do
        raise ToolError(str(exc)) from None
