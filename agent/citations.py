"""Citation checking: every claim in an answer must cite evidence or chains retrieved in this consult.

An LLM answer is split into sentences (claims). Citation ids that were not retrieved are stripped; a claim
left with no valid citation is removed from the answer and listed as unsupported — never passed through.
Headings, the "Answer: B" line of an MCQ and the "Insufficient evidence" statement need no citation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

CITATION = re.compile(r"\[((?:[EC]):[A-Za-z0-9_:|.\-]+(?:\s*[,;]\s*[EC]:[A-Za-z0-9_:|.\-]+)*)\]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\[(*-])|\n+")
_CITATION_WITH_SPACE = re.compile(r"\s*" + CITATION.pattern)
_ANSWER = r"[*_]*answer[*_]*\s*:\s*[*_]*\s*\(?([A-E])\b"
ANSWER_OPTION = re.compile(r"(?im)^\s*" + _ANSWER)
"""An MCQ answer line: "Answer: B", "**Answer:** B", "Answer: (B)"."""
EXEMPT = re.compile(r"^\s*(#+\s|" + _ANSWER + r"|insufficient evidence|\*\*?[^*]+\*\*?:?\s*$)", re.IGNORECASE)


@dataclass
class CheckedAnswer:
    text: str
    claims: list[dict[str, object]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    invalid_ids: list[str] = field(default_factory=list)

    @property
    def cited_ids(self) -> list[str]:
        return sorted({str(c) for claim in self.claims for c in claim["citations"]})  # type: ignore[attr-defined]


def cited_ids(text: str) -> list[str]:
    return [i.strip() for group in CITATION.findall(text) for i in re.split(r"[,;]", group)]


def strip_citations(text: str) -> str:
    """The text without its citation brackets and the space before them ("used [E:x]." → "used.")."""
    return _CITATION_WITH_SPACE.sub("", text).strip()


def check_citations(answer: str, retrieved: set[str]) -> CheckedAnswer:
    """Validate an answer's citations against ``retrieved`` ids; drop unsupported claims."""
    out = CheckedAnswer(text="")
    kept: list[str] = []
    for raw in (s for s in _SENTENCE.split(answer.strip()) if s.strip()):
        ids = cited_ids(raw)
        valid = [i for i in ids if i in retrieved]
        out.invalid_ids += [i for i in ids if i not in retrieved]
        sentence = CITATION.sub(
            lambda m: (
                "[" + ", ".join(i for i in re.split(r"\s*[,;]\s*", m.group(1)) if i in retrieved) + "]"
                if any(i in retrieved for i in re.split(r"\s*[,;]\s*", m.group(1)))
                else ""
            ),
            raw,
        ).strip()
        if EXEMPT.match(raw) and not ids:
            kept.append(sentence)
            continue
        if not valid:
            out.removed.append(strip_citations(raw))
            continue
        kept.append(sentence)
        out.claims.append({"text": strip_citations(sentence), "citations": valid})
    out.text = "\n".join(kept)
    return out


def citation_index(
    evidence: Sequence[Mapping[str, Any]], chains: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """What the front ends need to show an answer's citations after the turn: the document each passage
    comes from (so only cited sources are listed), each chain's text (so ``[C:…]`` reads as a chain) and
    its entities (so a follow-up's "its side effects" can find the drug the answer was about)."""
    return {
        "evidence_documents": {e["id"]: e.get("document_id", "") for e in evidence},
        "chain_texts": {c["id"]: c.get("text", "") for c in chains},
        "chain_nodes": {c["id"]: list(c.get("node_ids", [])) for c in chains},
    }
