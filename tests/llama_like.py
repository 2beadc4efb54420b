"""A scripted server that behaves like stock llama-server running a weak 1.5B coder model.

Each behaviour below was seen with Qwen2.5-Coder-1.5B-Instruct on llama.cpp (issue 14) and is reproduced so
CI can prove the plumbing without the real model:

* an object-form named ``tool_choice`` is ignored and a tool request is answered with fenced JSON text
  (the chat template emits no tool-call tags), so function calling never yields ``tool_calls``;
* ``response_format`` with a JSON schema is honoured (llama.cpp constrains the grammar);
* the sufficiency verdict always says "insufficient, 7/10" and names the question's own entities (and, with
  ``parrots``, the prompt's example labels and relations and a drug from its own hypothesis);
* the planner re-issues the same call every time;
* optionally: prose instead of JSON for everything, or a model that never stops (it writes until
  ``max_completion_tokens``/``max_tokens`` and reports ``finish_reason: length``; without a cap it hangs).

Use it as ``StubServer.responder``; ``requests`` on the server records what the agent sent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from tests.openai_stub import EVIDENCE_ID, Body, Reply, stall_reply, text_reply, user_prompt

ENTITY_LINE = re.compile(r"Entities linked so far: (.*)")
LINKED_LINE = re.compile(r"Linked entities \(id: name\): (.*)")
QUESTION = re.compile(r'"""\n(.*?)\n"""', re.S)
KEY_SENTENCE = re.compile(r"^\[E:[0-9a-f]+\] (.+)$", re.M)


def schema_name(body: Body) -> str:
    """The schema a request asks for: ``response_format``'s name, else the forced function's name."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return str(fmt.get("json_schema", {}).get("name", ""))
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return str(choice.get("function", {}).get("name", ""))
    return "tools" if body.get("tools") else ""


def token_cap(body: Body) -> int | None:
    cap = body.get("max_completion_tokens", body.get("max_tokens"))
    return int(cap) if cap is not None else None


@dataclass
class LlamaLike:
    """The responder. Flags switch on the worst behaviours; by default it is weak but well-formed."""

    prose: bool = False
    never_stops: bool = False
    always_insufficient: bool = True
    declines: bool = False
    """The answer says "Insufficient evidence" whatever the sentences say (seen on T2D first-line)."""
    verbose_verdict: bool = False
    """The verdict lists a dozen long "missing" items; only a bounded schema keeps it within its cap."""
    forgets_citations: bool = False
    """The answer restates the first key sentence faithfully but without its id, then adds a sentence of
    its own (the real 1.5B model: correct hypothyroidism symptoms, no "[E:…]")."""
    parrots: bool = False
    """The verdict also names the prompt's example labels and relations and a drug of its own hypothesis
    (the real 1.5B run: "Missing: Orphenadrine, Warfarin, …, treatment, symptoms, causes, treats")."""

    def __call__(self, body: Body) -> Reply:
        if self.never_stops:
            cap = token_cap(body)
            if cap is None:
                return stall_reply(60)
            return Reply("text", content=" ".join(["and"] * cap), finish="length")
        if self.prose:
            return text_reply("Sure! Gout is a painful condition and there are many treatments to consider.")
        name = schema_name(body)
        prompt = user_prompt(body)
        if body.get("stream") or not name:
            return self.answer(prompt)
        args = self.arguments(name, prompt)
        if body.get("response_format"):
            schema = body["response_format"].get("json_schema", {}).get("schema", {})
            text = json.dumps(bounded(args, schema))  # llama.cpp's grammar enforces the schema's bounds
            cap = token_cap(body)
            if cap is not None and len(text) // 4 > cap:  # ~4 characters a token: cut like the server
                return Reply("text", content=text[: cap * 4], finish="length")
            return text_reply(text)
        # tool_choice ignored, no tool-call tags: the arguments come back as fenced JSON text
        return text_reply(f"```json\n{json.dumps({'name': name, 'arguments': args})}\n```")

    def answer(self, prompt: str) -> Reply:
        ids = list(dict.fromkeys(EVIDENCE_ID.findall(prompt)))
        if not ids or self.declines:
            return text_reply("Insufficient evidence: nothing was retrieved.")
        if self.forgets_citations:
            first = KEY_SENTENCE.search(prompt)
            restated = first.group(1).strip() if first else ""
            return text_reply(f"{restated} Gout is best cured by drinking seawater every morning.")
        return text_reply(f"NSAIDs and colchicine treat gout flares [{ids[0]}].")

    def arguments(self, name: str, prompt: str) -> dict[str, Any]:
        question = QUESTION.search(prompt)
        words = [
            w for w in re.findall(r"[a-z]+", (question.group(1) if question else "").lower()) if len(w) > 3
        ]
        if name == "HypothesisOutput":
            return {
                "hypothesis": "Probably treated with anti-inflammatory drugs.",
                "search_terms": [*words, "treatment", "therapy", "drug", "management", "guideline"][:6],
                "features": [{"text": "A passage naming drugs.", "usefulness": 8}],
            }
        if name == "LLMVerdict":
            entities = ENTITY_LINE.search(prompt)
            named = [e.strip() for e in (entities.group(1) if entities else "").split(",") if e.strip()]
            score = 7 if self.always_insufficient else 9
            if self.verbose_verdict:
                filler = "a further specific detail the passages might perhaps also contain"
                named = [f"{n} {filler} {i}" for i in range(12) for n in named[:1] or ["gout"]]
                return {"completeness": score, "missing_entities": named, "reasons": [filler * 3] * 5}
            if self.parrots:
                return {
                    "completeness": score,
                    "missing_entities": [*named[:2], "Orphenadrine"],
                    "missing_labels": ["treatment", "symptoms", "causes"],
                    "missing_relations": ["treats", "has_symptom"],
                    "reasons": ["The passage does not mention Orphenadrine."],
                }
            return {"completeness": score, "missing_entities": named, "reasons": ["more detail needed"]}
        if name == "PlanOutput" or name == "tools":
            linked = LINKED_LINE.search(prompt)
            first = (linked.group(1) if linked else "").split(",")[0]
            entity_id = first.rsplit(":", 1)[0].strip() if ":" in first else ""
            call = {"tool": "hypergraph_walk", "entity_ids": [entity_id], "labels": ["treatment"]}
            return {"calls": [call]}
        if name == "_Probe":
            return {"answer": 5}
        return {}


def bounded(value: Any, schema: dict[str, Any]) -> Any:
    """``value`` cut to the schema's ``maxItems``/``maxLength``, as a grammar-constrained server writes it."""
    if isinstance(value, dict):
        props = schema.get("properties", {})
        return {k: bounded(v, props.get(k, {})) for k, v in value.items()}
    if isinstance(value, list):
        items = value[: schema.get("maxItems", len(value))]
        return [bounded(v, schema.get("items", {})) for v in items]
    if isinstance(value, str) and "maxLength" in schema:
        return value[: schema["maxLength"]]
    return value
